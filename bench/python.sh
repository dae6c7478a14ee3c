#!/usr/bin/env bash
# Benchmark for the Python package (issue 15): rbag's Python API against rosbags and Debian's
# rosbag, in one run, on a generated ~300 MiB mixed ROS 1 bag (a ~1 GiB one for opening, and a
# 34 MB one of 90,000 Imu messages for to_arrow, which also reads a Parquet file of that topic).
# See bench/README.md ("Python").
#
#   bash bench/python.sh
#
# Rows (ratios = peer time / rbag time; medians of RUNS):
#   raw       iterate every raw message: rbag.Reader.messages(raw=True) vs rosbags.rosbag1.Reader
#             vs rosbag.Bag.read_messages(raw=True). Each tool runs a pass that only takes len() of
#             every payload and a pass that also adler32s it (--net); the row is the first pass,
#             the checksum's cost (the same C code for all three) is printed beside it
#   decode    every /imu (Imu) and /tf (TFMessage) message of the corpus's multi_none.bag, decoded
#             to objects, DECODE_REPEAT times: rbag.Reader.messages vs rosbags AnyReader.deserialize
#   compat    rbag.compat.rosbag vs Debian's rosbag: the same read_messages() loop, every message
#             decoded, on the 300 MiB bag
#   topics    rbag.Reader(path).topics on the ~1 GiB bag (fresh reader each time, page cache warm)
#   arrow     rbag.Reader(bag).to_arrow("/imu/data") (the Reader's opening included) on a bag of
#             90,000 sensor_msgs/Imu (bench_gen --rates 0,400,0, ARROW_SECONDS s at 400 Hz, every
#             field filled): against a rosbags loop (AnyReader, deserialize, column lists,
#             pandas.DataFrame with the same columns; py/arrow_rosbags_df.py) and against
#             pyarrow.parquet.read_table of a Parquet file holding that same table (written once
#             beforehand, not timed). Printed as rosbags/rbag and rbag/parquet; then, once, a
#             split of to_arrow's time (py/arrow_rbag.py profile). pandas is imported before the
#             timers, for the rosbags side; to_arrow itself no longer imports it
#
# Environment:
#   RUNS=3  BAG_SECONDS=10 (≈300 MiB)  BIG_SECONDS=34 (≈1 GiB)  DECODE_REPEAT=30
#   ARROW_SECONDS=225 (90,000 Imu messages)  ONLY=raw,decode,compat,topics,arrow (default: all rows)
#   SCRATCH_PARENT=/work (a real disk)  SKIP_BUILD=1 (use the installed wheel and bench_gen as they are)
#
# The release wheel replaces the dev wheel in .peers/venv; scripts/test-python.sh puts the dev
# one back. Timings are reported, never asserted.
set -euo pipefail
BENCH=python
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$ROOT/bench
RUNS=${RUNS:-3}
BAG_SECONDS=${BAG_SECONDS:-10}
BIG_SECONDS=${BIG_SECONDS:-34}
DECODE_REPEAT=${DECODE_REPEAT:-30}
ARROW_SECONDS=${ARROW_SECONDS:-225}
ONLY=${ONLY:-raw,decode,compat,topics,arrow}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
VENV=$ROOT/.peers/venv
VENV_PY=$VENV/bin/python
PY=/usr/bin/python3
EX=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples
CORPUS_BAG=$(dirname "$ROOT")/shared/corpus/ros1/multi_none.bag
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

# want ROW: whether ROW is among $ONLY.
want() { [[ ,$ONLY, == *,$1,* ]]; }
"$VENV_PY" -c 'import rosbags, maturin' 2>/dev/null || die "peers missing: run 'bash scripts/setup-peers.sh' first"
if want raw || want compat; then
    "$PY" -c 'import rosbag' 2>/dev/null || die "Debian's rosbag is missing: run 'bash scripts/setup-peers.sh' first"
fi
if want decode; then
    [[ -f $CORPUS_BAG ]] || die "the corpus bag $CORPUS_BAG is missing (the decode row needs /imu and /tf)"
fi
if want arrow; then
    "$VENV_PY" -c 'import pyarrow, pandas' 2>/dev/null || die "pyarrow or pandas missing: run 'bash scripts/setup-peers.sh' first"
fi

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building bench_gen and the release wheel"
    (cd "$ROOT" && cargo build --release -q -p rbag-storage --example bench_gen) >&2
    WHEELS=$(mktemp -d)
    (cd "$ROOT" && PATH="$VENV/bin:$PATH" maturin build --release -q -m crates/rbag-py/Cargo.toml -o "$WHEELS") >&2
    "$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$WHEELS"/*.whl
    rm -rf "$WHEELS"
fi
scratch_dir
BAG=$TMP/mixed.bag
BIG=$TMP/big.bag
ARROW_BAG=$TMP/imu.bag
PARQUET=$TMP/imu.parquet
IMU_TOPIC=/imu/data
if want raw || want compat; then
    say "== generating $BAG ($BAG_SECONDS s)"
    "$EX/bench_gen" "$BAG" --seconds "$BAG_SECONDS" >&2
    cat "$BAG" "$BAG" >/dev/null
fi
if want topics; then
    say "== generating $BIG ($BIG_SECONDS s)"
    "$EX/bench_gen" "$BIG" --seconds "$BIG_SECONDS" >&2
fi
if want arrow; then
    # Only /imu/data (sensor_msgs/Imu, 324 B, every field set), 400 Hz.
    say "== generating $ARROW_BAG ($ARROW_SECONDS s of Imu only) and $PARQUET (its to_arrow table)"
    "$EX/bench_gen" "$ARROW_BAG" --seconds "$ARROW_SECONDS" --rates 0,400,0 >&2
    env "PYTHONPATH=$HERE/py" "$VENV_PY" "$HERE/py/arrow_rbag.py" parquet "$ARROW_BAG" "$IMU_TOPIC" "$PARQUET" >"$S/parquet.out"
    cat "$ARROW_BAG" "$ARROW_BAG" "$PARQUET" >/dev/null
fi

# run NAME CMD...: appends the `elapsed=` (or ns_per_msg=/ms=) field CMD prints to $S/NAME.
run() {
    local name=$1 key=$2; shift 2
    "$@" >"$S/$name.out"
    field "$S/$name.out" "$key" >>"$S/$name"
}
PYPATH="PYTHONPATH=$HERE/py"
for i in $(seq "$RUNS"); do
    say "== run $i/$RUNS"
    want raw && for tool in rbag rosbags rosbag; do
        case $tool in
            rbag) cmd=("$VENV_PY" "$HERE/py/rbag_python.py" raw --net "$BAG") ;;
            rosbags) cmd=("$VENV_PY" "$HERE/py/rosbags_read.py" --net "$BAG") ;;
            rosbag) cmd=("$PY" "$HERE/py/rosbag_read.py" --net "$BAG") ;;
        esac
        env "$PYPATH" "${cmd[@]}" >"$S/raw.$tool.out"
        e=$(field "$S/raw.$tool.out" elapsed); c=$(field "$S/raw.$tool.out" checksum)
        awk -v e="$e" -v c="$c" 'BEGIN { printf "%.6f\n", e - c }' >>"$S/raw.$tool"
        echo "$c" >>"$S/raw.$tool.ck"
    done
    if want decode; then
        run decode.rbag ns_per_msg env "$PYPATH" "$VENV_PY" "$HERE/py/rbag_python.py" decode "$CORPUS_BAG" "$DECODE_REPEAT"
        run decode.rosbags ns_per_msg env "$PYPATH" "$VENV_PY" "$HERE/py/rosbags_decode.py" "$CORPUS_BAG" "$DECODE_REPEAT"
    fi
    if want compat; then
        run compat.rbag elapsed env "$PYPATH" "$VENV_PY" "$HERE/py/rbag_python.py" compat "$BAG"
        run compat.rosbag elapsed env "$PYPATH" "$PY" "$HERE/py/rosbag_decode_all.py" "$BAG"
    fi
    want topics && run topics.rbag ms env "$PYPATH" "$VENV_PY" "$HERE/py/rbag_python.py" topics "$BIG"
    if want arrow; then
        run arrow.rbag elapsed env "$PYPATH" "$VENV_PY" "$HERE/py/arrow_rbag.py" table "$ARROW_BAG" "$IMU_TOPIC"
        # The first run also checks (after its timer) that the frame equals rbag's table.
        check=(); [[ $i == 1 ]] && check=(--check)
        run arrow.rosbags elapsed env "$PYPATH" "$VENV_PY" "$HERE/py/arrow_rosbags_df.py" "$ARROW_BAG" "$IMU_TOPIC" "${check[@]}"
        run arrow.parquet elapsed env "$PYPATH" "$VENV_PY" "$HERE/py/arrow_parquet.py" "$PARQUET"
    fi
done
if want raw; then
    for tool in rbag rosbags rosbag; do
        [[ $(field "$S/raw.$tool.out" messages) == $(field "$S/raw.rbag.out" messages) ]] || die "raw: $tool read another message count"
    done
fi
if want arrow; then
    for tool in rbag rosbags parquet; do
        [[ $(field "$S/arrow.$tool.out" rows) == $((ARROW_SECONDS * 400)) ]] || die "arrow: $tool has another row count"
        [[ $(field "$S/arrow.$tool.out" cols) == $(field "$S/arrow.rbag.out" cols) ]] || die "arrow: $tool has another column count"
    done
    say "== profiling to_arrow once"
    env "$PYPATH" "$VENV_PY" "$HERE/py/arrow_rbag.py" profile "$ARROW_BAG" "$IMU_TOPIC" >"$S/arrow.profile"
fi

m() { median "$S/$1"; }
echo "Python package benchmark (issue 15), $(date +%F); $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg); medians of $RUNS runs"
want raw && echo "bag: $(basename "$BAG") $(mbps "$(stat -c %s "$BAG")" 1) MB, $(field "$S/raw.rbag.out" messages) messages (bench_gen, $BAG_SECONDS s)"
want arrow && echo "to_arrow bag: $(basename "$ARROW_BAG") $(mbps "$(stat -c %s "$ARROW_BAG")" 1) MB, $(field "$S/arrow.rbag.out" rows) Imu messages; $(basename "$PARQUET") $(mbps "$(stat -c %s "$PARQUET")" 1) MB (pyarrow's write_table defaults)"
echo "scratch on $FSTYPE ($DEV)"
echo
printf '  %-58s %10s %10s %10s\n' "measurement" "rbag" "peer" "peer/rbag"
row() { printf '  %-58s %10s %10s %10s  %s\n' "$1" "$2" "$3" "$4" "$5"; }
if want raw; then
    r=$(m raw.rbag); a=$(m raw.rosbags); b=$(m raw.rosbag)
    echo "  (adler32 of every payload, not in the raw rows: rbag $(fmt "$(m raw.rbag.ck)"), rosbags $(fmt "$(m raw.rosbags.ck)"), rosbag $(fmt "$(m raw.rosbag.ck)"))"
    row "iterate raw messages vs rosbags" "$(fmt "$r")" "$(fmt "$a")" "$(ratio "$a" "$r")x" "(target >= 10x: $(verdict "$(ratio "$a" "$r")" 10))"
    row "iterate raw messages vs Debian rosbag" "$(fmt "$r")" "$(fmt "$b")" "$(ratio "$b" "$r")x" "(target >= 20x: $(verdict "$(ratio "$b" "$r")" 20))"
fi
if want decode; then
    r=$(m decode.rbag); a=$(m decode.rosbags)
    row "decode /imu + /tf to objects, ns/msg, vs rosbags" "${r}ns" "${a}ns" "$(ratio "$a" "$r")x" "(target >= 5x: $(verdict "$(ratio "$a" "$r")" 5))"
fi
if want compat; then
    r=$(m compat.rbag); b=$(m compat.rosbag)
    row "rosbag.Bag read_messages() decoded, compat vs Debian" "$(fmt "$r")" "$(fmt "$b")" "$(ratio "$b" "$r")x" "(target >= 10x: $(verdict "$(ratio "$b" "$r")" 10))"
fi
if want topics; then
    t=$(m topics.rbag)
    row "Reader(path).topics on $(mbps "$(stat -c %s "$BIG")" 1) MB" "${t}ms" "-" "-" "(target <= 20 ms: $(awk -v t="$t" 'BEGIN { print (t <= 20 ? "met" : "MISSED") }'))"
fi
if want arrow; then
    r=$(m arrow.rbag); a=$(m arrow.rosbags); q=$(m arrow.parquet)
    k=$(($(field "$S/arrow.rbag.out" rows) / 1000))
    row "to_arrow of $k k Imu vs a rosbags loop to a DataFrame" "$(fmt "$r")" "$(fmt "$a")" "$(ratio "$a" "$r")x" "(target >= 50x: $(verdict "$(ratio "$a" "$r")" 50))"
    row "to_arrow vs read_table of the same table from Parquet" "$(fmt "$r")" "$(fmt "$q")" "$(ratio "$q" "$r")x" \
        "(rbag/parquet $(ratio "$r" "$q")x; target <= 3x: $(awk -v r="$r" -v q="$q" 'BEGIN { print (r <= 3 * q ? "met" : "MISSED") }'))"
    p=$S/arrow.profile
    echo "  to_arrow: rbag $(fmt "$r"), rosbags-df $(fmt "$a") ($(ratio "$a" "$r")x), parquet $(fmt "$q") (rbag/parquet = $(ratio "$r" "$q")x)"
    echo "  (to_arrow split, medians of 5 in one process: Reader open $(fmt "$(field "$p" open)"), raw read of the topic $(fmt "$(field "$p" raw)"),"
    echo "   to_arrow $(fmt "$(field "$p" arrow)"), of header.seq alone $(fmt "$(field "$p" arrow_one_column)"), of the three covariances alone $(fmt "$(field "$p" arrow_covariances)");"
    echo "   a first to_arrow in a fresh process: $(fmt "$(field "$p" cold)"), pandas imported by it: $(field "$p" pandas_imported))"
fi
