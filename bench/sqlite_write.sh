#!/usr/bin/env bash
# SQLite3 write benchmark: rbag's rosbag2 SQLite3 writer (bench_rosbag2_write sqlite3, i.e.
# rbag_storage::create on a bag directory with the default WriteOptions: journal_mode=MEMORY,
# synchronous=OFF) writing 1,000,000 messages of 100 B, against rosbags' rosbag2 SQLite3 writer
# (bench/py/rosbags2_write.py) in the same run when .peers/venv has it. See bench/README.md
# ("`sqlite_write.sh`").
#
#   bash bench/sqlite_write.sh
#
# Environment:
#   RUNS=5            timed runs of rbag (the median is reported)
#   PEER_RUNS=$RUNS   timed runs of rosbags (one takes about 9 s here); 0 skips the peer
#   COUNT=1000000 SIZE=100   the messages
#   SCRATCH_PARENT=/work     where the bags are written: a real disk (tmpfs is refused)
#   SKIP_BUILD=1      use the examples already in target/release/examples
#   BASELINE=PATH     also time another build of bench_rosbag2_write (e.g. one built from an
#                     older commit), interleaved, as "rbag baseline"
#
# Every run is timed as a whole process (start-up, mapping the payload file, create, write,
# finish, fsync of the bag's files, the directory and its parent), as in bench/rosbag2.sh; the
# tool's own timer (create … fsync) and the process's CPU time (user + system, which other load
# on the machine inflates less than the wall time) are reported too. Before each run the previous bag is removed
# and `sync` runs, outside the timing; rbag and rosbags alternate. Afterwards both bags are read
# back with rbag and must give the payloads' count and order-sensitive checksum.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-5}
PEER_RUNS=${PEER_RUNS:-$RUNS}
COUNT=${COUNT:-1000000}
SIZE=${SIZE:-100}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
VENV_PY=$ROOT/.peers/venv/bin/python
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=$TARGET/release/examples
TARGET_RATE=1000000

BENCH=sqlite_write
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

# --- the peer, if installed ---------------------------------------------------------------
PEER=""
if ((PEER_RUNS > 0)) && [[ -x $VENV_PY ]] && "$VENV_PY" -c 'import rosbags.rosbag2' 2>/dev/null; then
    PEER=$("$VENV_PY" -c 'from importlib.metadata import version; print("rosbags " + version("rosbags"))')
elif ((PEER_RUNS > 0)); then
    say "note: no rosbags in $VENV_PY (bash scripts/setup-peers.sh installs it); rbag only"
fi

# --- build --------------------------------------------------------------------------------
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -q -p rbag-storage --example bench_rosbag2_write --example bench_rosbag2_read) >&2
fi
[[ -z ${BASELINE:-} || -x ${BASELINE:-} ]] || die "BASELINE=$BASELINE is not an executable"
[[ -x /usr/bin/time ]] || die "needs /usr/bin/time (apt-get install time)"
for b in "$EX/bench_rosbag2_write" "$EX/bench_rosbag2_read"; do
    [[ -x $b ]] || die "missing $b (cargo build --release -p rbag-storage --example bench_rosbag2_write --example bench_rosbag2_read)"
done

scratch_dir
P=$TMP/payloads.bin

# --- payloads: rosbag2.sh's generator when numpy is there, else the same layout in plain Python
say "== generating $COUNT messages of $SIZE B"
if [[ -x $VENV_PY ]] && "$VENV_PY" -c 'import numpy' 2>/dev/null; then
    "$VENV_PY" "$ROOT/bench/py/rosbag2_gen.py" "$P" "$SIZE" "$COUNT"
else
    python3 - "$P" "$SIZE" "$COUNT" <<'EOF'
import random, struct, sys
out, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
assert size >= 16
rng = random.Random(0x7ba9)
header = b'\x00\x01\x00\x00' + struct.pack('<III', 0, 0, size - 16)
with open(out, 'wb') as f:
    buf = bytearray()
    for _ in range(count):
        buf += header + rng.randbytes(size - 16)
        if len(buf) >= 1 << 24:
            f.write(buf)
            buf.clear()
    f.write(buf)
EOF
fi
"$EX/bench_rosbag2_read" --payloads "$P" "$SIZE" >"$S/expect"
SUM=$(field "$S/expect" sum)

# timed NAME CMD...: whole-process wall time to $S/NAME.wall, the tool's elapsed= to $S/NAME.in,
# user + system CPU seconds to $S/NAME.cpu.
timed() {
    local name=$1; shift
    local t0 t1
    t0=$(now_ns)
    /usr/bin/time -f '%U %S' -o "$S/$name.time" "$@" >"$S/$name.out"
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' >>"$S/$name.wall"
    field "$S/$name.out" elapsed >>"$S/$name.in"
    awk 'END { printf "%.3f\n", $1 + $2 }' "$S/$name.time" >>"$S/$name.cpu"
}
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }
krate() { awk -v n="$1" -v t="$2" 'BEGIN { r = n / t; if (r >= 1e6) printf "%.3fM", r / 1e6; else printf "%.1fk", r / 1e3 }'; }

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
for i in $(seq 1 "$RUNS"); do
    say "== run $i/$RUNS (load $(cut -d' ' -f1 /proc/loadavg))"
    rm -rf "$TMP/rbag"
    sync
    timed rbag "$EX/bench_rosbag2_write" sqlite3 "$P" "$SIZE" "$TMP/rbag"
    if [[ -n ${BASELINE:-} ]]; then
        rm -rf "$TMP/baseline"
        sync
        timed baseline "$BASELINE" sqlite3 "$P" "$SIZE" "$TMP/baseline"
    fi
    if [[ -n $PEER ]] && ((i <= PEER_RUNS)); then
        rm -rf "$TMP/rosbags"
        sync
        timed rosbags "$VENV_PY" "$ROOT/bench/py/rosbags2_write.py" sqlite3 "$P" "$SIZE" "$TMP/rosbags"
    fi
done

# Both bags must read back as the payloads.
tools=(rbag)
[[ -n ${BASELINE:-} ]] && tools+=(baseline)
[[ -n $PEER ]] && tools+=(rosbags)
for t in "${tools[@]}"; do
    "$EX/bench_rosbag2_read" "$TMP/$t" >"$S/verify.$t"
    [[ $(field "$S/verify.$t" messages) == "$COUNT" && $(field "$S/verify.$t" sum) == "$SUM" ]] \
        || die "the bag written by $t differs: $(cat "$S/verify.$t"), expected $(cat "$S/expect")"
done

# --- report -------------------------------------------------------------------------------
line() {
    local label=$1 t=$2 w i c
    w=$(median "$S/$t.wall")
    i=$(median "$S/$t.in")
    c=$(median "$S/$t.cpu")
    printf '  %-18s %9s msg/s  wall %s  (in-proc %s; CPU %s, %s msg/CPU-s; %s runs, wall: %s)\n' "$label" \
        "$(krate "$COUNT" "$w")" "$(fmt "$w")" "$(fmt "$i")" "$(fmt "$c")" "$(krate "$COUNT" "$c")" "$(count "$S/$t.wall")" \
        "$(sort -g "$S/$t.wall" | tr '\n' ' ' | sed 's/ $//')"
}
echo "SQLite3 write, $COUNT × $SIZE B (one topic, default WriteOptions: journal_mode=MEMORY, synchronous=OFF)"
echo "$(nproc) cores; load average before $LOAD0, after $(cut -d' ' -f1-3 /proc/loadavg); scratch $TMP ($FSTYPE, $DEV)"
echo "medians; msg/s from the whole-process wall time (start-up + write + finish + fsync)"
line "rbag sqlite3" rbag
RB=$(median "$S/rbag.wall")
echo "  rbag: $(rate "$COUNT" "$RB") msg/s — $(verdict "$(rate "$COUNT" "$RB")" "$TARGET_RATE") ≥ $TARGET_RATE msg/s"
if [[ -n ${BASELINE:-} ]]; then
    line "rbag baseline" baseline
    echo "  rbag ÷ baseline: wall $(ratio "$(median "$S/baseline.wall")" "$RB")x, CPU $(ratio "$(median "$S/baseline.cpu")" "$(median "$S/rbag.cpu")")x"
fi
if [[ -n $PEER ]]; then
    line "$PEER" rosbags
    echo "  rbag ÷ rosbags: wall $(ratio "$(median "$S/rosbags.wall")" "$RB")x, CPU $(ratio "$(median "$S/rosbags.cpu")" "$(median "$S/rbag.cpu")")x"
fi
echo "  output sizes: $(for t in "${tools[@]}"; do printf '%s %s B; ' "$t" "$(du -sb "$TMP/$t" | cut -f1)"; done)"
