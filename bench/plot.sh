#!/usr/bin/env bash
# Benchmark for `rbag plot` (issue 21): one numeric field with 1 M points from a generated
# ~330 MB ROS 1 bag (bench_gen: /imu/data sensor_msgs/Imu at 10 kHz for 100 s, nothing else),
# drawn as PNG, SVG and HTML, beside `rbag echo --csv` of the same field in the same run (the
# issue's yardstick: plotting should cost about what printing the numbers costs).
#
#   bash bench/plot.sh
#
# Environment:
#   RUNS=3          timed repetitions of each command (the median is reported)
#   FIELD=...       the field (default /imu/data.angular_velocity.x)
#   SKIP_BUILD=1    use the binaries already in target/release
#   SCRATCH_PARENT  where the bag and outputs go (default: the repository's target/; not tmpfs)
#
# Timings are reported, never asserted.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=plot.sh
RUNS=${RUNS:-3}
FIELD=${FIELD:-/imu/data.angular_velocity.x}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=$TARGET/release/examples
RBAG=$TARGET/release/rbag
SCRATCH_PARENT=${SCRATCH_PARENT:-$TARGET}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -q -p rbag-storage --example bench_gen && cargo build --release -q -p rbag) >&2
fi
mkdir -p "$SCRATCH_PARENT"
scratch_dir
BAG=$TMP/imu.bag
say "== generating $BAG (1 M Imu messages)"
"$EX/bench_gen" "$BAG" --seconds 100 --rates 0,10000,0 >&2
cat "$BAG" >/dev/null
size=$(stat -c %s "$BAG")
points=$("$RBAG" echo "$BAG" "$FIELD" --csv | tail -n +2 | wc -l)
say "== $BAG: $((size / 1000000)) MB, $points points of $FIELD; $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

time_cmd() { # name, command...: appends seconds to $S/name
    local name=$1 t0 t1
    shift
    t0=$(now_ns)
    "$@" >/dev/null
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }' >>"$S/$name"
}
for ((r = 1; r <= RUNS; r++)); do
    time_cmd echo_csv "$RBAG" echo "$BAG" "$FIELD" --csv
    time_cmd plot_png "$RBAG" plot "$BAG" "$FIELD" -o "$TMP/out.png" --force
    time_cmd plot_svg "$RBAG" plot "$BAG" "$FIELD" -o "$TMP/out.svg" --force
    time_cmd plot_html "$RBAG" plot "$BAG" "$FIELD" -o "$TMP/out.html" --force
done
echo_s=$(median "$S/echo_csv")
printf '%-28s %10s  %s\n' "command" "median" "vs echo --csv"
printf '%-28s %10s  %s\n' "rbag echo --csv" "$(fmt "$echo_s")" "1.00"
for k in png svg html; do
    t=$(median "$S/plot_$k")
    printf '%-28s %10s  %s (goal <= 1 s: %s)\n' "rbag plot -o out.$k" "$(fmt "$t")" "$(ratio "$t" "$echo_s")" "$(awk -v t="$t" 'BEGIN { print (t <= 1 ? "met" : "MISSED") }')"
done
say "outputs: png $(stat -c %s "$TMP/out.png") B, svg $(stat -c %s "$TMP/out.svg") B, html $(stat -c %s "$TMP/out.html") B; load $(cut -d' ' -f1-3 /proc/loadavg)"
