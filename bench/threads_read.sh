#!/usr/bin/env bash
# Benchmark for read-ahead (docs/threads.md): reading every message of a compressed bag with the
# chunks decompressed on the reading thread alone (RBAG_THREADS=1) against two read-ahead
# threads (RBAG_THREADS=2).
#
#   bash bench/threads_read.sh
#
# It generates a ~340 MB uncompressed ROS 1 bag of camera-like images (threads_gen: 640x480
# mono8, a gradient with noise, plus IMU), converts it with `rbag convert` into a zstd MCAP file
# and a bz2 ROS 1 bag, and times bench_read (open + every message + a checksum of every payload
# byte) on each. Reports medians and the ratio (target: ≥ 1.7× with 2 threads); the message
# counts and checksums of the two thread counts must agree, or the script fails.
#
# Environment:
#   RUNS=3          timed repetitions of each measurement (the median is reported)
#   IMAGES=1100     images to generate (1100 ≈ 338 MB)
#   FORMATS="mcap-zstd ros1-bz2"   which outputs to measure (also mcap-lz4, ros1-lz4)
#   SKIP_BUILD=1    use the binaries already in target/release
#   EX, RBAG        the examples' directory and the rbag binary (default: $CARGO_TARGET_DIR or
#                   target, release)
#   SCRATCH_PARENT  where the bags go (default: target/bench-scratch; not tmpfs)
set -euo pipefail

BENCH=threads_read
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-3}
IMAGES=${IMAGES:-1100}
FORMATS=${FORMATS:-"mcap-zstd ros1-bz2"}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=${EX:-$TARGET/release/examples}
RBAG=${RBAG:-$TARGET/release/rbag}
SCRATCH_PARENT=${SCRATCH_PARENT:-$TARGET/bench-scratch}
# shellcheck source=bench/lib.sh
source "$ROOT/bench/lib.sh"

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -q -p rbag -p rbag-storage --example threads_gen --example bench_read) >&2
fi
for b in "$EX/threads_gen" "$EX/bench_read" "$RBAG"; do
    [[ -x $b ]] || die "missing $b (cargo build --release -p rbag -p rbag-storage --examples)"
done
mkdir -p "$SCRATCH_PARENT"
scratch_dir

RAW=$TMP/raw.bag
say "== generating $RAW ($IMAGES images)"
"$EX/threads_gen" "$RAW" --images "$IMAGES" >&2

out_of() {
    case $1 in
        mcap-zstd) echo "$TMP/cam.zstd.mcap zstd" ;;
        mcap-lz4) echo "$TMP/cam.lz4.mcap lz4" ;;
        ros1-bz2) echo "$TMP/cam.bz2.bag bz2" ;;
        ros1-lz4) echo "$TMP/cam.lz4.bag lz4" ;;
        *) die "unknown format $1 (mcap-zstd, mcap-lz4, ros1-bz2, ros1-lz4)" ;;
    esac
}

# One line per format: name, sizes, medians and the ratio.
REPORT=()
for f in $FORMATS; do
    read -r out comp < <(out_of "$f")
    say "== converting to $f"
    start=$(now_ns)
    "$RBAG" convert "$RAW" -o "$out" --compression "$comp" >&2
    say "   $(du -h "$out" | cut -f1) in $(fmt "$(awk -v a="$start" -v b="$(now_ns)" 'BEGIN { print (b - a) / 1e9 }')")"
    cat "$out" >/dev/null
    for threads in 1 2; do
        : >"$S/$f.$threads"
        for run in $(seq "$RUNS"); do
            line=$(RBAG_THREADS=$threads "$EX/bench_read" "$out")
            say "   threads=$threads run $run: $line"
            echo "$line" >"$S/$f.$threads.last"
            field "$S/$f.$threads.last" elapsed >>"$S/$f.$threads"
            field "$S/$f.$threads.last" sum >"$S/$f.$threads.sum"
            field "$S/$f.$threads.last" messages >"$S/$f.$threads.messages"
        done
    done
    cmp -s "$S/$f.1.sum" "$S/$f.2.sum" && cmp -s "$S/$f.1.messages" "$S/$f.2.messages" \
        || die "$f: 1 and 2 threads read different messages ($(cat "$S/$f.1.sum") vs $(cat "$S/$f.2.sum"))"
    one=$(median "$S/$f.1")
    two=$(median "$S/$f.2")
    r=$(ratio "$one" "$two")
    REPORT+=("$(printf '%-10s %8s  %6s messages  1 thread %9s  2 threads %9s  %5s×  (target 1.7×: %s)' \
        "$f" "$(du -h "$out" | cut -f1)" "$(cat "$S/$f.1.messages")" "$(fmt "$one")" "$(fmt "$two")" "$r" \
        "$(verdict "$r" 1.7)")")
done

echo "read every message, medians of $RUNS runs, $(nproc) cores, $FSTYPE ($DEV):"
printf '%s\n' "${REPORT[@]}"
