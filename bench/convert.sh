#!/usr/bin/env bash
# Benchmark for ROS 1 -> rosbag2 conversion: `rbag convert IN.bag -o OUT -s mcap|sqlite3
# --encoding cdr` against rosbags' `rosbags-convert --src IN.bag --dst OUT --dst-storage
# mcap|sqlite3`, on one generated ~280 MB robot recording (camera images, IMU, tf, odometry,
# strings). See bench/README.md ("ROS 1 -> MCAP conversion").
#
#   bash bench/convert.sh
#
# Environment:
#   RUNS=5            timed rounds; every round runs every tool once, interleaved (medians reported)
#   BAG_SECONDS=10    length of the generated recording (10 s = 3,900 messages, 278 MB)
#   STORAGES="mcap sqlite3"   output storages to compare
#   SCRATCH_PARENT=/work  where the scratch directory goes: a real disk (tmpfs is refused)
#   SKIP_BUILD=1      use target/release/rbag and target/release/examples/bench_convert_gen as built
#
# Every run is timed as a whole process (start-up, open, convert, close, and whatever syncing the
# tool does itself). Before each run the previous output is removed and `sync` is run, outside
# the timing. Timings are reported, never asserted: the script fails only if a tool errors or the
# outputs of rbag and rosbags-convert differ (message count, or per-topic payloads and times).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-5}
BAG_SECONDS=${BAG_SECONDS:-10}
STORAGES=${STORAGES:-mcap sqlite3}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
VENV=$ROOT/.peers/venv
PEER=$VENV/bin/rosbags-convert
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
RBAG=$TARGET/release/rbag
GEN=$TARGET/release/examples/bench_convert_gen

BENCH=convert
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

# --- peers and build ------------------------------------------------------------------------
[[ -x $PEER ]] && "$VENV/bin/python" -c 'import rosbags.convert, rosbags.rosbag2' 2>/dev/null \
    || die "peers missing: run 'bash $ROOT/scripts/setup-peers.sh' first"
PEERS="rosbags $("$VENV/bin/python" -c 'from importlib.metadata import version; print(version("rosbags"))')"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -p rbag --bin rbag --example bench_convert_gen) >&2
fi
for b in "$RBAG" "$GEN"; do
    [[ -x $b ]] || die "missing $b (cargo build --release -p rbag --bin rbag --example bench_convert_gen)"
done
TIME_BIN=$(command -v /usr/bin/time || true)

# --- scratch space on a real disk, removed on exit ------------------------------------------
scratch_dir

# --- helpers (the common ones are in lib.sh) -------------------------------------------------
mib() { awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'; }
wmed() { median "$S/$1.wall"; }

# timed NAME OUT|- CMD...: removes OUT and syncs (untimed), runs CMD, appends its wall time to
# $S/NAME.wall, then `sync`s OUT's files and appends wall + that sync to $S/NAME.durable (rbag's
# writers already fsync, rosbags' MCAP writer does not). Peak RSS goes to $S/NAME.rss (KiB): for
# rbag its own VmHWM report (RBAG_REPORT_PEAK_RSS=1), for the others /usr/bin/time's maxrss.
timed() {
    local name=$1 out=$2; shift 2
    local t0 t1 t2 rss
    [[ $out != - ]] && rm -rf "$out"
    sync
    t0=$(now_ns)
    if [[ $1 == "$RBAG" ]]; then
        RBAG_REPORT_PEAK_RSS=1 "$@" >"$S/$name.out" 2>"$S/$name.err" || { cat "$S/$name.err" >&2; die "$name failed"; }
    elif [[ -n $TIME_BIN ]]; then
        "$TIME_BIN" -f %M -o "$S/$name.time" "$@" >"$S/$name.out" 2>"$S/$name.err" || { cat "$S/$name.err" >&2; die "$name failed"; }
    else
        "$@" >"$S/$name.out" 2>"$S/$name.err" || { cat "$S/$name.err" >&2; die "$name failed"; }
    fi
    t1=$(now_ns)
    if [[ -d $out ]]; then sync "$out" "$out"/*; elif [[ $out != - ]]; then sync "$out"; fi
    t2=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' >>"$S/$name.wall"
    awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' >>"$S/$name.durable"
    rss=$(sed -n 's/^rbag: peak RSS \([0-9]*\) kB$/\1/p' "$S/$name.err")
    [[ -z $rss && -s $S/$name.time ]] && rss=$(tail -n 1 "$S/$name.time")
    [[ -n $rss ]] && echo "$rss" >>"$S/$name.rss"
    return 0
}

# One table row: LABEL NAME [NOTE]
row() {
    local label=$1 name=$2 note=${3:-} w d r
    w=$(wmed "$name")
    d=$(median "$S/$name.durable")
    r=$( [[ -s $S/$name.rss ]] && mib "$(median "$S/$name.rss")" || echo -)
    printf '  %-40s %9s %7s MB/s %10s %9s  (%s runs)%s\n' "$label" "$(fmt "$w")" "$(mbps "$BAG_BYTES" "$w")" \
        "$(fmt "$d")" "$r" "$(count "$S/$name.wall")" "$note"
}

# Per-topic message count, order-sensitive adler32 of the payloads and of the log times, of a
# rosbag2 bag as rosbags reads it: the two converters must write the same messages.
digest() {
    "$VENV/bin/python" - "$1" <<'EOF'
import struct, sys, zlib
from rosbags.rosbag2 import Reader
topics = {}
with Reader(sys.argv[1]) as r:
    for c, t, raw in r.messages():
        d = topics.setdefault(c.topic, [c.msgtype, 0, 1, 1])
        d[1] += 1
        d[2] = zlib.adler32(raw, d[2])
        d[3] = zlib.adler32(struct.pack('<Q', t), d[3])
for k in sorted(topics):
    ty, n, a, ts = topics[k]
    print(f'{k} {ty} messages={n} adler32={a:08x} times={ts:08x}')
EOF
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(now_ns)

# --- the input bag --------------------------------------------------------------------------
IN=$TMP/in.bag
say "== generating $BAG_SECONDS s of ROS 1 bag in $IN"
"$GEN" "$IN" "$BAG_SECONDS" >"$S/gen.out"
BAG_BYTES=$(field "$S/gen.out" size)
BAG_MSGS=$(field "$S/gen.out" messages)
# The input is read from the page cache by every tool.
cat "$IN" >/dev/null
cat "$IN" >/dev/null

# --- rounds ---------------------------------------------------------------------------------
tools=()
for st in $STORAGES; do
    case $st in
        mcap) tools+=(rbag_mcap rosbags_mcap rbag_mcap_ros1) ;;
        sqlite3) tools+=(rbag_sqlite3 rosbags_sqlite3) ;;
        *) die "unknown storage $st (mcap, sqlite3)" ;;
    esac
done
tools+=(cp rosbags_startup)
# One untimed warm-up of each converter (page cache for the binaries and Python modules).
"$RBAG" convert "$IN" -o "$TMP/warm" -s mcap --encoding cdr >/dev/null 2>&1
rm -rf "$TMP/warm"
"$PEER" --src "$IN" --dst "$TMP/warm" --dst-storage mcap >/dev/null
rm -rf "$TMP/warm"
for i in $(seq 1 "$RUNS"); do
    say "== round $i/$RUNS (load $(cut -d' ' -f1 /proc/loadavg))"
    for t in "${tools[@]}"; do
        out=$TMP/out_$t
        case $t in
            rbag_mcap) timed "$t" "$out" "$RBAG" convert "$IN" -o "$out" -s mcap --encoding cdr ;;
            rbag_mcap_ros1) timed "$t" "$out" "$RBAG" convert "$IN" -o "$out" -s mcap --encoding ros1 ;;
            rbag_sqlite3) timed "$t" "$out" "$RBAG" convert "$IN" -o "$out" -s sqlite3 ;;
            rosbags_mcap) timed "$t" "$out" "$PEER" --src "$IN" --dst "$out" --dst-storage mcap ;;
            rosbags_sqlite3) timed "$t" "$out" "$PEER" --src "$IN" --dst "$out" --dst-storage sqlite3 ;;
            cp) timed "$t" "$out" cp "$IN" "$out" ;;
            rosbags_startup) timed "$t" - "$PEER" --help ;;
        esac
    done
done

# --- the outputs of the last round must hold the same messages ------------------------------
say "== checking outputs"
for t in "${tools[@]}"; do
    [[ $t == rosbags_startup || $t == cp ]] && continue
    n=$("$RBAG" info --json "$TMP/out_$t" | "$VENV/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["message_count"])')
    [[ $n == "$BAG_MSGS" ]] || die "$t wrote $n messages, the bag has $BAG_MSGS"
    echo "$n" >"$S/$t.count"
done
for st in $STORAGES; do
    digest "$TMP/out_rbag_$st" >"$S/rbag_$st.digest"
    digest "$TMP/out_rosbags_$st" >"$S/rosbags_$st.digest"
    cmp -s "$S/rbag_$st.digest" "$S/rosbags_$st.digest" \
        || die "$st: rbag and rosbags-convert wrote different messages: $(diff "$S/rbag_$st.digest" "$S/rosbags_$st.digest")"
done
say "   rbag info --json: $BAG_MSGS messages in every output; per-topic payloads and times identical (rosbags reads both)"

# --- table ----------------------------------------------------------------------------------
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "ROS 1 -> rosbag2 conversion: rbag convert vs $PEERS rosbags-convert"
    echo "input: $(awk -v b="$BAG_BYTES" 'BEGIN { printf "%.1f MB", b / 1e6 }') uncompressed ROS 1 bag, $BAG_MSGS messages ($BAG_SECONDS s: Image 640x480 rgb8 30 Hz, Imu 200 Hz, TFMessage 100 Hz, Odometry 50 Hz, String 10 Hz), in the page cache"
    echo "$(nproc) cores, load average before: $LOAD0, after: $LOAD1; scratch: $TMP ($FSTYPE, $DEV)"
    echo "wall = whole process; +sync = wall + \`sync\` of the output files afterwards; MB/s = input bytes / wall; medians of $RUNS runs"
    echo
    printf '  %-40s %9s %12s %10s %9s\n' "" "wall" "input" "+sync" "peak RSS"
    for st in $STORAGES; do
        row "rbag convert -s $st$([[ $st == mcap ]] && echo ' --encoding cdr')" "rbag_$st"
        row "rosbags-convert --dst-storage $st" "rosbags_$st"
        [[ $st == mcap ]] && row "[rbag, -s mcap --encoding ros1]" rbag_mcap_ros1 "  bytes copied, not re-encoded"
    done
    row "[cp IN.bag OUT]" cp "  the copy floor: same bytes, no parsing"
    printf '  %-40s %9s %12s %10s %9s  (%s runs)\n' "[rosbags-convert --help]" "$(fmt "$(wmed rosbags_startup)")" "" "" "" "$(count "$S/rosbags_startup.wall")"
    echo
    for st in $STORAGES; do
        r=$(ratio "$(wmed "rosbags_$st")" "$(wmed "rbag_$st")")
        d=$(ratio "$(median "$S/rosbags_$st.durable")" "$(median "$S/rbag_$st.durable")")
        echo "  $st: rosbags/rbag ${r}x wall ($(verdict "$r" 3) >=3x), ${d}x wall+sync"
    done
    if [[ " $STORAGES " == *" mcap "* ]]; then
        echo "  rbag mcap: re-encoding cdr / copying ros1 bytes $(ratio "$(wmed rbag_mcap)" "$(wmed rbag_mcap_ros1)"); wall+sync / cp's wall+sync $(ratio "$(median "$S/rbag_mcap.durable")" "$(median "$S/cp.durable")")"
    fi
    echo "total benchmark time $(awk -v a="$START" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s"
}
