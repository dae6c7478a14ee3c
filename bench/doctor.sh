#!/usr/bin/env bash
# Benchmark for `rbag doctor` (issue 17): `rbag doctor --decode` (every record, the index, every
# definition and every payload decoded) on a generated ~300 MB mixed ROS 1 bag (bench_gen:
# /chatter String 1 kHz, /imu/data Imu 400 Hz, /camera/image_raw 1 MiB Image 30 Hz), beside
# `rbag convert` of the same bag in the same run: to MCAP (the default CDR: every message decoded
# and re-encoded, a decode pass plus a write) and to a ROS 1 bag (a copy, no decoding). The target
# is that the doctor costs no more than a decode pass. Then the same doctor on a zstd MCAP of the
# bag (every chunk decompressed and its CRC checked), beside Foxglove's
# `mcap doctor` (Rust, built by scripts/setup-peers.sh; skipped when absent). See bench/README.md.
#
#   bash bench/doctor.sh
#
# Environment:
#   RUNS=3          timed repetitions of each command (the median is reported)
#   BAG_SECONDS=10  seconds of recording to generate (10 s ≈ 300 MB)
#   SKIP_BUILD=1    use the binaries already in target/release
#   SCRATCH_PARENT  where the bag and outputs go (default: the repository's target/; not tmpfs)
#
# Timings are reported, never asserted: the script fails only if a command fails or the doctor
# finds anything in the generated bag.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=doctor.sh
RUNS=${RUNS:-3}
BAG_SECONDS=${BAG_SECONDS:-10}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=$TARGET/release/examples
RBAG=$TARGET/release/rbag
MCAP=$ROOT/.peers/mcap/bin/mcap
SCRATCH_PARENT=${SCRATCH_PARENT:-$TARGET}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

mixed_bag
SIZE=$(stat -c %s "$BAG")

# timed NAME CMD...: runs CMD, appends its wall time in seconds to $S/NAME.
timed() {
    local name=$1 t0 t1; shift
    t0=$(now_ns)
    "$@" >"$S/$name.out" 2>"$S/$name.err" || { cat "$S/$name.out" "$S/$name.err" >&2; die "$name failed"; }
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' >>"$S/$name"
}

for i in $(seq "$RUNS"); do
    say "== run $i/$RUNS"
    timed doctor_decode "$RBAG" doctor --decode "$BAG"
    timed doctor "$RBAG" doctor "$BAG"
    rm -f "$TMP/out.mcap" "$TMP/out.bag"
    timed convert_mcap "$RBAG" convert "$BAG" -o "$TMP/out.mcap"
    timed convert_bag "$RBAG" convert "$BAG" -o "$TMP/out.bag"
done
say "== converting to a zstd MCAP (untimed)"
"$RBAG" convert "$BAG" -o "$TMP/zstd.mcap" --compression zstd 2>/dev/null
for i in $(seq "$RUNS"); do
    say "== MCAP run $i/$RUNS"
    timed mcap_doctor_decode "$RBAG" doctor --decode "$TMP/zstd.mcap"
    if [[ -x $MCAP ]]; then timed mcap_peer "$MCAP" doctor "$TMP/zstd.mcap"; fi
done
MSIZE=$(stat -c %s "$TMP/zstd.mcap")
grep -q ': ok (mcap;' "$S/mcap_doctor_decode.out" || { cat "$S/mcap_doctor_decode.out" >&2; die "the doctor found something in the converted MCAP"; }
grep -q ': ok (ros1;' "$S/doctor_decode.out" || { cat "$S/doctor_decode.out" >&2; die "the doctor found something in the generated bag"; }
MSGS=$(sed -n 's/.* \([0-9]*\) message(s) decoded.*/\1/p' "$S/doctor_decode.out")

d=$(median "$S/doctor_decode"); s=$(median "$S/doctor"); m=$(median "$S/convert_mcap"); b=$(median "$S/convert_bag")
echo "rbag doctor benchmark (issue 17), $(date +%F); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS runs"
echo "bag: $(mbps "$SIZE" 1) MB, $MSGS messages (bench_gen, $BAG_SECONDS s, uncompressed); $FSTYPE ($DEV)"
printf '%-44s %9s %9s\n' "command" "time" "MB/s"
printf '%-44s %9s %9s\n' "rbag doctor --decode" "$(fmt "$d")" "$(mbps "$SIZE" "$d")"
printf '%-44s %9s %9s\n' "rbag doctor (structure, index, definitions)" "$(fmt "$s")" "$(mbps "$SIZE" "$s")"
printf '%-44s %9s %9s\n' "rbag convert -o out.mcap (decode + CDR write)" "$(fmt "$m")" "$(mbps "$SIZE" "$m")"
printf '%-44s %9s %9s\n' "rbag convert -o out.bag (copy)" "$(fmt "$b")" "$(mbps "$SIZE" "$b")"
echo "doctor --decode / convert to MCAP: $(ratio "$d" "$m") of its time (target: at most 1, $(awk -v d="$d" -v m="$m" 'BEGIN { print (d <= m ? "met" : "MISSED") }'))"
x=$(median "$S/mcap_doctor_decode")
echo "zstd.mcap: $(mbps "$MSIZE" 1) MB (rbag convert --compression zstd: zstd chunks with CRCs); MB/s of the uncompressed bag"
printf '%-44s %9s %9s\n' "rbag doctor --decode zstd.mcap" "$(fmt "$x")" "$(mbps "$SIZE" "$x")"
if [[ -s $S/mcap_peer ]]; then
    y=$(median "$S/mcap_peer")
    printf '%-44s %9s %9s\n' "mcap doctor zstd.mcap (Foxglove, Rust)" "$(fmt "$y")" "$(mbps "$SIZE" "$y")"
    echo "rbag doctor --decode / mcap doctor: $(ratio "$x" "$y") of its time"
fi
