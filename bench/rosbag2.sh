#!/usr/bin/env bash
# Benchmark for rosbag2 storage: rbag's SQLite3 and MCAP writers and readers against rosbags
# (rosbags.rosbag2 Writer/Reader, sqlite3 and mcap plugins), the mcap Python library's reader
# and `dd oflag=direct`, on 1,000,000 messages of 100 B and 1,000 messages of 1 MiB. See
# bench/README.md ("rosbag2 storage").
#
#   bash bench/rosbag2.sh
#
# Environment:
#   RUNS=5          timed repetitions of every measurement (the median is reported)
#   SLOW_RUNS=3     repetitions of the Python peers (rosbags, mcap) in the many-small-messages case,
#                   where one run takes 5-30 s; the large case uses RUNS for every tool
#   QUICK=1         quick mode: 100,000 small and 100 large messages, RUNS=3, SLOW_RUNS=2
#                   (explicit RUNS/SLOW_RUNS/SMALL_COUNT/LARGE_COUNT still win)
#   SMALL_COUNT=1000000 SMALL_SIZE=100 LARGE_COUNT=1000 LARGE_SIZE=1048576   the two cases
#   CASES="small large"   which cases to run
#   SCRATCH_PARENT=/work  where the scratch directory goes: a real disk (tmpfs is refused)
#   SKIP_BUILD=1    use the examples already in target/release/examples
#
# Every write is timed as a whole process (start-up, reading the payload file, writing, closing
# and fsync of the output files and directories), as is every read (start-up, open, iterate,
# checksum every payload). Timings are reported, never asserted: the script fails only if a tool
# errors or a written bag does not read back as the payloads, or the readers disagree.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ ${QUICK:-0} == 1 ]]; then
    RUNS=${RUNS:-3}; SLOW_RUNS=${SLOW_RUNS:-2}
    SMALL_COUNT=${SMALL_COUNT:-100000}; LARGE_COUNT=${LARGE_COUNT:-100}
fi
RUNS=${RUNS:-5}
SLOW_RUNS=${SLOW_RUNS:-3}
SMALL_COUNT=${SMALL_COUNT:-1000000}
SMALL_SIZE=${SMALL_SIZE:-100}
LARGE_COUNT=${LARGE_COUNT:-1000}
LARGE_SIZE=${LARGE_SIZE:-1048576}
CASES=${CASES:-small large}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
VENV_PY=$ROOT/.peers/venv/bin/python
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=$TARGET/release/examples
PYD=$ROOT/bench/py

BENCH=rosbag2
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

# --- peers ----------------------------------------------------------------------------------
[[ -x $VENV_PY ]] && "$VENV_PY" -c 'import rosbags.rosbag2, mcap.reader, numpy' 2>/dev/null \
    || die "peers missing: run 'bash $ROOT/scripts/setup-peers.sh' first"
PEERS=$("$VENV_PY" -c 'from importlib.metadata import version as v; print("rosbags", v("rosbags") + ", mcap", v("mcap"))')

# --- build ----------------------------------------------------------------------------------
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -p rbag-storage --examples) >&2
fi
for b in "$EX/bench_rosbag2_write" "$EX/bench_rosbag2_read"; do
    [[ -x $b ]] || die "missing $b (build with cargo build --release -p rbag-storage --examples)"
done

# --- scratch space on a real disk, removed on exit ------------------------------------------
scratch_dir

# --- helpers (the common ones are in lib.sh) -------------------------------------------------

# timed NAME CMD...: runs CMD, appends its whole-process wall time to $S/NAME.wall and the
# `elapsed=X` it prints to $S/NAME.in; its stdout is kept in $S/NAME.out (last run).
timed() {
    local name=$1; shift
    local t0 t1 e
    t0=$(now_ns)
    "$@" >"$S/$name.out"
    t1=$(now_ns)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", (b - a) / 1e9 }' >>"$S/$name.wall"
    e=$(field "$S/$name.out" elapsed)
    [[ -n $e ]] && echo "$e" >>"$S/$name.in"
    e=$(field "$S/$name.out" sync)
    [[ -n $e ]] && echo "$e" >>"$S/$name.sync"
    return 0
}
rate() { awk -v n="$1" -v t="$2" 'BEGIN { r = n / t; if (r >= 1e6) printf "%.2fM", r / 1e6; else if (r >= 1e3) printf "%.1fk", r / 1e3; else printf "%.0f", r }'; }
human() { awk -v n="$1" 'BEGIN { s = sprintf("%d", n); o = ""; while (length(s) > 3) { o = "," substr(s, length(s) - 2) o; s = substr(s, 1, length(s) - 3) } print s o }'; }
size_name() { awk -v s="$1" 'BEGIN { if (s >= 1048576 && s % 1048576 == 0) printf "%d MiB", s / 1048576; else if (s >= 1024 && s % 1024 == 0) printf "%d KiB", s / 1024; else printf "%d B", s }'; }

# One table row: LABEL SAMPLES(name) MESSAGES BYTES [RUNS-NOTE]
row() {
    local label=$1 name=$2 n=$3 bytes=$4 w i
    w=$(median "$S/$name.wall")
    i=$( [[ -s $S/$name.in ]] && median "$S/$name.in" || echo "")
    printf '  %-24s %9s %10s %7s MB/s   %9s  (%s runs)\n' "$label" "$(fmt "$w")" "$(rate "$n" "$w")" "$(mbps "$bytes" "$w")" \
        "$([[ -n $i ]] && fmt "$i" || echo -)" "$(count "$S/$name.wall")"
}
wmed() { median "$S/$1.wall"; }

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(now_ns)
RESULTS=$TMP/results.txt
: >"$RESULTS"

# --- one case -------------------------------------------------------------------------------
run_case() {
    local c=$1 n=$2 size=$3 py_runs=$4
    local D=$TMP/$c P=$TMP/$c/payloads.bin
    ((py_runs > RUNS)) && py_runs=$RUNS
    mkdir -p "$D"
    local bytes=$((n * size))
    say "== $c: generating $(human "$n") messages of $(size_name "$size") ($((bytes / 1048576)) MiB) in $P"
    "$VENV_PY" "$PYD/rosbag2_gen.py" "$P" "$size" "$n"
    "$EX/bench_rosbag2_read" --payloads "$P" "$size" >"$S/$c.expect"
    local sum; sum=$(field "$S/$c.expect" sum)
    "$VENV_PY" "$PYD/adler_floor.py" "$P" "$size" >"$S/$c.adler"
    local adler; adler=$(field "$S/$c.adler" adler32)

    # write: every tool once per round, interleaved; outputs removed and everything synced
    # before each timed run, outside the timing.
    local tools=(rbag_sqlite3 rbag_mcap rosbags_sqlite3 rosbags_mcap)
    [[ $c == large ]] && tools+=(dd dd_buffered)
    local i t
    for i in $(seq 1 "$RUNS"); do
        say "== $c: write run $i/$RUNS ($(cut -d' ' -f1 /proc/loadavg))"
        for t in "${tools[@]}"; do
            if [[ $t == rosbags_* ]] && ((i > py_runs)); then continue; fi
            rm -rf "${D:?}/w_$t"
            sync
            case $t in
                rbag_*) timed "$c.w.$t" "$EX/bench_rosbag2_write" "${t#rbag_}" "$P" "$size" "$D/w_$t" ;;
                rosbags_*) timed "$c.w.$t" "$VENV_PY" "$PYD/rosbags2_write.py" "${t#rosbags_}" "$P" "$size" "$D/w_$t" ;;
                dd) timed "$c.w.dd" dd if="$P" of="$D/w_dd" bs=1M oflag=direct conv=fsync status=none ;;
                dd_buffered) timed "$c.w.dd_buffered" dd if="$P" of="$D/w_dd_buffered" bs=1M conv=fsync status=none ;;
            esac
        done
    done
    # Every written bag must read back (with rbag) as exactly the payloads, in order.
    for t in "${tools[@]}"; do
        if [[ $t == dd* ]]; then
            cmp -s "$P" "$D/w_$t" || die "$c: $t's copy differs from the payload file"
            continue
        fi
        "$EX/bench_rosbag2_read" "$D/w_$t" >"$S/$c.verify.$t"
        [[ $(field "$S/$c.verify.$t" messages) == "$n" && $(field "$S/$c.verify.$t" sum) == "$sum" ]] \
            || die "$c: the bag written by $t differs: $(cat "$S/$c.verify.$t"), expected $(cat "$S/$c.expect")"
    done
    say "   all written bags read back as the payloads ($n messages, sum $sum)"
    local sizes=""
    for t in rbag_sqlite3 rbag_mcap rosbags_sqlite3 rosbags_mcap; do
        sizes+=" $t $(du -sb "$D/w_$t" | cut -f1) B;"
    done

    # read: the bags rbag wrote; the page cache is warmed with cat and one rbag read each.
    local mcapfile=$D/w_rbag_mcap/w_rbag_mcap_0.mcap
    [[ -f $mcapfile ]] || die "no $mcapfile"
    cat "$D"/w_rbag_sqlite3/* "$D"/w_rbag_mcap/* >/dev/null
    cat "$D"/w_rbag_sqlite3/* "$D"/w_rbag_mcap/* >/dev/null
    "$EX/bench_rosbag2_read" "$D/w_rbag_sqlite3" >/dev/null
    "$EX/bench_rosbag2_read" "$D/w_rbag_mcap" >/dev/null
    for i in $(seq 1 "$RUNS"); do
        say "== $c: read run $i/$RUNS ($(cut -d' ' -f1 /proc/loadavg))"
        timed "$c.r.rbag_sqlite3" "$EX/bench_rosbag2_read" "$D/w_rbag_sqlite3"
        timed "$c.r.rbag_mcap" "$EX/bench_rosbag2_read" "$D/w_rbag_mcap"
        if ((i <= py_runs)); then
            timed "$c.r.rosbags_sqlite3" "$VENV_PY" "$PYD/rosbags2_read.py" "$D/w_rbag_sqlite3"
            timed "$c.r.rosbags_mcap" "$VENV_PY" "$PYD/rosbags2_read.py" "$D/w_rbag_mcap"
            timed "$c.r.mcap_py" "$VENV_PY" "$PYD/mcap_read.py" "$mcapfile"
        fi
    done
    for t in rbag_sqlite3 rbag_mcap; do
        [[ $(field "$S/$c.r.$t.out" messages) == "$n" && $(field "$S/$c.r.$t.out" sum) == "$sum" ]] \
            || die "$c: rbag read $(cat "$S/$c.r.$t.out"), expected $(cat "$S/$c.expect")"
    done
    for t in rosbags_sqlite3 rosbags_mcap mcap_py; do
        [[ $(field "$S/$c.r.$t.out" messages) == "$n" && $(field "$S/$c.r.$t.out" bytes) == "$bytes" \
            && $(field "$S/$c.r.$t.out" adler32) == "$adler" ]] \
            || die "$c: $t read $(cat "$S/$c.r.$t.out"), expected messages=$n bytes=$bytes adler32=$adler"
    done
    say "   all readers agree ($n messages, $bytes bytes)"

    # --- the case's table -------------------------------------------------------------------
    local load; load=$(cut -d' ' -f1-3 /proc/loadavg)
    {
        echo
        echo "== $(human "$n") messages of $(size_name "$size") ($(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }') MiB of payload; random, incompressible CDR std_msgs/msg/UInt8MultiArray)"
        echo "   medians of $RUNS runs; rosbags and mcap-python: $py_runs runs; load average at the end: $load"
        echo
        printf '  %-24s %9s %10s %12s   %9s\n' "WRITE incl. fsync" "wall" "msg/s" "payload" "in-proc"
        row "rbag sqlite3" "$c.w.rbag_sqlite3" "$n" "$bytes"
        row "rbag mcap" "$c.w.rbag_mcap" "$n" "$bytes"
        row "rosbags sqlite3" "$c.w.rosbags_sqlite3" "$n" "$bytes"
        row "rosbags mcap" "$c.w.rosbags_mcap" "$n" "$bytes"
        if [[ $c == large ]]; then
            row "dd oflag=direct" "$c.w.dd" "$n" "$bytes"
            row "[dd buffered+fsync]" "$c.w.dd_buffered" "$n" "$bytes"
        fi
        echo "  of in-proc, fsync after close (median): rbag sqlite3 $(fmt "$(median "$S/$c.w.rbag_sqlite3.sync")"), rbag mcap $(fmt "$(median "$S/$c.w.rbag_mcap.sync")"), rosbags sqlite3 $(fmt "$(median "$S/$c.w.rosbags_sqlite3.sync")"), rosbags mcap $(fmt "$(median "$S/$c.w.rosbags_mcap.sync")")"
        echo "  output sizes:$sizes"
        local ws wm
        ws=$(ratio "$(wmed "$c.w.rosbags_sqlite3")" "$(wmed "$c.w.rbag_sqlite3")")
        wm=$(ratio "$(wmed "$c.w.rosbags_mcap")" "$(wmed "$c.w.rbag_mcap")")
        echo "  write rbag÷rosbags: sqlite3 ${ws}x ($(verdict "$ws" 10) ≥10x), mcap ${wm}x ($(verdict "$wm" 10) ≥10x)"
        if [[ $c == large ]]; then
            local ds dm
            ds=$(ratio "$(wmed "$c.w.dd")" "$(wmed "$c.w.rbag_sqlite3")")
            dm=$(ratio "$(wmed "$c.w.dd")" "$(wmed "$c.w.rbag_mcap")")
            echo "  write throughput rbag÷dd: sqlite3 ${ds} ($(verdict "$ds" 0.8) ≥0.8), mcap ${dm} ($(verdict "$dm" 0.8) ≥0.8)"
            echo "  (for reference, not a target: rbag÷[dd buffered+fsync]: sqlite3 $(ratio "$(wmed "$c.w.dd_buffered")" "$(wmed "$c.w.rbag_sqlite3")"), mcap $(ratio "$(wmed "$c.w.dd_buffered")" "$(wmed "$c.w.rbag_mcap")"))"
        fi
        echo
        printf '  %-24s %9s %10s %12s   %9s\n' "READ (rbag's bags)" "wall" "msg/s" "payload" "in-proc"
        row "rbag sqlite3" "$c.r.rbag_sqlite3" "$n" "$bytes"
        row "rbag mcap" "$c.r.rbag_mcap" "$n" "$bytes"
        row "rosbags sqlite3" "$c.r.rosbags_sqlite3" "$n" "$bytes"
        row "rosbags mcap" "$c.r.rosbags_mcap" "$n" "$bytes"
        row "mcap-python (mcap)" "$c.r.mcap_py" "$n" "$bytes"
        printf '  %-24s %9s %10s %12s   %9s  (python adler32 of every payload, in-process, once)\n' "[py checksum alone]" "" "" "" \
            "$(fmt "$(field "$S/$c.adler" elapsed)")"
        echo "  of rbag in-proc, rbag_storage::open alone (last run): sqlite3 $(fmt "$(field "$S/$c.r.rbag_sqlite3.out" open)"), mcap $(fmt "$(field "$S/$c.r.rbag_mcap.out" open)")"
        local rs rmc rp
        rs=$(ratio "$(wmed "$c.r.rosbags_sqlite3")" "$(wmed "$c.r.rbag_sqlite3")")
        rmc=$(ratio "$(wmed "$c.r.rosbags_mcap")" "$(wmed "$c.r.rbag_mcap")")
        rp=$(ratio "$(wmed "$c.r.mcap_py")" "$(wmed "$c.r.rbag_mcap")")
        echo "  read rbag÷rosbags: sqlite3 ${rs}x ($(verdict "$rs" 10) ≥10x), mcap ${rmc}x ($(verdict "$rmc" 10) ≥10x); rbag mcap÷mcap-python ${rp}x"
    } | tee -a "$RESULTS"
}

{
    echo "rosbag2 storage benchmark: rbag (rbag_storage::create/open, default WriteOptions) vs $PEERS, dd"
    echo "$(nproc) cores, load average before: $LOAD0; scratch: $TMP ($FSTYPE, $DEV)"
    echo "wall = whole process (start-up + work + fsync for writes); in-proc = the tool's own timer; ratios use wall medians"
} | tee -a "$RESULTS"
for c in $CASES; do
    case $c in
        small) run_case small "$SMALL_COUNT" "$SMALL_SIZE" "$SLOW_RUNS" ;;
        large) run_case large "$LARGE_COUNT" "$LARGE_SIZE" "$RUNS" ;;
        *) die "unknown case $c (small, large)" ;;
    esac
done
echo "total benchmark time $(awk -v a="$START" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s" | tee -a "$RESULTS"
