#!/usr/bin/env bash
# Benchmark for `rbag filter` (issue 17): a field predicate over a generated ~300 MB mixed ROS 1
# bag (bench_gen: /chatter String 1 kHz, /imu/data Imu 400 Hz, /camera/image_raw 1 MiB Image
# 30 Hz), rbag against Debian's `rosbag filter` with the same expression, in the same run.
# See bench/README.md.
#
#   bash bench/filter.sh
#
# Environment:
#   RUNS=3          timed repetitions of each tool (the median is reported)
#   BAG_SECONDS=10  seconds of recording to generate (10 s ≈ 300 MB)
#   EXPR=...        the expression of the first row (default: a field predicate on /imu/data
#                   that keeps 318 of its 4000 messages, a small output)
#   EXPR2=...       the expression of the second row (default: Imu and Image fields, keeping half
#                   of /imu/data and 1/10 of the images, a 31 MB output: the write dominates)
#   SKIP_BUILD=1    use the binaries already in target/release
#   SCRATCH_PARENT  where the bag and outputs go (default: the repository's target/; not tmpfs)
#
# Timings are reported, never asserted: the script fails only if a tool errors or the two outputs
# differ in the messages they hold (topic, time and MD5 of the bytes, read by Debian's rosbag).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=filter.sh
RUNS=${RUNS:-3}
BAG_SECONDS=${BAG_SECONDS:-10}
EXPR=${EXPR:-"topic == '/imu/data' and m.angular_velocity.x > 0.019"}
EXPR2=${EXPR2:-"topic == '/imu/data' and m.linear_acceleration.x > 0 or topic == '/camera/image_raw' and m.header.seq % 10 == 0"}
PY=/usr/bin/python3
ROSBAG=/usr/bin/rosbag
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=$TARGET/release/examples
RBAG=$TARGET/release/rbag
SCRATCH_PARENT=${SCRATCH_PARENT:-$TARGET}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

[[ -x $ROSBAG ]] && "$PY" -c 'import rosbag' 2>/dev/null || die "Debian's rosbag is missing: run 'bash $ROOT/scripts/setup-peers.sh' first"

mixed_bag
export ROS_HOME=$TMP/ros ROS_LOG_DIR=$TMP/ros ROS_MASTER_URI=http://127.0.0.1:1

# timed NAME CMD...: runs CMD, appends its wall time in seconds to $S/NAME. Dirty pages are
# written out first (untimed): rbag syncs its output, and on ext4 that would also wait for the
# previous run's unsynced output (rosbag filter does not sync).
timed() {
    local name=$1 t0 t1; shift
    sync
    t0=$(now_ns)
    "$@" >"$S/$name.out" 2>"$S/$name.err" || { cat "$S/$name.err" >&2; die "$name failed"; }
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' >>"$S/$name"
}

ROWS=(small big)
declare -A EXPRS=([small]=$EXPR [big]=$EXPR2)
for i in $(seq "$RUNS"); do
    say "== run $i/$RUNS"
    for row in "${ROWS[@]}"; do
        rm -f "$TMP/rbag.$row.bag" "$TMP/rosbag.$row.bag"
        timed "rbag.$row" "$RBAG" filter "$BAG" -o "$TMP/rbag.$row.bag" "${EXPRS[$row]}"
        timed "rosbag.$row" "$ROSBAG" filter "$BAG" "$TMP/rosbag.$row.bag" "${EXPRS[$row]}"
    done
done

# The two outputs hold the same messages (after the timings). Messages of different topics
# logged at the same nanosecond may come in either order, so the lists are compared sorted.
LIST='import hashlib, sys, rosbag
for topic, raw, t in rosbag.Bag(sys.argv[1]).read_messages(raw=True):
    print(t.to_nsec(), topic, hashlib.md5(raw[1]).hexdigest())'
for row in "${ROWS[@]}"; do
    "$PY" -c "$LIST" "$TMP/rbag.$row.bag" | sort >"$S/rbag.$row.list"
    "$PY" -c "$LIST" "$TMP/rosbag.$row.bag" | sort >"$S/rosbag.$row.list"
    cmp -s "$S/rbag.$row.list" "$S/rosbag.$row.list" || die "rbag and rosbag filter kept different messages ($row)"
done

total=$(grep -o 'of [0-9]* messages' "$S/rbag.small.err" | head -1 | cut -d' ' -f2)
echo "rbag filter benchmark (issue 17), $(date +%F); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS runs"
echo "bag: $(mbps "$(stat -c %s "$BAG")" 1) MB, $total messages (bench_gen, $BAG_SECONDS s); scratch on $FSTYPE ($DEV)"
echo
printf '  %-70s %9s %9s %11s\n' "expression (messages kept, output size)" "rbag" "rosbag" "rosbag/rbag"
for row in "${ROWS[@]}"; do
    r=$(median "$S/rbag.$row"); p=$(median "$S/rosbag.$row")
    printf '  %-70s %9s %9s %11s  %s\n' "${EXPRS[$row]:0:70}" "$(fmt "$r")" "$(fmt "$p")" "$(ratio "$p" "$r")x" \
        "(target >= 20x: $(verdict "$(ratio "$p" "$r")" 20))"
    printf '  %-70s\n' "  ($(count "$S/rbag.$row.list") messages, $(mbps "$(stat -c %s "$TMP/rbag.$row.bag")" 1) MB; same messages, checked)"
done
