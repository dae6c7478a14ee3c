#!/usr/bin/env bash
# Direct I/O writing and chunk compression on both cores (issue "Direct I/O writing, both cores
# in every long job"), in one run:
#
#  1. write COUNT x 1 MiB messages with `--direct-io` to a ROS 1 bag and an MCAP file
#     (`bench_direct`, the library writer) against `dd if=/dev/zero oflag=direct bs=1M` of the
#     same number of bytes (target: >= 0.9x dd's speed), and the page-cache growth of each file,
#     measured on the file with `fincore` (target: <= 1 % of its bytes; buffered writes: stated);
#  2. `rbag convert` of a camera-like bag (noisy, compressible 1 MiB images) to zstd MCAP, lz4
#     ROS 1 and bz2 ROS 1 with `--threads 2` against `--threads 1` (target: >= 1.7x), checking
#     the two outputs are byte-identical.
#
#   bash bench/direct_io.sh
#
# Environment:
#   RUNS=3            rounds; medians are reported
#   COUNT=1000        1 MiB messages in the direct-I/O write
#   CONVERT_MB=1000   size of the camera-like bag converted in part 2
#   PARTS="write convert"  which parts to run
#   SCRATCH_PARENT=/work  where the scratch directory goes: a real disk (tmpfs is refused)
#   SKIP_BUILD=1      use the release binaries as built
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-3}
COUNT=${COUNT:-1000}
CONVERT_MB=${CONVERT_MB:-1000}
PARTS=${PARTS:-write convert}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
RBAG=$TARGET/release/rbag
EX=$TARGET/release/examples
BENCH=direct_io
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

command -v fincore >/dev/null || die "fincore (util-linux) is missing"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -q -p rbag-storage --example bench_direct && cargo build --release -q -p rbag) >&2
fi
for b in "$EX/bench_direct" "$RBAG"; do [[ -x $b ]] || die "missing $b"; done
scratch_dir
say "== scratch: $TMP ($FSTYPE, $DEV)"

secs() { local t0 t1; t0=$(now_ns); "$@" >/dev/null; t1=$(now_ns); awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }'; }
cached_pct() { fincore --bytes --noheadings --output RES,SIZE "$1" | awk '{ printf "%.2f", $2 ? 100 * $1 / $2 : 0 }'; }

printf '| measurement | rbag (median) | peer (median) | ratio | target | verdict |\n|---|---|---|---|---|---|\n'

if [[ " $PARTS " == *" write "* ]]; then
    bytes=$((COUNT << 20))
    for r in $(seq "$RUNS"); do
        rm -f "$TMP/dd.bin"; sync
        secs dd if=/dev/zero of="$TMP/dd.bin" bs=1M count="$COUNT" oflag=direct status=none >>"$S/dd"
        rm -f "$TMP/dd.bin"
        for ext in bag mcap; do
            rm -f "$TMP/d.$ext" "$TMP/b.$ext"; sync
            "$EX/bench_direct" "$TMP/d.$ext" "$COUNT" 1048576 --direct-io >>"$S/direct.$ext"
            cached_pct "$TMP/d.$ext" >>"$S/cache.direct.$ext"; echo >>"$S/cache.direct.$ext"
            rm -f "$TMP/d.$ext"; sync
            "$EX/bench_direct" "$TMP/b.$ext" "$COUNT" 1048576 >>"$S/buffered.$ext"
            cached_pct "$TMP/b.$ext" >>"$S/cache.buffered.$ext"; echo >>"$S/cache.buffered.$ext"
            rm -f "$TMP/b.$ext"
        done
        say "   write round $r done"
    done
    dd_t=$(median "$S/dd")
    for ext in bag mcap; do
        t=$(median "$S/direct.$ext")
        r=$(ratio "$dd_t" "$t")
        printf '| write %d x 1 MiB --direct-io (%s) | %s (%s MB/s) | dd oflag=direct %s (%s MB/s) | %s | >= 0.9 | %s |\n' \
            "$COUNT" "$ext" "$(fmt "$t")" "$(mbps "$bytes" "$t")" "$(fmt "$dd_t")" "$(mbps "$bytes" "$dd_t")" "$r" "$(verdict "$r" 0.9)"
        c=$(median "$S/cache.direct.$ext")
        b=$(median "$S/cache.buffered.$ext")
        printf '| page cache after the write (%s) | %s %% of the file | buffered: %s %% | | <= 1 %% | %s |\n' \
            "$ext" "$c" "$b" "$(awk -v c="$c" 'BEGIN { print (c <= 1 ? "met" : "MISSED") }')"
        printf '| buffered write, same data (%s) | %s | | | stated | |\n' "$ext" "$(fmt "$(median "$S/buffered.$ext")")"
    done
fi

if [[ " $PARTS " == *" convert "* ]]; then
    n=$CONVERT_MB
    say "== generating a $n MB camera-like bag"
    "$EX/bench_direct" "$TMP/camera.bag" "$n" 1048576 >/dev/null
    cat "$TMP/camera.bag" >/dev/null
    for r in $(seq "$RUNS"); do
        for case in "mcap zstd" "bag lz4" "bag bz2"; do
            set -- $case
            # Same file name in two directories: an MCAP file's rosbag2 metadata names its file.
            for t in 1 2; do
                mkdir -p "$TMP/t$t"
                out=$TMP/t$t/out-$2.$1
                rm -f "$out"; sync
                secs "$RBAG" --threads "$t" convert "$TMP/camera.bag" -o "$out" --compression "$2" --encoding ros1 >>"$S/conv.$2.$1.$t"
            done
            cmp -s "$TMP/t1/out-$2.$1" "$TMP/t2/out-$2.$1" || die "--threads 1 and 2 wrote different $2 $1 files"
            rm -f "$TMP/t1/out-$2.$1" "$TMP/t2/out-$2.$1"
        done
        say "   convert round $r done"
    done
    for case in "mcap zstd" "bag lz4" "bag bz2"; do
        set -- $case
        t1=$(median "$S/conv.$2.$1.1")
        t2=$(median "$S/conv.$2.$1.2")
        r=$(ratio "$t1" "$t2")
        printf '| convert %d MB camera bag to %s %s, --threads 2 | %s | --threads 1: %s | %s | >= 1.7 | %s |\n' \
            "$n" "$2" "$1" "$(fmt "$t2")" "$(fmt "$t1")" "$r" "$(verdict "$r" 1.7)"
    done
fi
[[ " $PARTS " == *" convert "* ]] && say "== the outputs of --threads 1 and 2 were byte-identical"
say "== medians of $RUNS rounds on $FSTYPE ($DEV)"
