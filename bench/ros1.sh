#!/usr/bin/env bash
# Benchmark for the "ROS 1 bags" issue: rbag against Debian's ROS 1 `rosbag` (Python), `rosbags`
# and `cat` on one generated ~300 MiB uncompressed bag. See bench/README.md.
#
#   bash bench/ros1.sh
#
# Environment:
#   RUNS=5          timed repetitions of each measurement (the median is reported)
#   PY_RUNS=$RUNS   repetitions of the Python peers (e.g. 3 on a slow machine)
#   BAG_SECONDS=10  seconds of recording to generate (10 s ≈ 300 MiB)
#   RATES=1000,400,30  rates (Hz) of /chatter (String, 50 B), /imu/data (Imu, 324 B) and
#                   /camera/image_raw (Image, 1 MiB); e.g. RATES=20000,4000,0 for small messages only
#   SKIP_BUILD=1    use the binaries already in target/release
#
# Timings are reported, never asserted: the script fails only if a tool errors or the tools
# disagree on what they read (message count / payload bytes) or write (rbag's checksum of the
# written bags).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-5}
PY_RUNS=${PY_RUNS:-$RUNS}
BAG_SECONDS=${BAG_SECONDS:-10}
RATES=${RATES:-1000,400,30}
NET_RUNS=${NET_RUNS:-3}   # runs of the separate "excl. checksum" processes
PY=/usr/bin/python3
VENV_PY=$ROOT/.peers/venv/bin/python
ROSBAG=/usr/bin/rosbag
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=$TARGET/release/examples
RBAG=$TARGET/release/rbag
HERE=$ROOT/bench

say() { printf '%s\n' "$*" >&2; }
die() { say "ros1.sh: $*"; exit 1; }

# --- peers ----------------------------------------------------------------------------------
[[ -x $ROSBAG ]] && "$PY" -c 'import rosbag' 2>/dev/null && [[ -x $VENV_PY ]] \
    && "$VENV_PY" -c 'import rosbags.rosbag1' 2>/dev/null \
    || die "peers missing: run 'bash $ROOT/scripts/setup-peers.sh' first"

# --- build ----------------------------------------------------------------------------------
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -p rbag-storage --examples && cargo build --release -p rbag) >&2
fi
for b in "$EX/bench_gen" "$EX/bench_read" "$EX/bench_floor" "$EX/bench_write" "$RBAG"; do
    [[ -x $b ]] || die "missing $b (build with cargo build --release -p rbag-storage --examples; cargo build --release -p rbag)"
done

# --- scratch space, removed on exit ---------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/rbag-bench.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
BAG=$TMP/bench.bag
S=$TMP/samples
mkdir -p "$S"

# --- helpers --------------------------------------------------------------------------------
now_ns() { date +%s%N; }

# timed NAME CMD...: runs CMD, appends its wall time to $S/NAME.wall and, when it prints
# `elapsed=X`, X to $S/NAME.in; when it also prints `checksum=C`, X-C to $S/NAME.net. Its
# stdout is kept in $S/NAME.out (last run).
timed() {
    local name=$1; shift
    local t0 t1 e c
    t0=$(now_ns)
    "$@" >"$S/$name.out"
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' >>"$S/$name.wall"
    e=$(field "$name" elapsed)
    c=$(field "$name" checksum)
    [[ -n $e ]] && echo "$e" >>"$S/$name.in"
    [[ -n $e && -n $c ]] && awk -v e="$e" -v c="$c" 'BEGIN { printf "%.6f\n", e - c }' >>"$S/$name.net"
    return 0
}

median() { sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
med() { median "$S/$1"; }
fmt() { awk -v v="$1" 'BEGIN { if (v < 0.1) printf "%.1fms", v * 1000; else printf "%.3fs", v }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { r = a / b; if (r >= 100) printf "%.0f", r; else if (r >= 10) printf "%.1f", r; else printf "%.2f", r }'; }
field() { sed -n "s/.*\\b$2=\\([^ ]*\\).*/\\1/p" "$S/$1.out"; }

# --- 1. the bag -----------------------------------------------------------------------------
say "== generating $BAG ($BAG_SECONDS s of recording at $RATES Hz)"
"$EX/bench_gen" "$BAG" --seconds "$BAG_SECONDS" --rates "$RATES" >&2
SIZE=$(stat -c %s "$BAG")
# Sanity (untimed): the Python peers deserialise the first messages of every topic, which
# checks the definitions against the md5sums (rosbag warns on a mismatch).
"$PY" - "$BAG" <<'EOF' >&2
import itertools, sys, rosbag
seen = {}
with rosbag.Bag(sys.argv[1]) as bag:
    for topic, msg, t in itertools.islice(bag.read_messages(), 2000):
        seen.setdefault(topic, msg._type)
print('sanity: rosbag deserialised', ', '.join(f'{k} ({v})' for k, v in sorted(seen.items())))
EOF

# Page cache: read the bag once (twice, to be sure) before any timing.
cat "$BAG" >/dev/null
cat "$BAG" >/dev/null

# --- 2. raw read ----------------------------------------------------------------------------
read_rbag() { "$EX/bench_read" "$BAG"; }
# A second rbag process that also times a payload-free pass, for the "excl. checksum" row; kept
# apart so the wall-clock row measures one read only.
read_rbag_net() { "$EX/bench_read" --net "$BAG"; }
read_rosbag() { "$PY" "$HERE/py/rosbag_read.py" "$BAG"; }
read_rosbags() { "$VENV_PY" "$HERE/py/rosbags_read.py" "$BAG"; }
read_rosbag_net() { "$PY" "$HERE/py/rosbag_read.py" --net "$BAG"; }
read_rosbags_net() { "$VENV_PY" "$HERE/py/rosbags_read.py" --net "$BAG"; }
read_cat() { cat "$BAG" >/dev/null; }

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
say "== read: warm-up (load average $LOAD0)"
read_rbag >/dev/null; read_rosbag >/dev/null; read_rosbags >/dev/null
for i in $(seq 1 "$RUNS"); do
    say "== read: run $i/$RUNS"
    timed read_cat read_cat
    timed read_rbag read_rbag
    timed read_rbag_net read_rbag_net
    timed floor_read "$EX/bench_floor" "$BAG" read
    timed floor_mmap "$EX/bench_floor" "$BAG" mmap
    if ((i <= PY_RUNS)); then
        timed read_rosbag read_rosbag
        timed read_rosbags read_rosbags
        if ((i <= NET_RUNS)); then
            timed read_rosbag_net read_rosbag_net
            timed read_rosbags_net read_rosbags_net
        fi
    fi
done
for t in rosbag rosbags; do
    [[ $(field read_$t messages) == $(field read_rbag messages) && $(field read_$t bytes) == $(field read_rbag bytes) ]] \
        || die "read mismatch: rbag $(cat "$S/read_rbag.out") vs $t $(cat "$S/read_$t.out")"
done
[[ $(field read_rosbag adler32) == $(field read_rosbags adler32) ]] \
    || die "rosbag and rosbags disagree on the payloads' adler32"
MSGS=$(field read_rbag messages)
PAYLOAD=$(field read_rbag bytes)
SUM=$(field read_rbag sum)
say "   all readers: $MSGS messages, $PAYLOAD payload bytes (rbag sum $SUM)"

# --- 3. info --------------------------------------------------------------------------------
say "== info"
"$RBAG" info "$BAG" >&2
"$ROSBAG" info "$BAG" >/dev/null # warm-up
for i in $(seq 1 "$RUNS"); do
    timed info_rbag "$RBAG" info "$BAG"
    if ((i <= PY_RUNS)); then timed info_rosbag "$ROSBAG" info "$BAG"; fi
done

# --- 4. write -------------------------------------------------------------------------------
say "== write: warm-up"
"$EX/bench_write" "$BAG" "$TMP/out_rbag.bag" >/dev/null
"$PY" "$HERE/py/rosbag_write.py" "$BAG" "$TMP/out_rosbag.bag" >/dev/null
for i in $(seq 1 "$RUNS"); do
    say "== write: run $i/$RUNS"
    timed write_rbag "$EX/bench_write" "$BAG" "$TMP/out_rbag.bag"
    if ((i <= PY_RUNS)); then timed write_rosbag "$PY" "$HERE/py/rosbag_write.py" "$BAG" "$TMP/out_rosbag.bag"; fi
done
# Both written bags must hold exactly the generated messages, in order.
for t in rbag rosbag; do
    "$EX/bench_read" "$TMP/out_$t.bag" >"$S/verify_$t.out"
    [[ $(field verify_$t messages) == "$MSGS" && $(field verify_$t sum) == "$SUM" ]] \
        || die "the bag written by $t differs: $(cat "$S/verify_$t.out")"
done
say "   both written bags read back identical ($MSGS messages, sum $SUM); sizes: rbag $(stat -c %s "$TMP/out_rbag.bag") B, rosbag $(stat -c %s "$TMP/out_rosbag.bag") B"
rm -f "$TMP"/out_*.bag

# --- table ----------------------------------------------------------------------------------
r_in=$(med read_rbag.in); r_wall=$(med read_rbag.wall); r_net=$(med read_rbag_net.net)
rb_in=$(med read_rosbag.in); rb_wall=$(med read_rosbag.wall); rb_net=$(med read_rosbag_net.net)
rs_in=$(med read_rosbags.in); rs_wall=$(med read_rosbags.wall); rs_net=$(med read_rosbags_net.net)
cat_wall=$(med read_cat.wall)
f_read=$(med floor_read.wall); f_mmap=$(med floor_mmap.wall)
i_rbag=$(med info_rbag.wall); i_rosbag=$(med info_rosbag.wall)
w_rbag=$(med write_rbag.in); w_rosbag=$(med write_rosbag.in)

mib=$(awk -v s="$SIZE" 'BEGIN { printf "%.1f", s / 1048576 }')
{
    echo
    IFS=, read -r hz_s hz_i hz_m <<<"$RATES"
    echo "ROS 1 bag benchmark: $mib MiB uncompressed bag, $MSGS messages ($BAG_SECONDS s: std_msgs/String 50 B $hz_s Hz, sensor_msgs/Imu 324 B $hz_i Hz, sensor_msgs/Image 1 MiB $hz_m Hz)"
    echo "median of $RUNS runs (Python peers: $PY_RUNS); $(nproc) cores, load average before: $LOAD0"
    echo
    printf '%-38s rbag %-9s rosbag %-9s (%sx)  rosbags %-9s (%sx)\n' "read, in-process (open+iterate)" \
        "$(fmt "$r_in")" "$(fmt "$rb_in")" "$(ratio "$rb_in" "$r_in")" "$(fmt "$rs_in")" "$(ratio "$rs_in" "$r_in")"
    printf '%-38s rbag %-9s rosbag %-9s (%sx)  rosbags %-9s (%sx)\n' "read, in-process, excl. checksum" \
        "$(fmt "$r_net")" "$(fmt "$rb_net")" "$(ratio "$rb_net" "$r_net")" "$(fmt "$rs_net")" "$(ratio "$rs_net" "$r_net")"
    printf '%-38s rbag %-9s rosbag %-9s (%sx)  rosbags %-9s (%sx)  cat %s (rbag/cat %s)\n' "read, whole process (wall)" \
        "$(fmt "$r_wall")" "$(fmt "$rb_wall")" "$(ratio "$rb_wall" "$r_wall")" "$(fmt "$rs_wall")" "$(ratio "$rs_wall" "$r_wall")" \
        "$(fmt "$cat_wall")" "$(ratio "$r_wall" "$cat_wall")"
    printf '%-38s cat %s  pread+checksum %s  mmap+checksum %s  (rbag/pread+checksum %s)\n' "read floors, whole process (wall)" \
        "$(fmt "$cat_wall")" "$(fmt "$f_read")" "$(fmt "$f_mmap")" "$(ratio "$r_wall" "$f_read")"
    printf '%-38s rbag %-9s rosbag %-9s (%sx)\n' "info, whole process (wall)" \
        "$(fmt "$i_rbag")" "$(fmt "$i_rosbag")" "$(ratio "$i_rosbag" "$i_rbag")"
    printf '%-38s rbag %-9s rosbag %-9s (%sx)\n' "write, in-process (open+write+close)" \
        "$(fmt "$w_rbag")" "$(fmt "$w_rosbag")" "$(ratio "$w_rosbag" "$w_rbag")"
    echo
    awk -v rb="$(ratio "$rb_in" "$r_in")" -v rs="$(ratio "$rs_in" "$r_in")" -v c="$(ratio "$r_wall" "$cat_wall")" \
        -v inf="$(ratio "$i_rosbag" "$i_rbag")" 'function m(ok) { return ok ? "met" : "MISSED" } BEGIN {
        printf "issue targets (information only): read vs rosbags >=20x: %s (%sx); read vs rosbag >=5x: %s (%sx); rbag/cat <=1.3: %s (%s); info >=20x: %s (%sx)\n",
            m(rs >= 20), rs, m(rb >= 5), rb, m(c <= 1.3), c, m(inf >= 20), inf }'
} | tee "$S/table.txt"
