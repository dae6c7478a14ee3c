# Shared by the bench scripts (sourced): messages, a scratch directory on a real disk, and the
# small number formatters the reports use. Set BENCH (the script's name) and SCRATCH_PARENT first.

say() { printf '%s\n' "$*" >&2; }
die() { say "$BENCH: $*"; exit 1; }

# scratch_dir: makes $TMP on SCRATCH_PARENT (tmpfs is refused: timings must include a disk),
# removed on exit, with $S for samples, and $FSTYPE and $DEV naming the file system for reports.
scratch_dir() {
    FSTYPE=$(stat -f -c %T "$SCRATCH_PARENT")
    [[ $FSTYPE == tmpfs || $FSTYPE == ramfs ]] && die "$SCRATCH_PARENT is $FSTYPE; set SCRATCH_PARENT to a directory on a disk"
    TMP=$(mktemp -d "$SCRATCH_PARENT/rbag-bench-$BENCH.XXXXXX")
    trap 'rm -rf "$TMP"' EXIT
    trap 'exit 130' INT TERM
    DEV=$(df -P "$TMP" | awk 'NR == 2 { print $1 " mounted on " $6 }')
    S=$TMP/samples
    mkdir -p "$S"
}

now_ns() { date +%s%N; }
median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
count() { wc -l <"$1" | tr -d ' '; }
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$1"; }
fmt() { awk -v v="$1" 'BEGIN { if (v < 0.1) printf "%.1fms", v * 1000; else printf "%.3fs", v }'; }
mbps() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.0f", b / t / 1e6 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { r = a / b; if (r >= 100) printf "%.0f", r; else if (r >= 10) printf "%.1f", r; else printf "%.2f", r }'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r >= t ? "met" : "MISSED") }'; }

# mixed_bag: builds bench_gen and rbag in release (unless SKIP_BUILD=1), makes the scratch
# directory (scratch_dir) and generates $BAG in it: BAG_SECONDS s of bench_gen's mixed ROS 1 bag,
# read once so that the page cache holds it. Set ROOT, EX (the examples' directory), RBAG and
# BAG_SECONDS first.
mixed_bag() {
    if [[ ${SKIP_BUILD:-0} != 1 ]]; then
        say "== building (release)"
        (cd "$ROOT" && cargo build --release -q -p rbag-storage --example bench_gen && cargo build --release -q -p rbag) >&2
    fi
    local b
    for b in "$EX/bench_gen" "$RBAG"; do
        [[ -x $b ]] || die "missing $b (cargo build --release -p rbag-storage --example bench_gen; cargo build --release -p rbag)"
    done
    mkdir -p "$SCRATCH_PARENT"
    scratch_dir
    BAG=$TMP/mixed.bag
    say "== generating $BAG ($BAG_SECONDS s)"
    "$EX/bench_gen" "$BAG" --seconds "$BAG_SECONDS" >&2
    cat "$BAG" >/dev/null
}
