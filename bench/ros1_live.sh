#!/usr/bin/env bash
# Benchmark for the live ROS 1 verbs (issue 5): `rbag record --ros1` against the C++
# `rosbag record`, and `rbag play --ros1` against the C++ `rosbag play`, on a private master, in
# one run. See bench/README.md ("ROS 1 live (issue 5)").
#
#   bash bench/ros1_live.sh
#
# Three parts (PARTS="record lateness immediate"):
#   record     one publisher (`rbag play --ros1`, rate-controlled by -r on a generated bag, or
#              --immediate for "max") feeds rbag record and rosbag record subscribed side by side
#              (and each alone), writing to the same file system (REC_PARENT, /dev/shm when it
#              has room); per rate: published, kept by each, CPU seconds per GB of each recorder
#              process.
#   lateness   `rbag play --ros1 --stats` of small messages at LAT_RATES msg/s: lateness at the
#              send call (--stats) and at a subscriber (bench_sub: receive wall time against
#              started_wall_ns + (log - first_log) / rate); for both players, receive delay
#              beyond the least-delayed message.
#   immediate  `--immediate` of IMM_SMALL small and IMM_BIG 1 MiB messages, rbag play vs the C++
#              player, both with --queue = the message count; bench_sub counts what arrives and
#              times first -> last receive.
#
# Environment:
#   RUNS=3                repetitions of every point (medians are reported)
#   IMAGE_RATES=100,200,300,400,600,max   rates (msg/s) of 1 MiB sensor_msgs/Image to record
#   STRING_RATES=1000,2000,5000,10000,20000,max   rates of 1 KiB std_msgs/String to record
#   REC_SECONDS=2         wall seconds of publishing per recording point (capped by the bag)
#   RECORD_MODES="side alone"   side: both recorders subscribed at once (the issue's setup);
#                         alone: each recorder with the publisher only, in separate runs
#   IMAGE_COUNT=1500 STRING_COUNT=100000   messages in the two generated bags (the caps)
#   LAT_RATES=1000,10000 LAT_SECONDS=3     playback-lateness points
#   IMM_SMALL=100000 IMM_BIG=500           --immediate bag sizes (messages)
#   STRING_SIZE=1024 IMAGE_SIZE=1048576    payload sizes (string: serialized; image: pixels)
#   SCRATCH_PARENT=/work  generated bags (a real disk); REC_PARENT=/dev/shm recordings
#   SKIP_BUILD=1          use target/release/rbag and target/release/examples/bench_sub as they are
#
# Timings are reported, never asserted: the script fails only if a tool errors or a run's
# numbers cannot be read. Everything it starts runs on 127.0.0.1 with a private master port and
# ROS_HOME/ROS_LOG_DIR in the scratch directory, and is killed on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-3}
PARTS=${PARTS:-record lateness immediate}
IMAGE_RATES=${IMAGE_RATES:-100,200,300,400,600,max}
STRING_RATES=${STRING_RATES:-1000,2000,5000,10000,20000,max}
REC_SECONDS=${REC_SECONDS:-2}
RECORD_MODES=${RECORD_MODES:-side alone}
IMAGE_COUNT=${IMAGE_COUNT:-1500}
STRING_COUNT=${STRING_COUNT:-100000}
IMAGE_SIZE=${IMAGE_SIZE:-1048576}
STRING_SIZE=${STRING_SIZE:-1024}
IMAGE_BASE=100    # Hz of the generated image bag (rate 1)
STRING_BASE=1000  # Hz of the generated string bag
LAT_RATES=${LAT_RATES:-1000,10000}
LAT_SECONDS=${LAT_SECONDS:-3}
IMM_SMALL=${IMM_SMALL:-100000}
IMM_BIG=${IMM_BIG:-500}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
PY=/usr/bin/python3
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
RBAG=$TARGET/release/rbag
SUB=$TARGET/release/examples/bench_sub
PEER_RECORD=/usr/lib/rosbag/record
PEER_PLAY=/usr/lib/rosbag/play
GEN=$ROOT/bench/ros1_live_gen.py
MISSING=$ROOT/bench/ros1_live_missing.py

BENCH=ros1_live
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
T_START=$(date +%s)
say() { printf '[%4ds] %s\n' "$(($(date +%s) - T_START))" "$*" >&2; }

# --- peers ----------------------------------------------------------------------------------
for b in rosmaster "$PEER_RECORD" "$PEER_PLAY" /usr/bin/time; do
    command -v "$b" >/dev/null || die "peer missing: $b (run 'bash $ROOT/scripts/setup-peers.sh' first)"
done
"$PY" -c 'import rosbag, sensor_msgs.msg' 2>/dev/null || die "Debian's rosbag/sensor_msgs missing for $PY (run scripts/setup-peers.sh)"

# --- build ----------------------------------------------------------------------------------
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -p rbag --bin rbag && cargo build --release -p rbag-ros1 --example bench_sub) >&2
fi
for b in "$RBAG" "$SUB"; do
    [[ -x $b ]] || die "missing $b (cargo build --release -p rbag --bin rbag; cargo build --release -p rbag-ros1 --example bench_sub)"
done

# --- scratch: generated bags on a disk, recordings on REC_PARENT ------------------------------
scratch_dir
img_msg=$((IMAGE_SIZE + 45))   # serialized sensor_msgs/Image (see ros1_live_gen.py)
rec_need=$(((2 * IMAGE_COUNT * img_msg + 2 * STRING_COUNT * STRING_SIZE) * 12 / 10 / 1048576 + 1024)) # MiB
if [[ -z ${REC_PARENT:-} ]]; then
    REC_PARENT=$TMP
    shm_free=$(df -Pm /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')
    mem_free=$(awk '/MemAvailable/ { print int($2 / 1024) }' /proc/meminfo)
    if [[ -n $shm_free ]] && ((shm_free > rec_need && mem_free > 2 * rec_need)); then REC_PARENT=/dev/shm; fi
fi
REC_TMP=$(mktemp -d "$REC_PARENT/rbag-bench-ros1-live-rec.XXXXXX")
rec_free=$(df -Pm "$REC_TMP" | awk 'NR == 2 { print $4 }')
((rec_free > rec_need)) || die "$REC_PARENT has $rec_free MiB free, a recording point needs up to $rec_need MiB (lower IMAGE_COUNT/STRING_COUNT)"
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

# --- a private master on 127.0.0.1 ----------------------------------------------------------
for _ in $(seq 1 50); do
    PORT=$((20000 + RANDOM % 30000))
    (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || break
done
export ROS_MASTER_URI=http://127.0.0.1:$PORT ROS_HOSTNAME=127.0.0.1 ROS_HOME=$TMP/ros ROS_LOG_DIR=$TMP/ros/log
unset ROS_IP ROS_NAMESPACE
mkdir -p "$ROS_LOG_DIR"
rosmaster --core -p "$PORT" >"$TMP/rosmaster.log" 2>&1 &
PIDS+=($!)
for i in $(seq 1 100); do
    "$PY" -c "import xmlrpc.client, sys; xmlrpc.client.ServerProxy(sys.argv[1]).getPid('/bench')" "$ROS_MASTER_URI" 2>/dev/null && break
    ((i == 100)) && die "rosmaster did not answer on $ROS_MASTER_URI"
    sleep 0.1
done
say "== master $ROS_MASTER_URI; bags in $TMP; recordings in $REC_TMP ($REC_FS)"

# --- helpers --------------------------------------------------------------------------------
jfield() { sed -n "s/.*\"$2\":\\(-\\{0,1\\}[0-9.]*\\).*/\\1/p" "$1" | tail -1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
child_of() {
    local c
    for _ in $(seq 1 200); do
        c=$(pgrep -P "$1" | head -1 || true)
        [[ -n $c ]] && { echo "$c"; return; }
        sleep 0.01
    done
    die "no child process of $1"
}
# Waits until the files' sizes stop changing (for 1 s), at most 60 s.
settle() {
    local prev="" cur stable=0
    for _ in $(seq 1 240); do
        cur=$(stat -c %s "$@" 2>/dev/null | tr '\n' ' ' || true)
        if [[ $cur == "$prev" ]]; then
            stable=$((stable + 1))
            ((stable >= 4)) && return 0
        else
            stable=0
        fi
        prev=$cur
        sleep 0.25
    done
}
# The message count of a bag, from `rbag info`.
# The number of /bench messages in a bag, from `rbag info` (rbag record adds /rbag/dropped when
# it drops messages; that topic is not counted).
msgs_of() {
    local info n
    info=$("$RBAG" info "$1") || die "rbag info $1 failed"
    n=$(sed -n 's/^.* \/bench  *\([0-9]*\) msgs\{0,1\} .*/\1/p' <<<"$info" | head -1)
    echo "${n:-0}"
}
# CPU seconds (user + system) a live process has used so far.
TICK=$(getconf CLK_TCK)
cpu_now() { awk -v t="$TICK" '{ sub(/^.*\) /, ""); printf "%.3f", ($12 + $13) / t }' "/proc/$1/stat"; }
# bag seconds to play to get N messages at BASE Hz (-u is inclusive)
dur_for() { awk -v n="$1" -v b="$2" 'BEGIN { printf "%.6f", (n - 0.5) / b }'; }
pct_fmt() { awk -v v="$1" 'BEGIN { a = v < 0 ? -v : v; if (a >= 1e9) printf "%.2fs", v / 1e9; else if (a >= 1e6) printf "%.2fms", v / 1e6; else printf "%.1fus", v / 1e3 }'; }
# CPU seconds of a finished process from /usr/bin/time's `%U %S`, minus $2 (its CPU before the run)
cpu_of() { awk -v b="${2:-0}" 'NF >= 2 && $1 ~ /^[0-9.]+$/ { u = $1; s = $2 } END { printf "%.3f", u + s - b }' "$1"; }

# --- generated bags -------------------------------------------------------------------------
BAGS=$TMP/bags
mkdir -p "$BAGS"
gen() { [[ -f $1 ]] || "$PY" "$GEN" "$@" >&2; }
want_part() { [[ " $PARTS " == *" $1 "* ]]; }

LOAD0=$(load)
START=$(now_ns)
OUT=$TMP/table.txt
: >"$OUT"
emit() { printf '%s\n' "$*" | tee -a "$OUT" >&2; }

# ============================================================================================
# 1. recording
# ============================================================================================
# record_point MODE KIND RATE REP RECORDERS...: one run with the RECORDERS (rbag, rosbag)
# subscribed at once; appends a line per recorder to $S/record.tsv:
#   mode kind rate rep recorder published kept cpu_s play_dropped span_s
# (span: first -> last record time in its bag, i.e. receive times; cpu: user + system of the
# recorder process from subscribed to closed).
record_point() {
    local mode=$1 kind=$2 rate=$3 rep=$4 bag base cap n args d pub who
    shift 4
    if [[ $kind == image ]]; then bag=$BAGS/image.bag base=$IMAGE_BASE cap=$IMAGE_COUNT; else bag=$BAGS/string.bag base=$STRING_BASE cap=$STRING_COUNT; fi
    if [[ $rate == max ]]; then
        n=$cap
        args=(--immediate)
    else
        n=$(awk -v r="$rate" -v s="$REC_SECONDS" -v c="$cap" 'BEGIN { n = int(r * s); print (n > c ? c : n) }')
        args=(-r "$(awk -v r="$rate" -v b="$base" 'BEGIN { print r / b }')" -u "$(dur_for "$n" "$base")")
    fi
    d=$REC_TMP/run
    rm -rf "$d"
    mkdir -p "$d"
    declare -A tpid cpid cpu0
    for who in "$@"; do
        if [[ $who == rbag ]]; then
            /usr/bin/time -f '%U %S' -o "$d/$who.cpu" "$RBAG" record --ros1 -O "$d/$who.bag" -L 1M /bench >"$d/$who.log" 2>&1 &
        else
            /usr/bin/time -f '%U %S' -o "$d/$who.cpu" "$PEER_RECORD" -O "$d/$who.bag" --min-space=1M /bench >"$d/$who.log" 2>&1 &
        fi
        tpid[$who]=$!; PIDS+=("$!")
        cpid[$who]=$(child_of "${tpid[$who]}"); PIDS+=("${cpid[$who]}")
    done
    "$SUB" wait-subscribers /bench "$#" --timeout 30 || die "the recorders did not subscribe (logs: $(cat "$d"/*.log))"
    # CPU used by start-up and subscribing is left out: only the run itself counts.
    sleep 0.2
    for who in "$@"; do cpu0[$who]=$(cpu_now "${cpid[$who]}"); done
    "$RBAG" play --ros1 "$bag" "${args[@]}" -d 1 --wait-for-subscribers --stats -q </dev/null >"$d/play.out" 2>"$d/play.err" || true
    pub=$(jfield "$d/play.err" published)
    [[ -n $pub ]] || die "rbag play failed: $(cat "$d/play.err")"
    local actives=()
    for who in "$@"; do actives+=("$d/$who.bag.active"); done
    settle "${actives[@]}"
    for who in "$@"; do kill -INT "${cpid[$who]}" 2>/dev/null || true; done
    local line="" k cpu span dropped
    dropped=$(jfield "$d/play.err" dropped)
    for who in "$@"; do
        wait "${tpid[$who]}" || true
        forget "${tpid[$who]}"; forget "${cpid[$who]}"
        [[ -f $d/$who.bag ]] || die "$who record left no bag: $(ls "$d"); $(tail -n 5 "$d/$who.log")"
        k=$(msgs_of "$d/$who.bag")
        cpu=$(cpu_of "$d/$who.cpu" "${cpu0[$who]}")
        span=$("$RBAG" info "$d/$who.bag" | sed -n 's/^\(start\|end\):.*(\([0-9.]*\))$/\2/p' | awk 'NR == 1 { a = $1 } NR == 2 { printf "%.6f", $1 - a } END { if (NR < 2) print 0 }')
        echo "$mode $kind $rate $rep $who $pub $k $cpu ${dropped:-0} $span" >>"$S/record.tsv"
        line+=" $who kept $k (cpu ${cpu}s, start-up ${cpu0[$who]}s);"
        if ((k < pub)); then
            grep -i 'drop\|warn\|error\|exceed' "$d/$who.log" | sort | uniq -c | head -3 >&2 || true
            # A loss the publisher's queue does not explain: say which messages are missing.
            if [[ ${dropped:-0} == 0 ]]; then
                "$PY" "$MISSING" "$d/$who.bag" "$kind" "$base" "$pub" | sed "s|^$d/$who.bag|$mode $kind $rate #$rep $who record|" \
                    | tee -a "$S/unexplained.txt" >&2 || true
            fi
        fi
    done
    say "   $mode $kind $rate #$rep: published $pub, play dropped ${dropped:-0};$line load $(load)"
    rm -rf "$d"
}

# Summary of one mode and kind: a row per rate; then the highest loss-free rates and the ratios.
record_table() {
    local mode=$1 kind=$2 rates=$3 msg_bytes=$4 label=$5 what
    if [[ $mode == side ]]; then what="rbag record and rosbag record subscribed side by side"; else what="each recorder alone (separate runs)"; fi
    emit ""
    emit "1$([[ $mode == side ]] && echo a || echo b). recording, $label, $what; median of $RUNS runs per rate; lossy = runs where the recorder kept fewer than published"
    emit "$(printf '  %-14s %10s | %10s %6s %9s | %11s %6s %9s | %s' 'rate msg/s' published 'rbag kept' lossy 'CPU s/GB' 'rosbag kept' lossy 'CPU s/GB' 'CPU rbag/rosbag')"
    local r who ratios=$S/cpu_ratios.$mode.$kind
    declare -A best bestl anyloss
    best[rbag]=0 best[rosbag]=0 bestl[rbag]=none bestl[rosbag]=none anyloss[rbag]=0 anyloss[rosbag]=0
    : >"$ratios"
    IFS=, read -ra rs <<<"$rates"
    for r in "${rs[@]}"; do
        awk -v m="$mode" -v k="$kind" -v r="$r" '$1 == m && $2 == k && $3 == r' "$S/record.tsv" >"$S/rows"
        [[ -s $S/rows ]] || continue
        awk '{ print $6 }' "$S/rows" >"$S/c"
        local pub; pub=$(median "$S/c")
        declare -A kept lossy cpg runs
        for who in rbag rosbag; do
            awk -v w="$who" '$5 == w' "$S/rows" >"$S/rows.w"
            runs[$who]=$(count "$S/rows.w")
            awk '{ print $7 }' "$S/rows.w" >"$S/c"; kept[$who]=$(median "$S/c")
            lossy[$who]=$(awk '$7 < $6' "$S/rows.w" | wc -l)
            awk -v b="$msg_bytes" '$7 > 0 { print $8 / ($7 * b / 1e9) }' "$S/rows.w" >"$S/c"; cpg[$who]=$( [[ -s $S/c ]] && median "$S/c" || echo 0)
            ((lossy[$who] > 0)) && anyloss[$who]=1
        done
        local eff=$r name=$r
        if [[ $r == max ]]; then
            # achieved: what rbag record received / its first -> last receive
            awk '$5 == "rbag" && $10 > 0 { print ($7 - 1) / $10 }' "$S/rows" >"$S/c"
            eff=$( [[ -s $S/c ]] && median "$S/c" | awk '{ printf "%d", $1 }' || echo 0)
            name="max (rx ~$eff)"
        fi
        awk -v c="${cpg[rbag]}" -v d="${cpg[rosbag]}" 'BEGIN { if (c > 0 && d > 0) print c / d }' >>"$ratios"
        emit "$(printf '  %-14s %10s | %10s %6s %9.2f | %11s %6s %9.2f | %s' "$name" "$pub" "${kept[rbag]}" "${lossy[rbag]}/${runs[rbag]}" "${cpg[rbag]}" \
            "${kept[rosbag]}" "${lossy[rosbag]}/${runs[rosbag]}" "${cpg[rosbag]}" "$(ratio "${cpg[rbag]}" "${cpg[rosbag]}")")"
        for who in rbag rosbag; do
            if ((lossy[$who] == 0)) && [[ $eff != 0 ]] && ((runs[$who] > 0)); then best[$who]=$eff bestl[$who]=$name; fi
        done
    done
    local rr="n/a" v="n/a"
    [[ ${best[rosbag]} == 0 ]] && rr="n/a (rosbag lost messages at every rate tried)"
    if [[ ${best[rosbag]} != 0 ]]; then
        rr=$(ratio "${best[rbag]}" "${best[rosbag]}")
        v=$(verdict "$rr" 2)
        # If rbag never lost anything, its highest loss-free rate is only a lower bound.
        if ((anyloss[rbag] == 0)); then
            rr=">=$rr (rbag lost nothing at any rate tried)"
            [[ $v == MISSED ]] && v="not shown: a lower bound"
        fi
    fi
    emit "  highest loss-free rate: rbag ${bestl[rbag]}, rosbag ${bestl[rosbag]} msg/s; ratio $rr (target >= 2: $v)"
    if [[ -s $ratios ]]; then
        local cr; cr=$(median "$ratios")
        emit "  CPU per GB rbag/rosbag, median over rates: $(ratio "$cr" 1) (target <= 0.5: $(awk -v r="$cr" 'BEGIN { print (r <= 0.5 ? "met" : "MISSED") }'))"
    fi
}

if want_part record; then
    say "== generating the recording bags"
    gen "$BAGS/image.bag" image "$IMAGE_COUNT" "$IMAGE_SIZE" "$IMAGE_BASE"
    gen "$BAGS/string.bag" string "$STRING_COUNT" "$STRING_SIZE" "$STRING_BASE"
    cat "$BAGS/image.bag" "$BAGS/string.bag" >/dev/null
    : >"$S/record.tsv"
    L_REC=$(load)
    for rep in $(seq 1 "$RUNS"); do
        for mode in $RECORD_MODES; do
            for kind in image string; do
                if [[ $kind == image ]]; then rates=$IMAGE_RATES; else rates=$STRING_RATES; fi
                IFS=, read -ra rs <<<"$rates"
                for r in "${rs[@]}"; do
                    if [[ $mode == side ]]; then
                        say "== record: side by side, $kind at $r msg/s, run $rep/$RUNS"
                        record_point side "$kind" "$r" "$rep" rbag rosbag
                    else
                        for who in rbag rosbag; do
                            say "== record: $who alone, $kind at $r msg/s, run $rep/$RUNS"
                            record_point alone "$kind" "$r" "$rep" "$who"
                        done
                    fi
                done
            done
        done
    done
fi

# ============================================================================================
# 2. playback lateness
# ============================================================================================
# lat_point PLAYER RATE REP: bench_sub with samples, then the player at RATE; appends
#   player rate rep published sent_p50 sent_p99 sent_max sub_p50 sub_p99 sub_max rel_p50 rel_p99 rel_max received
lat_point() {
    local player=$1 rate=$2 rep=$3 n factor u d=$TMP/lat sp
    n=$((rate * LAT_SECONDS))
    ((n > STRING_COUNT)) && n=$STRING_COUNT
    factor=$(awk -v r="$rate" -v b="$STRING_BASE" 'BEGIN { print r / b }')
    u=$(dur_for "$n" "$STRING_BASE")
    rm -rf "$d"; mkdir -p "$d"
    "$SUB" sub /bench --count "$n" --idle 3 --timeout 120 --tcp-nodelay --samples "$d/samples" >"$d/sub.json" 2>"$d/sub.err" &
    sp=$!; PIDS+=("$sp")
    "$SUB" wait-subscribers /bench 1 --timeout 30
    if [[ $player == rbag ]]; then
        "$RBAG" play --ros1 "$BAGS/string.bag" -r "$factor" -u "$u" -d 1 --wait-for-subscribers --stats -q </dev/null >"$d/play.out" 2>"$d/play.err" || true
        [[ -n $(jfield "$d/play.err" published) ]] || die "rbag play failed: $(cat "$d/play.err")"
    else
        "$PEER_PLAY" "$BAGS/string.bag" -r "$factor" -u "$u" -d 1 --wait-for-subscribers -q </dev/null >"$d/play.out" 2>"$d/play.err" || true
    fi
    wait "$sp" || die "bench_sub failed: $(cat "$d/sub.err")"
    forget "$sp"
    local started="" la=()
    [[ $player == rbag ]] && started=$(jfield "$d/play.err" started_wall_ns)
    if [[ -n $started ]]; then
        "$SUB" lateness "$d/samples" --started "$started" --rate "$factor" >"$d/lat.json"
    else
        "$SUB" lateness "$d/samples" --rate "$factor" >"$d/lat.json"
    fi
    local f
    for f in lateness_p50_ns lateness_p99_ns lateness_max_ns; do la+=("$(jfield "$d/play.err" "$f")"); done
    for f in lateness_p50_ns lateness_p99_ns lateness_max_ns vs_earliest_p50_ns vs_earliest_p99_ns vs_earliest_max_ns; do la+=("$(jfield "$d/lat.json" "$f")"); done
    local pub v line
    pub=$(jfield "$d/play.err" published)
    line="$player $rate $rep ${pub:-$n}"
    for v in "${la[@]}"; do line+=" ${v:--}"; done
    echo "$line $(jfield "$d/sub.json" received)" >>"$S/lat.tsv"
    say "   $player $rate #$rep: $(cat "$d/lat.json") send: $(sed -n 's/.*\("lateness_p50.*\)}/\1/p' "$d/play.err") received $(jfield "$d/sub.json" received)/$n"
}

if want_part lateness; then
    say "== generating the lateness bag"
    gen "$BAGS/string.bag" string "$STRING_COUNT" "$STRING_SIZE" "$STRING_BASE"
    : >"$S/lat.tsv"
    L_LAT=$(load)
    IFS=, read -ra lrs <<<"$LAT_RATES"
    for rep in $(seq 1 "$RUNS"); do
        for r in "${lrs[@]}"; do
            for p in rbag rosbag; do
                say "== lateness: $p play at $r msg/s, run $rep/$RUNS"
                lat_point "$p" "$r" "$rep"
            done
        done
    done
fi

# ============================================================================================
# 3. --immediate
# ============================================================================================
# imm_point CASE PLAYER REP: appends case player rep expected received msgs_per_s span_s
imm_point() {
    local c=$1 player=$2 rep=$3 bag n d=$TMP/imm sp
    if [[ $c == small ]]; then bag=$BAGS/imm_small.bag n=$IMM_SMALL; else bag=$BAGS/imm_big.bag n=$IMM_BIG; fi
    rm -rf "$d"; mkdir -p "$d"
    "$SUB" sub /bench --count "$n" --idle 3 --timeout 300 --stamp none >"$d/sub.json" 2>"$d/sub.err" &
    sp=$!; PIDS+=("$sp")
    "$SUB" wait-subscribers /bench 1 --timeout 30
    local t0 t1
    t0=$(now_ns)
    if [[ $player == rbag ]]; then
        "$RBAG" play --ros1 "$bag" --immediate --queue "$n" -d 1 --wait-for-subscribers -q </dev/null >"$d/play.out" 2>"$d/play.err" || true
    else
        "$PEER_PLAY" "$bag" --immediate --queue "$n" -d 1 --wait-for-subscribers -q </dev/null >"$d/play.out" 2>"$d/play.err" || true
    fi
    t1=$(now_ns)
    wait "$sp" || die "bench_sub failed: $(cat "$d/sub.err")"
    forget "$sp"
    echo "$c $player $rep $n $(jfield "$d/sub.json" received) $(jfield "$d/sub.json" msgs_per_s) $(jfield "$d/sub.json" span_s) $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" >>"$S/imm.tsv"
    say "   $c $player #$rep: $(cat "$d/sub.json")"
}

if want_part immediate; then
    say "== generating the --immediate bags"
    gen "$BAGS/imm_small.bag" string "$IMM_SMALL" "$STRING_SIZE" "$STRING_BASE"
    gen "$BAGS/imm_big.bag" image "$IMM_BIG" "$IMAGE_SIZE" "$IMAGE_BASE"
    cat "$BAGS"/imm_*.bag >/dev/null
    : >"$S/imm.tsv"
    L_IMM=$(load)
    for rep in $(seq 1 "$RUNS"); do
        for c in small big; do
            for p in rbag rosbag; do
                say "== immediate: $c, $p play, run $rep/$RUNS"
                imm_point "$c" "$p" "$rep"
            done
        done
    done
fi

# ============================================================================================
# table
# ============================================================================================
{
    echo
    echo "ROS 1 live benchmark (issue 5), $(date -u +%Y-%m-%d); $(nproc) cores, load average before: $LOAD0; median of $RUNS runs"
    echo "rbag $("$RBAG" --version 2>/dev/null | head -1); peers: /usr/lib/rosbag/record and /usr/lib/rosbag/play (C++, Debian ros_comm), rosmaster on 127.0.0.1"
} | tee -a "$OUT" >&2
if want_part record; then
    emit "recordings on $REC_FS; both recorders at their default buffer (-b 256 MB), uncompressed, 768 KiB chunks;"
    emit "publisher: rbag play --ros1 (default --queue 100 per subscriber), -r to set the rate, --immediate for max, --wait-for-subscribers -d 1;"
    emit "~${REC_SECONDS}s of publishing per point; load before: $L_REC"
    for mode in $RECORD_MODES; do
        record_table "$mode" image "$IMAGE_RATES" "$img_msg" "sensor_msgs/Image $IMAGE_SIZE px mono8 ($img_msg B)"
        record_table "$mode" string "$STRING_RATES" "$STRING_SIZE" "std_msgs/String $STRING_SIZE B"
    done
fi
if want_part lateness; then
    emit ""
    emit "2. playback lateness, std_msgs/String $STRING_SIZE B, ${LAT_SECONDS}s per point, subscriber bench_sub (rbag-ros1 Node, tcp_nodelay); load before: $L_LAT"
    emit "   send = at the send call (rbag play --stats); sub = receive wall time vs started_wall_ns + (log - first_log)/rate;"
    emit "   vs earliest = receive vs the earliest anchor the run allows, min(recv - (log - first_log)/rate): delay beyond the least-delayed"
    emit "   message, >= 0, needs nothing from the player (the only one for the C++ player). p50 / p99 / max, medians of $RUNS runs"
    emit "$(printf '  %-8s %-7s %10s | %-30s | %-30s | %-30s' rate player 'received' 'send p50/p99/max' 'sub p50/p99/max' 'vs earliest p50/p99/max')"
    IFS=, read -ra lrs <<<"$LAT_RATES"
    for r in "${lrs[@]}"; do
        for p in rbag rosbag; do
            awk -v p="$p" -v r="$r" '$1 == p && $2 == r' "$S/lat.tsv" >"$S/rows"
            [[ -s $S/rows ]] || continue
            cols=()
            for i in 5 6 7 8 9 10 11 12 13; do
                awk -v i="$i" '$i != "-" { print $i }' "$S/rows" >"$S/c"
                if [[ -s $S/c ]]; then cols+=("$(pct_fmt "$(median "$S/c")")"); else cols+=("-"); fi
            done
            awk '{ print $14 }' "$S/rows" >"$S/c"; recv=$(median "$S/c")
            awk '{ print $4 }' "$S/rows" >"$S/c"; exp=$(median "$S/c")
            emit "$(printf '  %-8s %-7s %10s | %-30s | %-30s | %-30s' "$r/s" "$p" "$recv/$exp" "${cols[0]} / ${cols[1]} / ${cols[2]}" "${cols[3]} / ${cols[4]} / ${cols[5]}" "${cols[6]} / ${cols[7]} / ${cols[8]}")"
        done
    done
    top=${lrs[${#lrs[@]} - 1]}
    awk -v r="$top" '$1 == "rbag" && $2 == r && $6 != "-" { print $6 }' "$S/lat.tsv" >"$S/c"
    if [[ -s $S/c ]]; then
        p99=$(median "$S/c")
        emit "  rbag send-call p99 at $top msg/s: $(pct_fmt "$p99") (target <= 50us: $(awk -v v="$p99" 'BEGIN { print (v <= 50000 ? "met" : "MISSED") }'))"
    fi
fi
if want_part immediate; then
    emit ""
    emit "3. --immediate, both players with --queue = message count, --wait-for-subscribers -d 1; bench_sub counts and times first -> last receive; load before: $L_IMM"
    emit "$(printf '  %-28s %-14s %12s %12s | %-14s %12s %12s | %s' case 'rbag received' 'msgs/s' 'process s' 'rosbag recv.' 'msgs/s' 'process s' 'rbag/rosbag')"
    for c in small big; do
        for p in rbag rosbag; do
            awk -v c="$c" -v p="$p" '$1 == c && $2 == p' "$S/imm.tsv" >"$S/rows.$p"
            awk '{ print $5 }' "$S/rows.$p" >"$S/c"; eval "recv_$p=\$(median \"\$S/c\")"
            awk '{ print $6 }' "$S/rows.$p" >"$S/c"; eval "rate_$p=\$(median \"\$S/c\")"
            awk '{ print $8 }' "$S/rows.$p" >"$S/c"; eval "wall_$p=\$(median \"\$S/c\")"
        done
        n=$(awk 'NR == 1 { print $4 }' "$S/rows.rbag")
        if [[ $c == small ]]; then label="$n x String $STRING_SIZE B"; else label="$n x Image $img_msg B"; fi
        # shellcheck disable=SC2154
        emit "$(printf '  %-28s %-14s %12.0f %12s | %-14s %12.0f %12s | %s (target >= 5: %s)' "$label" "$recv_rbag/$n" "$rate_rbag" "$wall_rbag" "$recv_rosbag/$n" "$rate_rosbag" "$wall_rosbag" \
            "$(ratio "$rate_rbag" "$rate_rosbag")" "$(verdict "$(ratio "$rate_rbag" "$rate_rosbag")" 5)")"
    done
fi
if [[ -s $S/unexplained.txt ]]; then
    emit ""
    emit "losses with nothing dropped at the publisher (which messages the recorder lacks):"
    while IFS= read -r l; do emit "  $l"; done <"$S/unexplained.txt"
fi
emit ""
emit "total $(awk -v a="$START" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s; load average after: $(load)"
cat "$OUT"
