#!/usr/bin/env bash
# Benchmark for the live ROS 2 verbs (issue 6): `rbag record --ros2` and `rbag play --ros2`
# against a plain Cyclone DDS endpoint (`dds_bench`, rbag-ros2's raw DDS layer with nothing on
# top), on the loopback interface, in one run. No ROS 2 is installed. See bench/README.md
# ("ROS 2 live (issue 6)").
#
#   bash bench/ros2_live.sh
#
# Three parts (PARTS="record lateness maxrate"):
#   record     `dds_bench pub` publishes 1 KiB and 1 MiB samples (reliable) at increasing rates;
#              `rbag record --ros2` and `dds_bench sub` (a Cyclone subscriber) receive the same
#              stream at the same time. Per rate: published, kept by rbag, received by the
#              Cyclone subscriber, MB/s, CPU seconds per GB of each process.
#   lateness   bags recorded by rbag from dds_bench pub at LAT_RATES, played with
#              `rbag play --ros2 --stats` to a dds_bench sub: lateness at the send call (--stats)
#              and at the subscriber against started_wall_ns + (log - first_log); the same for
#              dds_bench pub at the same rate (its own schedule) as the reference.
#   zenoh      (issue 19) the same over Zenoh, as rmw_zenoh: a router (eclipse-zenoh) on a loopback
#              port; `bench/py/zenoh_raw.py pub` publishes ZENOH_SMALL (1 KiB) and ZENOH_BIG
#              (4 MiB) samples with rmw_zenoh's key, token and attachment; `rbag record --ros2
#              --middleware zenoh` and `zenoh_raw.py sub` (a raw Zenoh subscriber) receive the
#              same stream: kept vs received, CPU s/GB of each. Then the small recording is played
#              with `rbag play --middleware zenoh -r PLAY_FACTOR` and the same count is published
#              by `zenoh_raw.py pub --rate max`, each to a raw subscriber: msgs/s received.
#   maxrate    a bag of ~MAXRATE_COUNT 1 KiB messages played as fast as possible
#              (`rbag play --ros2 -r PLAY_FACTOR`, and `rbag burst -n N`) vs `dds_bench pub
#              --rate max`, to the same kind of subscriber: msgs/s received; with keep-all
#              writers on both sides (rbag through --qos-profile-overrides-path), and with
#              keep-last 10 (what rbag play, like ros2 bag play, offers by default).
#
# Environment:
#   RUNS=3                repetitions of every point (medians are reported)
#   SMALL_SIZE=1024 BIG_SIZE=1048576    sample sizes (bytes, CDR included)
#   SMALL_RATES=1000,5000,10000,20000,max  BIG_RATES=50,100,200,max   recording rates (msg/s)
#   REC_SECONDS=2         seconds of publishing per recording point
#   SMALL_MAX_COUNT=200000 BIG_MAX_COUNT=1000   samples published at `max`
#   REC_ARGS=""           extra arguments for rbag record --ros2 (e.g. --max-cache-size 1GiB)
#   PUB_DEPTH=0           history of dds_bench pub when recording: 0 = keep-all (reliable and
#                         flow-controlled: nothing is lost at the writer), N = keep-last N (a
#                         reliable keep-last writer drops unacknowledged samples when a reader
#                         lags, so losses then are Cyclone's, not the recorder's)
#   LAT_RATES=1000,10000 LAT_SECONDS=3          playback-lateness points
#   MAXRATE_COUNT=100000 MAXRATE_GEN_RATE=20000 PLAY_FACTOR=1000   the max-rate bag and its -r
#   SCRATCH_PARENT=/work  generated bags (a real disk); REC_PARENT=/dev/shm recordings
#   DOMAIN_FIRST=201 DOMAIN_LAST=232    ROS_DOMAIN_IDs used, one per run, in turn
#   ZENOH_SMALL_COUNT=20000 ZENOH_BIG_COUNT=100 ZENOH_SMALL_RATE=5000 ZENOH_BIG_RATE=20   Zenoh points
#   SKIP_BUILD=1          use target/release/rbag and target/release/examples/dds_bench as they are
#
# Every DDS process runs with CYCLONEDDS_URI pointing at the loopback-only configuration of
# rbag-testkit and a ROS_DOMAIN_ID of its own run; nothing leaves 127.0.0.1. Timings are
# reported, never asserted: the script fails only if a tool errors or a run's numbers cannot be
# read. Everything it starts is killed on exit, and the scratch directories are removed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-3}
PARTS=${PARTS:-record lateness maxrate zenoh}
SMALL_SIZE=${SMALL_SIZE:-1024}
BIG_SIZE=${BIG_SIZE:-1048576}
SMALL_RATES=${SMALL_RATES:-1000,5000,10000,20000,max}
BIG_RATES=${BIG_RATES:-50,100,200,max}
REC_SECONDS=${REC_SECONDS:-2}
SMALL_MAX_COUNT=${SMALL_MAX_COUNT:-200000}
BIG_MAX_COUNT=${BIG_MAX_COUNT:-1000}
REC_ARGS=${REC_ARGS:-}
PUB_DEPTH=${PUB_DEPTH:-0}
LAT_RATES=${LAT_RATES:-1000,10000}
LAT_SECONDS=${LAT_SECONDS:-3}
MAXRATE_COUNT=${MAXRATE_COUNT:-100000}
MAXRATE_GEN_RATE=${MAXRATE_GEN_RATE:-20000}
PLAY_FACTOR=${PLAY_FACTOR:-1000}
ZENOH_SMALL_COUNT=${ZENOH_SMALL_COUNT:-20000}
ZENOH_BIG_COUNT=${ZENOH_BIG_COUNT:-100}
ZENOH_SMALL_RATE=${ZENOH_SMALL_RATE:-5000}
ZENOH_BIG_RATE=${ZENOH_BIG_RATE:-20}
DOMAIN_FIRST=${DOMAIN_FIRST:-201}
DOMAIN_LAST=${DOMAIN_LAST:-232}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
PY=/usr/bin/python3
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
RBAG=$TARGET/release/rbag
DDS=$TARGET/release/examples/dds_bench

BENCH=ros2_live
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
T_START=$(date +%s)
say() { printf '[%4ds] %s\n' "$(($(date +%s) - T_START))" "$*" >&2; }

for b in /usr/bin/time "$PY"; do
    command -v "$b" >/dev/null || die "missing: $b"
done
((DOMAIN_FIRST >= 0 && DOMAIN_LAST <= 232 && DOMAIN_FIRST <= DOMAIN_LAST)) || die "DOMAIN_FIRST..DOMAIN_LAST must be within 0..232"

# Loopback only: Cyclone reads this file in every process started below.
CYCLONE_XML=$ROOT/crates/rbag-testkit/cyclonedds-loopback.xml
[[ -f $CYCLONE_XML ]] || die "missing $CYCLONE_XML"
export CYCLONEDDS_URI=file://$CYCLONE_XML
unset ROS_LOCALHOST_ONLY ROS_AUTOMATIC_DISCOVERY_RANGE ROS_STATIC_PEERS ROS_VERSION

# --- build ----------------------------------------------------------------------------------
# The commit the binaries are built from (taken now: others may commit while this runs).
REV=$(cd "$ROOT" && git rev-parse --short HEAD 2>/dev/null || echo '?')
[[ ${SKIP_BUILD:-0} == 1 ]] && REV="$REV (SKIP_BUILD: binaries as found)"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -p rbag --bin rbag && cargo build --release -p rbag-ros2 --example dds_bench) >&2
fi
# dds_bench serves the DDS parts only.
needs=("$RBAG")
[[ " $PARTS " =~ \ (record|lateness|maxrate)\  ]] && needs+=("$DDS")
for b in "${needs[@]}"; do
    [[ -x $b ]] || die "missing $b (cargo build --release -p rbag --bin rbag; cargo build --release -p rbag-ros2 --example dds_bench)"
done

# --- scratch: generated bags on a disk, recordings on REC_PARENT ------------------------------
scratch_dir
max_of() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
# the biggest recording point (MiB), with room for metadata and a second copy in the page cache
big_point=$(max_of "$((BIG_MAX_COUNT * BIG_SIZE / 1048576))" "$((200 * REC_SECONDS * BIG_SIZE / 1048576))")
small_point=$((SMALL_MAX_COUNT * SMALL_SIZE / 1048576))
rec_need=$(($(max_of "$big_point" "$small_point") * 12 / 10 + 512))
if [[ -z ${REC_PARENT:-} ]]; then
    REC_PARENT=$TMP
    shm_free=$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
    mem_free=$(awk '/MemAvailable/ { print int($2 / 1024) }' /proc/meminfo)
    if [[ -n $shm_free ]] && ((shm_free > rec_need && mem_free > 2 * rec_need)); then REC_PARENT=/dev/shm; fi
fi
REC_TMP=$(mktemp -d "$REC_PARENT/rbag-bench-ros2-live-rec.XXXXXX")
rec_free=$(df -Pm "$REC_TMP" | awk 'NR == 2 { print $4 }')
((rec_free > rec_need)) || die "$REC_PARENT has $rec_free MiB free, a recording point needs up to $rec_need MiB (lower BIG_MAX_COUNT/SMALL_MAX_COUNT)"
scratch_free=$(df -Pm "$TMP" | awk 'NR == 2 { print $4 }')
scratch_need=$((((MAXRATE_COUNT + 20000 * LAT_SECONDS) * SMALL_SIZE) * 12 / 10 / 1048576 + 256))
((scratch_free > scratch_need)) || die "$SCRATCH_PARENT has $scratch_free MiB free; the generated bags need about $scratch_need MiB"
REC_FS="$(df -P "$REC_TMP" | awk 'NR == 2 { print $1 " on " $6 }') ($(stat -f -c %T "$REC_TMP"))"

# Every process started here, killed on exit (by pid; a pid is forgotten once waited for).
PIDS=()
forget() { local p keep=(); for p in "${PIDS[@]}"; do [[ $p != "$1" ]] && keep+=("$p"); done; PIDS=("${keep[@]}"); }
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    ((${#PIDS[@]})) && sleep 0.5
    for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
    rm -rf "$TMP" "$REC_TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say "== bags in $TMP; recordings in $REC_TMP ($REC_FS); CYCLONEDDS_URI=$CYCLONEDDS_URI"

# --- helpers --------------------------------------------------------------------------------
jfield() { sed -n "s/.*\"$2\":\\(-\\{0,1\\}[0-9.]*\\).*/\\1/p" "$1" | tail -1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
# One DDS domain per run, in turn, so a late packet of one run never reaches the next.
DOMAIN=$DOMAIN_LAST
next_domain() { DOMAIN=$((DOMAIN >= DOMAIN_LAST ? DOMAIN_FIRST : DOMAIN + 1)); }
child_of() {
    local c
    for _ in $(seq 1 200); do
        c=$(pgrep -P "$1" | head -1 || true)
        [[ -n $c ]] && { echo "$c"; return; }
        sleep 0.01
    done
    die "no child process of $1"
}
# Waits until FILE contains TEXT (at most $3 s).
wait_for_text() {
    local i
    for i in $(seq 1 $((${3:-30} * 20))); do
        grep -q "$2" "$1" 2>/dev/null && return 0
        sleep 0.05
    done
    return 1
}
# Total size of the files under a directory.
tree_size() { find "$1" -type f -printf '%s\n' 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'; }
# Waits until the directory stops growing (1.25 s unchanged), at most 60 s.
settle() {
    local prev="" cur stable=0
    for _ in $(seq 1 240); do
        cur=$(tree_size "$1")
        if [[ $cur == "$prev" ]]; then
            stable=$((stable + 1))
            ((stable >= 5)) && return 0
        else
            stable=0
        fi
        prev=$cur
        sleep 0.25
    done
}
# The number of /bench messages in a bag, from `rbag info --json`.
msgs_of() {
    "$RBAG" info --json "$1" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
if isinstance(d, list): d = d[0]
n = 0
for t in d.get("topics", []):
    name = t.get("topic") or t.get("name")
    if name == "/bench": n += t.get("message_count", 0)
print(n)' || die "rbag info --json $1 failed"
}
# CPU seconds (user + system) a live process has used so far.
TICK=$(getconf CLK_TCK)
cpu_now() { awk -v t="$TICK" '{ sub(/^.*\) /, ""); printf "%.3f", ($12 + $13) / t }' "/proc/$1/stat"; }
# CPU seconds of a finished process from /usr/bin/time's `%U %S`, minus $2 (its CPU before the run)
cpu_of() { awk -v b="${2:-0}" 'NF >= 2 && $1 ~ /^[0-9.]+$/ { u = $1; s = $2 } END { printf "%.3f", u + s - b }' "$1"; }
pct_fmt() { awk -v v="$1" 'BEGIN { a = v < 0 ? -v : v; if (a >= 1e9) printf "%.2fs", v / 1e9; else if (a >= 1e6) printf "%.2fms", v / 1e6; else printf "%.1fus", v / 1e3 }'; }
want_part() { [[ " $PARTS " == *" $1 "* ]]; }
# Median of column $2 of file $1 (rows where it is not "-"), or "-".
col_median() { awk -v i="$2" '$i != "-" && $i != "" { print $i }' "$1" >"$S/c"; if [[ -s $S/c ]]; then median "$S/c"; else echo -; fi; }

# rbag record --ros2 and dds_bench sub, started in the background with /usr/bin/time in $D:
# REC_T/REC_C (time's pid, rbag's pid), SUB_T/SUB_C. DOMAIN must be set.
start_recorder() {
    ROS_DOMAIN_ID=$DOMAIN /usr/bin/time -f '%U %S' -o "$D/rec.cpu" "$RBAG" record --ros2 --topics /bench -o "$1" --disable-keyboard-controls $REC_ARGS </dev/null >"$D/rec.log" 2>&1 &
    REC_T=$!; PIDS+=("$REC_T")
    REC_C=$(child_of "$REC_T"); PIDS+=("$REC_C")
    wait_for_text "$D/rec.log" "Recording to" 30 || die "rbag record did not start: $(cat "$D/rec.log")"
}
# start_sub COUNT [ARGS...]
start_sub() {
    local n=$1
    shift
    ROS_DOMAIN_ID=$DOMAIN /usr/bin/time -f '%U %S' -o "$D/sub.cpu" "$DDS" sub --domain "$DOMAIN" --count "$n" "$@" </dev/null >"$D/sub.json" 2>"$D/sub.err" &
    SUB_T=$!; PIDS+=("$SUB_T")
    SUB_C=$(child_of "$SUB_T"); PIDS+=("$SUB_C")
    wait_for_text "$D/sub.err" "^ready" 30 || die "dds_bench sub did not start: $(cat "$D/sub.err")"
}
stop_recorder() {
    settle "$1"
    kill -INT "$REC_C" 2>/dev/null || true
    local rc=0
    wait "$REC_T" || rc=$?
    forget "$REC_T"; forget "$REC_C"
    # 3: recorded, but messages were dropped (the cache was full)
    ((rc == 0 || rc == 3)) || die "rbag record failed ($rc): $(tail -n 5 "$D/rec.log")"
    [[ -f $1/metadata.yaml ]] || die "rbag record left no metadata.yaml: $(ls "$1"); $(tail -n 5 "$D/rec.log")"
}
wait_sub() {
    wait "$SUB_T" || die "dds_bench sub failed: $(cat "$D/sub.err")"
    forget "$SUB_T"; forget "$SUB_C"
    [[ -n $(jfield "$D/sub.json" received) ]] || die "dds_bench sub printed no result: $(cat "$D/sub.err")"
}
# Records COUNT samples of SIZE bytes at RATE from dds_bench pub into the bag directory OUT
# (rbag record only); prints the number kept.
gen_bag() {
    local out=$1 size=$2 rate=$3 count=$4
    next_domain
    D=$TMP/gen; rm -rf "$D" "$out"; mkdir -p "$D"
    start_recorder "$out"
    ROS_DOMAIN_ID=$DOMAIN "$DDS" pub --domain "$DOMAIN" --size "$size" --rate "$rate" --count "$count" --depth "$PUB_DEPTH" --wait-readers 1 >"$D/pub.json" 2>"$D/pub.err" || die "dds_bench pub failed: $(cat "$D/pub.err")"
    stop_recorder "$out"
    msgs_of "$out"
}

LOAD0=$(load)
START=$(now_ns)
OUT=$TMP/table.txt
: >"$OUT"
emit() { printf '%s\n' "$*" | tee -a "$OUT" >&2; }
BAGS=$TMP/bags
mkdir -p "$BAGS"

# ============================================================================================
# 1. recording
# ============================================================================================
# record_point KIND RATE REP: appends to $S/record.tsv
#   kind rate rep published pub_mps rbag_kept rbag_cpu sub_received sub_cpu rbag_dropped write_timeouts sub_missing sub_dups
record_point() {
    local kind=$1 rate=$2 rep=$3 size n bag
    if [[ $kind == small ]]; then size=$SMALL_SIZE; else size=$BIG_SIZE; fi
    if [[ $rate == max ]]; then
        if [[ $kind == small ]]; then n=$SMALL_MAX_COUNT; else n=$BIG_MAX_COUNT; fi
    else
        n=$(awk -v r="$rate" -v s="$REC_SECONDS" 'BEGIN { printf "%d", r * s }')
    fi
    next_domain
    D=$REC_TMP/run
    rm -rf "$D"; mkdir -p "$D"
    bag=$D/bag
    start_recorder "$bag"
    start_sub "$n" --idle 5 --timeout 600
    # CPU used by start-up is left out: only the run itself counts.
    sleep 0.3
    local rc0 sc0
    rc0=$(cpu_now "$REC_C"); sc0=$(cpu_now "$SUB_C")
    ROS_DOMAIN_ID=$DOMAIN "$DDS" pub --domain "$DOMAIN" --size "$size" --rate "$rate" --count "$n" --depth "$PUB_DEPTH" --wait-readers 2 >"$D/pub.json" 2>"$D/pub.err" || die "dds_bench pub failed: $(cat "$D/pub.err")"
    stop_recorder "$bag"
    wait_sub
    local pub mps kept rcpu recv scpu dropped wto miss dups
    pub=$(jfield "$D/pub.json" sent); mps=$(jfield "$D/pub.json" msgs_per_s); wto=$(jfield "$D/pub.json" write_timeouts)
    kept=$(msgs_of "$bag")
    rcpu=$(cpu_of "$D/rec.cpu" "$rc0")
    recv=$(jfield "$D/sub.json" received); miss=$(jfield "$D/sub.json" missing); dups=$(jfield "$D/sub.json" duplicates)
    scpu=$(cpu_of "$D/sub.cpu" "$sc0")
    dropped=$(sed -n 's/^warning: .*: \([0-9]*\) message(s) dropped.*/\1/p' "$D/rec.log" | awk '{ s += $1 } END { print s + 0 }')
    echo "$kind $rate $rep $pub $mps $kept $rcpu $recv $scpu $dropped ${wto:-0} ${miss:-0} ${dups:-0}" >>"$S/record.tsv"
    say "   $kind $rate #$rep (domain $DOMAIN): published $pub at ${mps}/s (write timeouts ${wto:-0}, acked $(sed -n 's/.*"acked":\([a-z]*\).*/\1/p' "$D/pub.json")); rbag kept $kept (cpu ${rcpu}s, cache drops $dropped); cyclone sub received $recv (cpu ${scpu}s, missing ${miss:-0}); load $(load)"
    if ((kept < pub)); then grep -i 'drop\|warn\|error' "$D/rec.log" | sort | uniq -c | head -3 >&2 || true; fi
    rm -rf "$D"
}

record_table() {
    local kind=$1 rates=$2 size label
    if [[ $kind == small ]]; then size=$SMALL_SIZE; else size=$BIG_SIZE; fi
    label="$size B samples (sensor_msgs/msg/CompressedImage)"
    emit ""
    emit "1. recording, $label; rbag record --ros2 and a Cyclone subscriber (dds_bench sub) on the same stream; median of $RUNS runs per rate"
    emit "   lossy = runs where fewer than published arrived; CPU s/GB = user+sys of the process (start-up excluded) per GB it received/kept"
    emit "$(printf '  %-15s %9s %8s | %9s %6s %9s | %12s %6s %9s | %s' 'rate msg/s' published 'MB/s' 'rbag kept' lossy 'CPU s/GB' 'cyclone recv' lossy 'CPU s/GB' 'CPU rbag/cyclone')"
    local r rs rows=$S/rows
    : >"$S/cpu_ratios.$kind"
    IFS=, read -ra rs <<<"$rates"
    for r in "${rs[@]}"; do
        awk -v k="$kind" -v r="$r" '$1 == k && $2 == r' "$S/record.tsv" >"$rows"
        [[ -s $rows ]] || continue
        local pub mps kept recv rl sl rcg scg name=$r
        pub=$(col_median "$rows" 4)
        mps=$(col_median "$rows" 5)
        kept=$(col_median "$rows" 6)
        recv=$(col_median "$rows" 8)
        rl=$(awk '$6 < $4' "$rows" | wc -l); sl=$(awk '$8 < $4' "$rows" | wc -l)
        awk -v b="$size" '$6 > 0 { print $7 / ($6 * b / 1e9) }' "$rows" >"$S/c"; rcg=$( [[ -s $S/c ]] && median "$S/c" || echo 0)
        awk -v b="$size" '$8 > 0 { print $9 / ($8 * b / 1e9) }' "$rows" >"$S/c"; scg=$( [[ -s $S/c ]] && median "$S/c" || echo 0)
        [[ $r == max ]] && name="max (~$(awk -v m="$mps" 'BEGIN { printf "%d", m }'))"
        awk -v c="$rcg" -v d="$scg" 'BEGIN { if (c > 0 && d > 0) print c / d }' >>"$S/cpu_ratios.$kind"
        emit "$(printf '  %-15s %9s %8.1f | %9s %6s %9.2f | %12s %6s %9.2f | %s' "$name" "$pub" "$(awk -v m="$mps" -v b="$size" 'BEGIN { print m * b / 1e6 }')" \
            "$kept" "$rl/$(count "$rows")" "$rcg" "$recv" "$sl/$(count "$rows")" "$scg" "$(ratio "$rcg" "$scg")")"
    done
    local eq
    eq=$(awk -v k="$kind" '$1 == k { n++; if ($6 == $8) e++ } END { printf "%d of %d", e, n }' "$S/record.tsv")
    emit "  rbag kept == Cyclone received in $eq runs; rbag cache drops: $(awk -v k="$kind" '$1 == k { s += $10 } END { print s + 0 }' "$S/record.tsv"); publisher write timeouts (a reader held it back): $(awk -v k="$kind" '$1 == k { s += $11 } END { print s + 0 }' "$S/record.tsv")"
    if [[ -s $S/cpu_ratios.$kind ]]; then
        emit "  CPU per GB rbag record / Cyclone subscriber, median over rates: $(ratio "$(median "$S/cpu_ratios.$kind")" 1)"
    fi
}

if want_part record; then
    : >"$S/record.tsv"
    L_REC=$(load)
    for rep in $(seq 1 "$RUNS"); do
        for kind in small big; do
            if [[ $kind == small ]]; then rates=$SMALL_RATES; else rates=$BIG_RATES; fi
            IFS=, read -ra rs <<<"$rates"
            for r in "${rs[@]}"; do
                say "== record: $kind at $r msg/s, run $rep/$RUNS"
                record_point "$kind" "$r" "$rep"
            done
        done
    done
fi

# ============================================================================================
# 2. playback lateness
# ============================================================================================
# lat_point PLAYER RATE REP: appends
#   player rate rep expected received send_p50 send_p99 send_max sub_p50 sub_p99 sub_max rel_p50 rel_p99 rel_max transit_p50 transit_p99 sub_min
lat_point() {
    local player=$1 rate=$2 rep=$3 bag=$BAGS/lat_$2 n
    next_domain
    D=$TMP/lat; rm -rf "$D"; mkdir -p "$D"
    if [[ $player == rbag ]]; then n=$(cat "$bag.count"); else n=$((rate * LAT_SECONDS)); fi
    start_sub "$n" --idle 3 --timeout 120 --samples "$D/samples"
    local sp=() lat=() f
    if [[ $player == rbag ]]; then
        ROS_DOMAIN_ID=$DOMAIN "$RBAG" play --ros2 "$bag" -d 1 --stats --disable-keyboard-controls -q </dev/null >"$D/play.out" 2>"$D/play.err" || die "rbag play failed: $(cat "$D/play.err")"
        [[ -n $(jfield "$D/play.err" started_wall_ns) ]] || die "rbag play --stats printed nothing: $(cat "$D/play.err")"
        wait_sub
        "$DDS" lateness --samples "$D/samples" --bag "$bag" --started "$(jfield "$D/play.err" started_wall_ns)" >"$D/lat.json" || die "dds_bench lateness failed"
        for f in lateness_p50_ns lateness_p99_ns lateness_max_ns; do sp+=("$(jfield "$D/play.err" "$f")"); done
    else
        ROS_DOMAIN_ID=$DOMAIN "$DDS" pub --domain "$DOMAIN" --size "$SMALL_SIZE" --rate "$rate" --count "$n" --depth 10 --wait-readers 1 --spin-us 200 >"$D/pub.json" 2>"$D/pub.err" || die "dds_bench pub failed: $(cat "$D/pub.err")"
        wait_sub
        "$DDS" lateness --samples "$D/samples" --started "$(jfield "$D/pub.json" start_wall_ns)" --schedule-rate "$rate" >"$D/lat.json" || die "dds_bench lateness failed"
        for f in late_p50_ns late_p99_ns late_max_ns; do sp+=("$(jfield "$D/pub.json" "$f")"); done
    fi
    for f in lateness_p50_ns lateness_p99_ns lateness_max_ns vs_earliest_p50_ns vs_earliest_p99_ns vs_earliest_max_ns; do lat+=("$(jfield "$D/lat.json" "$f")"); done
    local line="$player $rate $rep $n $(jfield "$D/sub.json" received)" v
    for v in "${sp[@]}" "${lat[@]}" "$(jfield "$D/sub.json" transit_p50_ns)" "$(jfield "$D/sub.json" transit_p99_ns)" "$(jfield "$D/lat.json" lateness_min_ns)"; do line+=" ${v:--}"; done
    echo "$line" >>"$S/lat.tsv"
    say "   $player $rate #$rep: received $(jfield "$D/sub.json" received)/$n; send p50/p99/max ${sp[*]}; sub $(cat "$D/lat.json")"
}

if want_part lateness; then
    : >"$S/lat.tsv"
    IFS=, read -ra lrs <<<"$LAT_RATES"
    for r in "${lrs[@]}"; do
        say "== generating the lateness bag at $r msg/s (rbag record --ros2 of dds_bench pub, ${LAT_SECONDS}s of $SMALL_SIZE B)"
        gen_bag "$BAGS/lat_$r" "$SMALL_SIZE" "$r" $((r * LAT_SECONDS)) >"$BAGS/lat_$r.count"
        say "   kept $(cat "$BAGS/lat_$r.count") of $((r * LAT_SECONDS))"
        cat "$BAGS/lat_$r"/* >/dev/null
    done
    L_LAT=$(load)
    for rep in $(seq 1 "$RUNS"); do
        for r in "${lrs[@]}"; do
            for p in rbag cyclone; do
                say "== lateness: $p at $r msg/s, run $rep/$RUNS"
                lat_point "$p" "$r" "$rep"
            done
        done
    done
fi

# ============================================================================================
# 3. highest sustained rate
# ============================================================================================
# max_point WHO REP: appends  who rep expected received msgs_per_s process_s
#   WHO: play_all, burst_all (rbag, keep-all override), play_10 (rbag, the QoS it offers by
#   default: keep last 10), cyc_all, cyc_10 (dds_bench pub --depth 0 / 10)
max_point() {
    local who=$1 rep=$2 bag=$BAGS/max n t0 t1
    n=$(cat "$bag.count")
    next_domain
    D=$TMP/max; rm -rf "$D"; mkdir -p "$D"
    start_sub "$n" --idle 3 --timeout 300
    t0=$(now_ns)
    local play=(ROS_DOMAIN_ID="$DOMAIN" "$RBAG")
    case $who in
        play_all) env "${play[@]}" play --ros2 "$bag" -r "$PLAY_FACTOR" -d 1 --qos-profile-overrides-path "$BAGS/keep_all.yaml" --disable-keyboard-controls -q </dev/null >"$D/p.out" 2>"$D/p.err" || die "rbag play failed: $(cat "$D/p.err")" ;;
        burst_all) env "${play[@]}" burst "$bag" -n "$n" -d 1 --qos-profile-overrides-path "$BAGS/keep_all.yaml" --disable-keyboard-controls -q </dev/null >"$D/p.out" 2>"$D/p.err" || die "rbag burst failed: $(cat "$D/p.err")" ;;
        play_10) env "${play[@]}" play --ros2 "$bag" -r "$PLAY_FACTOR" -d 1 --disable-keyboard-controls -q </dev/null >"$D/p.out" 2>"$D/p.err" || die "rbag play failed: $(cat "$D/p.err")" ;;
        cyc_all | cyc_10) ROS_DOMAIN_ID=$DOMAIN "$DDS" pub --domain "$DOMAIN" --size "$SMALL_SIZE" --rate max --count "$n" --depth "$([[ $who == cyc_all ]] && echo 0 || echo 10)" --wait-readers 1 >"$D/p.out" 2>"$D/p.err" || die "dds_bench pub failed: $(cat "$D/p.err")" ;;
    esac
    t1=$(now_ns)
    wait_sub
    echo "$who $rep $n $(jfield "$D/sub.json" received) $(jfield "$D/sub.json" msgs_per_s) $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" >>"$S/max.tsv"
    say "   $who #$rep: $(cat "$D/sub.json")"
}

if want_part maxrate; then
    say "== generating the max-rate bag (rbag record --ros2 of dds_bench pub, $MAXRATE_COUNT x $SMALL_SIZE B at $MAXRATE_GEN_RATE msg/s)"
    gen_bag "$BAGS/max" "$SMALL_SIZE" "$MAXRATE_GEN_RATE" "$MAXRATE_COUNT" >"$BAGS/max.count"
    say "   kept $(cat "$BAGS/max.count") of $MAXRATE_COUNT"
    cat "$BAGS/max"/* >/dev/null
    printf '/bench:\n  history: keep_all\n  reliability: reliable\n  durability: volatile\n' >"$BAGS/keep_all.yaml"
    : >"$S/max.tsv"
    L_MAX=$(load)
    for rep in $(seq 1 "$RUNS"); do
        for w in play_all burst_all cyc_all play_10 cyc_10; do
            say "== max rate: $w, run $rep/$RUNS"
            max_point "$w" "$rep"
        done
    done
fi

# ============================================================================================
# 4. Zenoh (issue 19)
# ============================================================================================
ZPY=$ROOT/.peers/venv/bin/python
ZRAW=$ROOT/bench/py/zenoh_raw.py
# zenoh_point KIND REP: appends  kind rep published kept rbag_cpu received sub_cpu pub_mps
zenoh_point() {
    local kind=$1 rep=$2 size n rate port bag
    if [[ $kind == small ]]; then size=1024; n=$ZENOH_SMALL_COUNT; rate=$ZENOH_SMALL_RATE; else size=4194304; n=$ZENOH_BIG_COUNT; rate=$ZENOH_BIG_RATE; fi
    next_domain
    D=$REC_TMP/zrun; rm -rf "$D"; mkdir -p "$D"
    bag=$D/bag
    port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    local ep="tcp/127.0.0.1:$port"
    "$ZPY" "$ROOT/crates/rbag-testkit/peers/zenoh_peer.py" router --listen "$ep" >"$D/router.log" 2>&1 &
    local router=$!; PIDS+=("$router")
    wait_for_text "$D/router.log" READY 30 || die "zenoh router did not start"
    ROS_DOMAIN_ID=$DOMAIN ZENOH_CONFIG_OVERRIDE="connect/endpoints=[\"$ep\"]" /usr/bin/time -f '%U %S' -o "$D/rec.cpu" "$RBAG" record --ros2 --middleware zenoh --topics /bench -o "$bag" --disable-keyboard-controls </dev/null >"$D/rec.log" 2>&1 &
    REC_T=$!; PIDS+=("$REC_T"); REC_C=$(child_of "$REC_T"); PIDS+=("$REC_C")
    wait_for_text "$D/rec.log" "Recording to" 30 || die "rbag record --middleware zenoh did not start: $(cat "$D/rec.log")"
    /usr/bin/time -f '%U %S' -o "$D/sub.cpu" "$ZPY" "$ZRAW" sub --connect "$ep" --domain "$DOMAIN" --count "$n" --idle 5 >"$D/sub.json" 2>"$D/sub.err" &
    SUB_T=$!; PIDS+=("$SUB_T"); SUB_C=$(child_of "$SUB_T"); PIDS+=("$SUB_C")
    wait_for_text "$D/sub.err" "^ready" 30 || die "zenoh_raw sub did not start: $(cat "$D/sub.err")"
    sleep 0.3
    local rc0 sc0
    rc0=$(cpu_now "$REC_C"); sc0=$(cpu_now "$SUB_C")
    "$ZPY" "$ZRAW" pub --connect "$ep" --domain "$DOMAIN" --size "$size" --count "$n" --rate "$rate" --wait-subs 2 >"$D/pub.json" 2>"$D/pub.err" || die "zenoh_raw pub failed: $(cat "$D/pub.err")"
    stop_recorder "$bag"
    wait "$SUB_T" || die "zenoh_raw sub failed: $(cat "$D/sub.err")"
    forget "$SUB_T"; forget "$SUB_C"
    local kept
    kept=$(msgs_of "$bag")
    echo "$kind $rep $n $kept $(cpu_of "$D/rec.cpu" "$rc0") $(jfield "$D/sub.json" received) $(cpu_of "$D/sub.cpu" "$sc0") $(jfield "$D/pub.json" msgs_per_s)" >>"$S/zenoh.tsv"
    say "   zenoh $kind #$rep: published $n; rbag kept $kept; raw sub received $(jfield "$D/sub.json" received); load $(load)"
    if [[ $kind == small && $rep == 1 ]]; then rm -rf "$BAGS/zenoh_play"; cp -r "$bag" "$BAGS/zenoh_play"; echo "$kept" >"$BAGS/zenoh_play.count"; fi
    # playback: rbag play into Zenoh vs the raw publisher, each to a raw subscriber
    if [[ $kind == small && -d $BAGS/zenoh_play ]]; then
        local m who
        m=$(cat "$BAGS/zenoh_play.count")
        for who in rbag raw; do
            "$ZPY" "$ZRAW" sub --connect "$ep" --domain "$DOMAIN" --count "$m" --idle 5 >"$D/psub.json" 2>"$D/psub.err" &
            local ps=$!; PIDS+=("$ps")
            wait_for_text "$D/psub.err" "^ready" 30 || die "zenoh_raw sub did not start"
            if [[ $who == rbag ]]; then
                # keep-all, as the raw publisher's BLOCK congestion control (rmw_zenoh drops on
                # congestion for keep-last, which is what the bag recorded)
                printf '/bench:\n  history: keep_all\n  reliability: reliable\n  durability: volatile\n' >"$BAGS/zkeep_all.yaml"
                ROS_DOMAIN_ID=$DOMAIN ZENOH_CONFIG_OVERRIDE="connect/endpoints=[\"$ep\"]" "$RBAG" play --ros2 --middleware zenoh "$BAGS/zenoh_play" -r "$PLAY_FACTOR" -d 1 --qos-profile-overrides-path "$BAGS/zkeep_all.yaml" --disable-keyboard-controls -q </dev/null >"$D/p.out" 2>"$D/p.err" || die "rbag play --middleware zenoh failed: $(cat "$D/p.err")"
            else
                "$ZPY" "$ZRAW" pub --connect "$ep" --domain "$DOMAIN" --size 1024 --count "$m" --rate max --wait-subs 1 >"$D/p.out" 2>"$D/p.err" || die "zenoh_raw pub failed: $(cat "$D/p.err")"
            fi
            wait "$ps" || true; forget "$ps"
            echo "$who $rep $m $(jfield "$D/psub.json" received) $(jfield "$D/psub.json" msgs_per_s)" >>"$S/zplay.tsv"
            say "   zenoh play $who #$rep: $(cat "$D/psub.json")"
        done
    fi
    kill "$router" 2>/dev/null || true; wait "$router" 2>/dev/null || true; forget "$router"
    rm -rf "$D"
}

if want_part zenoh; then
    [[ -x $ZPY ]] && "$ZPY" -c 'import zenoh' 2>/dev/null || die "eclipse-zenoh is missing from .peers/venv (scripts/setup-peers.sh)"
    : >"$S/zenoh.tsv"; : >"$S/zplay.tsv"
    L_ZEN=$(load)
    for rep in $(seq 1 "$RUNS"); do
        for kind in small big; do
            say "== zenoh: $kind, run $rep/$RUNS"
            zenoh_point "$kind" "$rep"
        done
    done
fi

# ============================================================================================
# table
# ============================================================================================
{
    echo
    echo "ROS 2 live benchmark (issue 6), $(date -u +%Y-%m-%d), rbag at $REV; $(nproc) cores, load average before: $LOAD0; median of $RUNS runs"
    echo "Cyclone DDS on loopback only (CYCLONEDDS_URI=crates/rbag-testkit/cyclonedds-loopback.xml), ROS_DOMAIN_ID $DOMAIN_FIRST..$DOMAIN_LAST, one per run"
} | tee -a "$OUT" >&2
if want_part record; then
    emit "recordings on $REC_FS; rbag record --ros2 --topics /bench${REC_ARGS:+ $REC_ARGS} (defaults: mcap, --max-cache-size 100MiB);"
    emit "publisher: dds_bench pub, reliable, $([[ $PUB_DEPTH == 0 ]] && echo keep-all || echo "keep-last $PUB_DEPTH"), waits until both subscribers match; ~${REC_SECONDS}s per point; MB/s = rate the publisher reached x size;"
    emit "context: rosbag2 record caps at about 120 MB/s (rosbag2#1787); load before: $L_REC"
    record_table small "$SMALL_RATES"
    record_table big "$BIG_RATES"
fi
if want_part lateness; then
    emit ""
    emit "2. playback lateness, $SMALL_SIZE B, ${LAT_SECONDS}s per point, subscriber dds_bench sub (Cyclone, reliable keep-all); load before: $L_LAT"
    emit "   rbag: rbag play --ros2 --stats of a bag rbag recorded from dds_bench pub at that rate; send = at the send call (--stats);"
    emit "   sub = receive wall time vs started_wall_ns + (log - first_log); vs earliest = against the earliest anchor the run allows (>= 0);"
    emit "   transit = receive - the DDS source timestamp (the wall clock at the send call). cyclone: dds_bench pub at that rate (keep-last 10 as"
    emit "   rbag play offers, sleeps until 200 us before a due time, then spins), against its own schedule (start + i/rate), send = at its write"
    emit "   call. p50 / p99 / max, medians of $RUNS runs"
    emit "$(printf '  %-8s %-8s %12s | %-28s | %-28s | %-28s | %s' rate sender received 'send p50/p99/max' 'sub p50/p99/max' 'vs earliest p50/p99/max' 'transit p50/p99')"
    IFS=, read -ra lrs <<<"$LAT_RATES"
    for r in "${lrs[@]}"; do
        for p in rbag cyclone; do
            awk -v p="$p" -v r="$r" '$1 == p && $2 == r' "$S/lat.tsv" >"$S/rows"
            [[ -s $S/rows ]] || continue
            cols=()
            for i in 6 7 8 9 10 11 12 13 14 15 16; do
                v=$(col_median "$S/rows" "$i")
                if [[ $v == - ]]; then cols+=("-"); else cols+=("$(pct_fmt "$v")"); fi
            done
            emit "$(printf '  %-8s %-8s %12s | %-28s | %-28s | %-28s | %s' "$r/s" "$p" "$(col_median "$S/rows" 5)/$(col_median "$S/rows" 4)" "${cols[0]} / ${cols[1]} / ${cols[2]}" \
                "${cols[3]} / ${cols[4]} / ${cols[5]}" "${cols[6]} / ${cols[7]} / ${cols[8]}" "${cols[9]} / ${cols[10]}")"
        done
    done
    mins=""
    for r in "${lrs[@]}"; do
        for p in rbag cyclone; do
            awk -v p="$p" -v r="$r" '$1 == p && $2 == r' "$S/lat.tsv" >"$S/rows"
            [[ -s $S/rows ]] && mins+=" $p $r/s $(pct_fmt "$(col_median "$S/rows" 17)");"
        done
    done
    emit "  least-late message (min of sub), median:$mins rbag's min is the offset between started_wall_ns and the schedule's real anchor, plus transit"
    top=${lrs[${#lrs[@]} - 1]}
    awk -v r="$top" '$1 == "rbag" && $2 == r' "$S/lat.tsv" >"$S/rows"
    p99=$(col_median "$S/rows" 7)
    [[ $p99 != - ]] && emit "  rbag send-call p99 at $top msg/s: $(pct_fmt "$p99") (target <= 50us: $(awk -v v="$p99" 'BEGIN { print (v <= 50000 ? "met" : "MISSED") }'))"
fi
if want_part maxrate; then
    emit ""
    emit "3. highest sustained rate, $(cat "$BAGS/max.count") x $SMALL_SIZE B to one dds_bench sub; msgs/s = (received - 1) / first -> last receive at the subscriber;"
    emit "   process s = the sender's whole run (start-up and -d 1 included for rbag); context: rosbag2's player falls behind at about 455k msg/s; load before: $L_MAX"
    emit "$(printf '  %-48s %14s %10s %10s | %s' sender received 'msgs/s' 'process s' 'vs dds_bench pub, same QoS')"
    for w in play_all burst_all cyc_all play_10 cyc_10; do
        awk -v w="$w" '$1 == w' "$S/max.tsv" >"$S/rows"
        [[ -s $S/rows ]] || continue
        case $w in
            play_all) label="rbag play --ros2 -r $PLAY_FACTOR, keep-all" ;;
            burst_all) label="rbag burst -n N, keep-all" ;;
            cyc_all) label="dds_bench pub --rate max, keep-all" ;;
            play_10) label="rbag play --ros2 -r $PLAY_FACTOR, keep-last 10" ;;
            cyc_10) label="dds_bench pub --rate max, keep-last 10" ;;
        esac
        awk -v w="cyc_${w##*_}" '$1 == w' "$S/max.tsv" >"$S/rows.ref"
        m=$(col_median "$S/rows" 5)
        ref=$( [[ -s $S/rows.ref ]] && col_median "$S/rows.ref" 5 || echo 0)
        emit "$(printf '  %-48s %14s %10.0f %10s | %s' "$label" "$(col_median "$S/rows" 4)/$(col_median "$S/rows" 3)" "$m" "$(col_median "$S/rows" 6)" "$(awk -v r="$ref" 'BEGIN { exit !(r > 0) }' && ratio "$m" "$ref" || echo -)")"
    done
    emit "  (keep-last 10: a reliable keep-last writer drops samples a lagging reader has not acknowledged, so received < published there is DDS, not a bug)"
fi
if want_part zenoh; then
    emit ""
    emit "4. Zenoh (as rmw_zenoh), median of $RUNS runs; load before: $L_ZEN"
    emit "   publisher: bench/py/zenoh_raw.py pub (eclipse-zenoh, rmw_zenoh's key, token and attachment), waits for both subscribers;"
    emit "   rbag record --ros2 --middleware zenoh and zenoh_raw.py sub (a raw Zenoh subscriber) receive the same stream"
    emit "$(printf '  %-22s %9s | %9s %9s | %9s %9s | %s' sample published 'rbag kept' 'CPU s/GB' 'raw recv' 'CPU s/GB' 'CPU rbag/raw')"
    for kind in small big; do
        awk -v k="$kind" '$1 == k' "$S/zenoh.tsv" >"$S/rows"
        [[ -s $S/rows ]] || continue
        if [[ $kind == small ]]; then size=1024; label="1 KiB at $ZENOH_SMALL_RATE/s"; else size=4194304; label="4 MiB at $ZENOH_BIG_RATE/s"; fi
        awk -v b="$size" '$4 > 0 { print $5 / ($4 * b / 1e9) }' "$S/rows" >"$S/c"; rcg=$( [[ -s $S/c ]] && median "$S/c" || echo 0)
        awk -v b="$size" '$6 > 0 { print $7 / ($6 * b / 1e9) }' "$S/rows" >"$S/c"; scg=$( [[ -s $S/c ]] && median "$S/c" || echo 0)
        emit "$(printf '  %-22s %9s | %9s %9.2f | %9s %9.2f | %s' "$label" "$(col_median "$S/rows" 3)" "$(col_median "$S/rows" 4)" "$rcg" "$(col_median "$S/rows" 6)" "$scg" "$(ratio "$rcg" "$scg")")"
    done
    emit "  rbag kept == raw received in $(awk '$4 == $6 { e++ } END { printf "%d of %d", e, NR }' "$S/zenoh.tsv") runs"
    if [[ -s $S/zplay.tsv ]]; then
        awk '$1 == "rbag"' "$S/zplay.tsv" >"$S/r1"; awk '$1 == "raw"' "$S/zplay.tsv" >"$S/r2"
        emit "   playback to a raw subscriber, $(head -1 "$S/r1" | cut -d' ' -f3) x 1 KiB: rbag play --middleware zenoh -r $PLAY_FACTOR (keep-all override) $(col_median "$S/r1" 5) msg/s (received $(col_median "$S/r1" 4)),"
        emit "   zenoh_raw.py pub --rate max $(col_median "$S/r2" 5) msg/s (received $(col_median "$S/r2" 4)); rbag / raw = $(ratio "$(col_median "$S/r1" 5)" "$(col_median "$S/r2" 5)")"
    fi
fi

emit ""
emit "total $(awk -v a="$START" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s; load average after: $(load)"
cat "$OUT"
