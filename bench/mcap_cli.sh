#!/usr/bin/env bash
# rbag against Foxglove's `mcap` CLI (Rust, built by scripts/setup-peers.sh into
# .peers/mcap/bin/mcap), on the same generated files, in the same run: info, cat of a ROS 1
# topic, filter of a time window, merge, convert .bag/.db3 -> .mcap, compress and recover of a
# torn file; then `rbag info` on 1 GB and 10 GB bags (ROS 1 and MCAP). See bench/README.md
# ("mcap_cli.sh").
#
#   bash bench/mcap_cli.sh
#
# Environment:
#   RUNS=3           timed rounds; every round runs both tools once, interleaved (medians reported)
#   INFO_RUNS=9      timed runs of each `info` (after one untimed warm-up run)
#   BAG_SECONDS=10   length of the generated bench_gen recording (10 s = 14,300 messages, 317 MB)
#   BIG=1            the 1 GB / 10 GB `info` part (BIG=0 skips it; it needs ~11 GB free at once
#                    and ~3-4 min); BIG_GB="1 10" the sizes
#   SCRATCH_PARENT   where the scratch directory goes (default: the repository's parent; not tmpfs)
#   SKIP_BUILD=1     use target/release/rbag and target/release/examples/bench_gen as built
#   MCAP=PATH        the mcap CLI (default .peers/mcap/bin/mcap)
#   VERBOSE=1        print every timed run (wall, wall+sync, CPU) on stderr
#
# Every run is timed as a whole process. Before each run the previous output is removed and
# `sync` is run (untimed); after it the output file is synced (fsync) and "wall+sync" includes
# that, because rbag's writers fsync their output and the mcap CLI does not. Timings are
# reported, never asserted: the script fails only if a tool errors or the outputs disagree
# (message counts read back with `rbag info --json`; line counts of `cat`).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=mcap_cli
RUNS=${RUNS:-3}
INFO_RUNS=${INFO_RUNS:-9}
BAG_SECONDS=${BAG_SECONDS:-10}
BIG=${BIG:-1}
BIG_GB=${BIG_GB:-1 10}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
EX=$TARGET/release/examples
RBAG=$TARGET/release/rbag
MCAP=${MCAP:-$ROOT/.peers/mcap/bin/mcap}
PY=$(command -v python3)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

[[ -x $MCAP ]] || die "the mcap CLI is missing ($MCAP): run 'bash $ROOT/scripts/setup-peers.sh' first"
MCAP_VERSION=$("$MCAP" --version | head -1)

# Builds (unless SKIP_BUILD=1), makes $TMP (removed on exit) and generates $BAG in it.
mixed_bag
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(now_ns)
RBAG_VERSION=$("$RBAG" --version | head -1)
T0=1700000000000000000 # bench_gen's first log time

# --- helpers (the common ones are in lib.sh) -------------------------------------------------
# msgs FILE: the message count rbag reads from FILE.
msgs() { "$RBAG" info --json "$1" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["message_count"])'; }

# timed NAME OUT|- CMD...: removes OUT (unless KEEP=1) and syncs (untimed), runs CMD with stdout
# to $S/NAME.out, appends its wall time to $S/NAME.wall, wall + fsync of OUT to $S/NAME.dur and
# its CPU time (user + sys, all threads) to $S/NAME.cpu.
# Exit status 0 passes, and the ones in OK_RC (recover and reindex say 3 when they dropped data).
timed() {
    local name=$1 out=$2 t0 t1 t2 rc=0; shift 2
    [[ $out != - && ${KEEP:-0} != 1 ]] && rm -rf "$out"
    sync
    # $EPOCHREALTIME and `times` are builtins: no process of their own inside the timing
    times >"$S/times0"
    t0=$EPOCHREALTIME
    "$@" >"$S/$name.out" 2>"$S/$name.err" || rc=$?
    t1=$EPOCHREALTIME
    times >"$S/times1"
    [[ $rc == 0 || " ${OK_RC:-} " == *" $rc "* ]] || { cat "$S/$name.err" >&2; die "$name failed (exit $rc): $*"; }
    echo "$rc" >"$S/$name.rc"
    if [[ $out != - ]]; then sync "$out"; t2=$EPOCHREALTIME; else t2=$t1; fi
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >>"$S/$name.wall"
    awk -v a="$t0" -v b="$t2" 'BEGIN { printf "%.6f\n", b - a }' >>"$S/$name.dur"
    paste "$S/times0" "$S/times1" | tail -n 1 | tr 'ms' '  ' \
        | awk '{ printf "%.3f\n", ($5 * 60 + $6 + $7 * 60 + $8) - ($1 * 60 + $2 + $3 * 60 + $4) }' >>"$S/$name.cpu"
    [[ ${VERBOSE:-0} == 1 ]] && say "   $name: wall $(tail -n 1 "$S/$name.wall") +sync $(tail -n 1 "$S/$name.dur") cpu $(tail -n 1 "$S/$name.cpu")"
    return 0
}

# --- inputs (untimed) -----------------------------------------------------------------------
BAG_MSGS=$("$RBAG" info --json "$BAG" | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["message_count"])')
IMU_MSGS=$((BAG_SECONDS * 400))
say "== inputs"
# The MCAP inputs are written by the mcap CLI itself (its defaults: zstd, 1 MiB chunks, ros1
# encoding), so the peer reads the files it writes.
IN=$TMP/in.mcap
"$MCAP" convert "$BAG" "$IN" 2>/dev/null
IN_NONE=$TMP/in_none.mcap
"$MCAP" decompress "$IN" -o "$IN_NONE" 2>/dev/null
# merge inputs: the images in one file, the small messages in the other.
MA=$TMP/merge_a.mcap MB=$TMP/merge_b.mcap
"$MCAP" filter "$IN" -o "$MA" -y '/camera/.*' 2>/dev/null
"$MCAP" filter "$IN" -o "$MB" -n '/camera/.*' 2>/dev/null
# A ROS 2 SQLite3 file (cdr) for convert .db3 -> .mcap.
DB3=$TMP/in.db3
"$RBAG" convert "$BAG" -o "$DB3" >/dev/null 2>&1
# A torn MCAP: in.mcap cut in the middle of the chunk that holds the file's midpoint.
TORN=$TMP/torn.mcap
CUT=$("$PY" - "$IN" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
pos, mid = 8, len(data) // 2
while pos + 9 <= len(data):
    op, n = data[pos], struct.unpack_from('<Q', data, pos + 1)[0]
    if op == 0x06 and pos <= mid < pos + 9 + n:  # the Chunk record holding the midpoint
        print(pos + 9 + n // 2)
        break
    pos += 9 + n
else:
    sys.exit('no chunk at the midpoint')
EOF
)
head -c "$CUT" "$IN" >"$TORN"
# The time window of `filter`: [30 %, 50 %) of the recording, [3 s, 5 s) of the default 10 s
# (inclusive start, exclusive end on both sides).
W0=$((T0 + BAG_SECONDS * 300000000)) W1=$((T0 + BAG_SECONDS * 500000000))
for f in "$BAG" "$IN" "$IN_NONE" "$MA" "$MB" "$DB3" "$TORN"; do cat "$f" >/dev/null; done
say "   $BAG: $BAG_MSGS messages; in.mcap $(stat -c %s "$IN") B (zstd), in_none.mcap $(stat -c %s "$IN_NONE") B, torn.mcap cut at $CUT of $(stat -c %s "$IN") B"

# --- rounds ---------------------------------------------------------------------------------
# measurement key -> rbag command / mcap command (OUT is the output file, or - for stdout)
ZSTD=(--compression zstd --chunk-size 1MiB)
run_pair() {
    local m=$1 side=$2 o=$TMP/out_${1}_$2.mcap
    case $m.$side in
        info.rbag) timed "$m.$side" - "$RBAG" info "$IN" ;;
        info.mcap) timed "$m.$side" - "$MCAP" info "$IN" ;;
        infobag.rbag) timed "$m.$side" - "$RBAG" info "$BAG" ;;
        cat.rbag) timed "$m.$side" - "$RBAG" echo "$IN" /imu/data --json ;;
        cat.mcap) timed "$m.$side" - "$MCAP" cat "$IN" --topics /imu/data --format ndjson ;;
        filter.rbag) timed "$m.$side" "$o" "$RBAG" convert "$IN" -o "$o" --start "${W0}ns" --end "${W1}ns" \
            --no-keep-latched --encoding ros1 "${ZSTD[@]}" ;;
        filter.mcap) timed "$m.$side" "$o" "$MCAP" filter "$IN" -o "$o" -S "$W0" -E "$W1" ;;
        merge.rbag) timed "$m.$side" "$o" "$RBAG" convert "$MA" "$MB" -o "$o" --encoding ros1 "${ZSTD[@]}" ;;
        merge.mcap) timed "$m.$side" "$o" "$MCAP" merge "$MA" "$MB" -o "$o" ;;
        convbag.rbag) timed "$m.$side" "$o" "$RBAG" convert "$BAG" -o "$o" --encoding ros1 "${ZSTD[@]}" ;;
        convbag.mcap) timed "$m.$side" "$o" "$MCAP" convert "$BAG" "$o" ;;
        convdb3.rbag) timed "$m.$side" "$o" "$RBAG" convert "$DB3" -o "$o" "${ZSTD[@]}" ;;
        convdb3.mcap) timed "$m.$side" "$o" "$MCAP" convert "$DB3" "$o" ;;
        compress.rbag)
            # in place: a fresh copy of the uncompressed input each time (untimed)
            rm -f "$o" && cp "$IN_NONE" "$o" && sync "$o"
            KEEP=1 timed "$m.$side" "$o" "$RBAG" compress --zstd --no-backup -q "$o" ;;
        compress.mcap) timed "$m.$side" "$o" "$MCAP" compress "$IN_NONE" -o "$o" ;;
        recover.rbag) OK_RC=3 timed "$m.$side" "$o" "$RBAG" reindex "$TORN" -o "$o" ;;
        recover.mcap) OK_RC=3 timed "$m.$side" "$o" "$MCAP" recover "$TORN" -o "$o" ;;
        *) die "no command for $m.$side" ;;
    esac
}
MEAS=(cat filter merge convbag convdb3 compress recover)
# One untimed warm-up of every command (page cache for the binaries and inputs).
say "== warm-up"
for m in info infobag "${MEAS[@]}"; do
    for side in rbag mcap; do
        [[ $m == infobag && $side == mcap ]] && continue
        run_pair "$m" "$side"
    done
done
rm -f "$S"/*.wall "$S"/*.dur "$S"/*.cpu
for i in $(seq 1 "$RUNS"); do
    say "== round $i/$RUNS (load $(cut -d' ' -f1 /proc/loadavg))"
    # alternate which tool goes first
    if ((i % 2)); then sides=(rbag mcap); else sides=(mcap rbag); fi
    for m in "${MEAS[@]}"; do
        for side in "${sides[@]}"; do run_pair "$m" "$side"; done
    done
done
say "== info ($INFO_RUNS runs each)"
for i in $(seq 1 "$INFO_RUNS"); do
    run_pair info rbag
    run_pair info mcap
    run_pair infobag rbag
done

# --- the outputs of the last round (checked after the timings) -------------------------------
say "== checking outputs"
declare -A WANT=([filter]=x [merge]=$BAG_MSGS [convbag]=$BAG_MSGS [convdb3]=$BAG_MSGS [compress]=$BAG_MSGS)
declare -A GOT_RBAG GOT_MCAP
for m in filter merge convbag convdb3 compress recover; do
    GOT_RBAG[$m]=$(msgs "$TMP/out_${m}_rbag.mcap")
    GOT_MCAP[$m]=$(msgs "$TMP/out_${m}_mcap.mcap")
    # rbag's outputs must also be read by the mcap CLI
    "$MCAP" info "$TMP/out_${m}_rbag.mcap" >/dev/null 2>&1 || die "$m: mcap info cannot read rbag's output"
done
GOT_RBAG[cat]=$(count "$S/cat.rbag.out")
GOT_MCAP[cat]=$(count "$S/cat.mcap.out")
[[ ${GOT_RBAG[cat]} == "$IMU_MSGS" && ${GOT_MCAP[cat]} == "$IMU_MSGS" ]] \
    || die "cat: rbag printed ${GOT_RBAG[cat]} lines, mcap ${GOT_MCAP[cat]}, /imu/data has $IMU_MSGS messages"
for m in filter merge convbag convdb3 compress; do
    [[ ${GOT_RBAG[$m]} == "${GOT_MCAP[$m]}" ]] || die "$m: rbag wrote ${GOT_RBAG[$m]} messages, mcap ${GOT_MCAP[$m]}"
    [[ ${WANT[$m]} == x || ${GOT_RBAG[$m]} == "${WANT[$m]}" ]] || die "$m: ${GOT_RBAG[$m]} messages, want ${WANT[$m]}"
done
say "   message counts agree: cat ${GOT_RBAG[cat]}, filter ${GOT_RBAG[filter]}, merge/convert/compress $BAG_MSGS; recover: rbag ${GOT_RBAG[recover]}, mcap ${GOT_MCAP[recover]}"

# --- table ----------------------------------------------------------------------------------
declare -A LABEL=(
    [info]="info in.mcap"
    [infobag]="info in.bag (rbag only: mcap reads no .bag)"
    [cat]="cat /imu/data as NDJSON"
    [filter]="filter window [30 %, 50 %) of the time"
    [merge]="merge 2 files"
    [convbag]="convert .bag -> .mcap"
    [convdb3]="convert .db3 -> .mcap"
    [compress]="compress (zstd)"
    [recover]="recover torn.mcap"
)
declare -A TGT=([info]=1 [cat]=1.5 [filter]=1.5 [merge]=1.5 [convbag]=1.5)
size() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "rbag vs the mcap CLI, $(date -u '+%F %H:%M UTC'); $RBAG_VERSION; mcap $MCAP_VERSION"
    echo "input: bench_gen ROS 1 bag, $BAG_SECONDS s, $BAG_MSGS messages, $(size "$BAG") (String 1 kHz, Imu 400 Hz, 1 MiB Image 30 Hz);"
    echo "  in.mcap = mcap convert in.bag ($(size "$IN"), zstd, 1 MiB chunks, ros1); in_none.mcap = mcap decompress ($(size "$IN_NONE"));"
    echo "  in.db3 = rbag convert in.bag -o in.db3 ($(size "$DB3")); torn.mcap = in.mcap cut mid-chunk at byte $CUT"
    echo "$(nproc) cores, load average before: $LOAD0, after: $LOAD1; scratch $FSTYPE ($DEV)"
    echo "medians of $RUNS runs ($INFO_RUNS warm runs for info); writing commands: wall + fsync of the output (rbag fsyncs, mcap does not)"
    echo
    printf '| %-44s | %12s | %12s | %17s | %6s | %-6s | %s |\n' measurement "rbag (s)" "mcap (s)" "ratio (mcap/rbag)" target met? "wall-only ratio; CPU s rbag / mcap; outputs"
    printf '|%s|%s:|%s:|%s:|%s:|%s|%s|\n' "$(printf -- '-%.0s' {1..46})" "$(printf -- '-%.0s' {1..13})" "$(printf -- '-%.0s' {1..13})" \
        "$(printf -- '-%.0s' {1..18})" "$(printf -- '-%.0s' {1..7})" "$(printf -- '-%.0s' {1..8})" "$(printf -- '-%.0s' {1..26})"
    for m in info infobag "${MEAS[@]}"; do
        r=$(median "$S/$m.rbag.dur")
        if [[ $m == infobag ]]; then
            printf '| %-44s | %12.4f | %12s | %17s | %6s | %-6s | %s |\n' "${LABEL[$m]}" "$r" - - - - "CPU $(median "$S/$m.rbag.cpu")"
            continue
        fi
        p=$(median "$S/$m.mcap.dur")
        x=$(ratio "$p" "$r")
        xw="$(ratio "$(median "$S/$m.mcap.wall")" "$(median "$S/$m.rbag.wall")")x; CPU $(median "$S/$m.rbag.cpu") / $(median "$S/$m.mcap.cpu")"
        case $m in
            info) note="$xw" ;;
            cat) note="$xw; ${GOT_RBAG[cat]} lines each" ;;
            recover) note="$xw; kept rbag ${GOT_RBAG[recover]}, mcap ${GOT_MCAP[recover]} of $BAG_MSGS; $(size "$TMP/out_${m}_rbag.mcap") / $(size "$TMP/out_${m}_mcap.mcap")" ;;
            *) note="$xw; ${GOT_RBAG[$m]} msgs; $(size "$TMP/out_${m}_rbag.mcap") / $(size "$TMP/out_${m}_mcap.mcap")" ;;
        esac
        if [[ $m == recover ]]; then
            t="kept >="
            met=$([[ ${GOT_RBAG[recover]} -ge ${GOT_MCAP[recover]} ]] && echo met || echo MISSED)
        elif [[ -n ${TGT[$m]:-} ]]; then
            t=">= ${TGT[$m]}x"
            met=$(verdict "$x" "${TGT[$m]}")
        else
            t=report met=-
        fi
        printf '| %-44s | %12.4f | %12.4f | %17s | %6s | %-6s | %s |\n' "${LABEL[$m]}" "$r" "$p" "${x}x" "$t" "$met" "$note"
    done
} >"$S/table"
cat "$S/table"

# --- info on 1 GB and 10 GB bags --------------------------------------------------------------
if [[ $BIG == 1 ]]; then
    # bench_gen writes ~31.7 MB of recording per second with its default rates.
    declare -A BIGT
    for gb in $BIG_GB; do
        secs=$(awk -v g="$gb" 'BEGIN { printf "%d", g * 1e9 / 31.7e6 + 0.5 }')
        big=$TMP/big${gb}.bag
        say "== ${gb} GB: generating $big ($secs s of recording)"
        t0=$(now_ns)
        "$EX/bench_gen" "$big" --seconds "$secs" >"$S/gen$gb.out"
        "$RBAG" convert "$big" -o "$TMP/big$gb.mcap" --encoding ros1 >/dev/null 2>&1
        say "   wrote $(size "$big") and $(size "$TMP/big$gb.mcap") in $(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s"
        for f in big$gb.bag big$gb.mcap; do
            "$RBAG" info "$TMP/$f" >/dev/null # warm-up: the index pages into the page cache
            "$RBAG" info "$TMP/$f" >/dev/null
            for i in $(seq 1 "$INFO_RUNS"); do
                timed "big.$f.rbag" - "$RBAG" info "$TMP/$f"
                [[ $f == *.mcap ]] && timed "big.$f.mcap" - "$MCAP" info "$TMP/$f"
            done
            BIGT[$f]="$(size "$TMP/$f"), $(msgs "$TMP/$f") messages"
        done
        rm -f "$big" "$TMP/big$gb.mcap"
    done
    {
        echo
        echo "rbag info on big files (median of $INFO_RUNS warm runs; target: <= 20 ms, and the largest within 1.5x of the smallest)"
        echo
        printf '| %-40s | %12s | %12s | %s |\n' file "rbag info (s)" "mcap info (s)" "CPU s rbag / mcap; target"
        printf '|%s|%s:|%s:|%s|\n' "$(printf -- '-%.0s' {1..42})" "$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..14})" "$(printf -- '-%.0s' {1..40})"
        first=${BIG_GB%% *}
        for ext in bag mcap; do
            for gb in $BIG_GB; do
                f=big$gb.$ext
                r=$(median "$S/big.$f.rbag.wall")
                p=$([[ $ext == mcap ]] && printf '%.4f' "$(median "$S/big.$f.mcap.wall")" || echo -)
                base=$(median "$S/big.big$first.$ext.rbag.wall")
                c="CPU $(median "$S/big.$f.rbag.cpu") / $([[ $ext == mcap ]] && median "$S/big.$f.mcap.cpu" || echo -)"
                v="$c; <= 20 ms: $(awk -v r="$r" 'BEGIN { print (r <= 0.020 ? "met" : "MISSED") }')"
                [[ $gb != "$first" ]] && v="$v; ${gb} GB / ${first} GB = $(ratio "$r" "$base")x: $(awk -v r="$r" -v b="$base" 'BEGIN { print (r <= 1.5 * b ? "met" : "MISSED") }')"
                printf '| %-40s | %12.4f | %12s | %s |\n' "$f (${BIGT[$f]})" "$r" "$p" "$v"
            done
        done
    } >"$S/big"
    cat "$S/big"
fi
echo
echo "total benchmark time $(awk -v a="$START" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s"
