#!/usr/bin/env bash
# Message decoding benchmark: rbag_msg's reused Decoder (the flat representation, no allocation
# per message) against rosbags' deserialize_cdr / deserialize_ros1 on the same bytes
# (sensor_msgs/Imu, tf2_msgs/TFMessage, sensor_msgs/PointCloud2 with 64k points, sensor_msgs/Image
# 640x480 rgb8; CDR and ROS 1), single thread, in two modes in the same run: `alone` and `busy`
# (a busy loop pinned to the other core). rbag's Value tree (rbag_msg::decode) is timed beside it,
# and a memcpy of every payload as the floor for the large ones. See bench/README.md ("Message
# decoding").
#
#   bash bench/decode.sh
#
# Environment:
#   PASSES=3          passes; each runs, per mode, rbag then rosbags (interleaved, so that a burst
#                     of load on the shared machine hits both tools); the median of the passes is
#                     reported
#   MODES="alone busy"  `alone`: the bench pinned to CPU 0; `busy`: the same with `yes > /dev/null`
#                     pinned to CPU 1 for the duration (on a 1-core machine both share CPU 0)
#   ROUNDS=7          timed rounds per payload in each pass (each tool prints their median)
#   RBAG_ROUND_MS=50  length of one rbag round; PY_ROUND_MS=200 of one rosbags round
#   SKIP_BUILD=1      use the bench_decode example already in target/release/examples
#
# Both tools decode every payload once and check field values before timing (rbag also checks that
# re-encoding gives the same bytes and that its two representations agree); timings are reported,
# never asserted. The load average is printed with every pass and with the result.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PASSES=${PASSES:-3}
MODES=${MODES:-alone busy}
ROUNDS=${ROUNDS:-7}
RBAG_ROUND_MS=${RBAG_ROUND_MS:-50}
PY_ROUND_MS=${PY_ROUND_MS:-200}
VENV_PY=$ROOT/.peers/venv/bin/python
EX=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples

say() { printf '%s\n' "$*" >&2; }
die() { say "decode.sh: $*"; exit 1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

[[ -x $VENV_PY ]] && "$VENV_PY" -c 'import rosbags.typesys, numpy' 2>/dev/null \
    || die "peers missing: run 'bash $ROOT/scripts/setup-peers.sh' first"
command -v taskset >/dev/null || die "taskset (util-linux) is needed to pin the bench and the busy loop"
PEER=$("$VENV_PY" -c 'from importlib.metadata import version; print("rosbags", version("rosbags"))')
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -p rbag-msg --example bench_decode) >&2
fi
[[ -x $EX/bench_decode ]] || die "missing $EX/bench_decode"

CPUS=$(nproc)
BENCH_CPU=0
BUSY_CPU=$((CPUS > 1 ? 1 : 0))
TMP=$(mktemp -d)
BUSY_PID=
stop_busy() { if [[ -n $BUSY_PID ]]; then kill "$BUSY_PID" 2>/dev/null || true; wait "$BUSY_PID" 2>/dev/null || true; BUSY_PID=; fi; }
trap 'stop_busy; rm -rf "$TMP"' EXIT
LOAD0=$(load)
say "== generating payloads with $PEER in $TMP"
"$VENV_PY" "$ROOT/bench/decode_gen.py" "$TMP"
for i in $(seq 1 "$PASSES"); do
    for mode in $MODES; do
        case $mode in
            alone) ;;
            busy) taskset -c "$BUSY_CPU" yes > /dev/null & BUSY_PID=$! ;;
            *) die "unknown mode $mode (alone or busy)" ;;
        esac
        say "== pass $i/$PASSES, $mode (load $(load)): rbag, then $PEER on CPU $BENCH_CPU; $ROUNDS rounds of ~$RBAG_ROUND_MS / ~$PY_ROUND_MS ms per payload"
        echo "$mode $i $(load)" >> "$TMP/loads"
        taskset -c "$BENCH_CPU" "$EX/bench_decode" "$TMP/manifest" "$ROUNDS" "$RBAG_ROUND_MS" | sed "s/^/$mode /" | tee -a "$TMP/rbag" >&2
        taskset -c "$BENCH_CPU" "$VENV_PY" "$ROOT/bench/decode_rosbags.py" "$TMP/manifest" "$ROUNDS" "$PY_ROUND_MS" | sed "s/^/$mode /" | tee -a "$TMP/rosbags" >&2
        stop_busy
    done
done

echo "message decoding: rbag_msg::Decoder (flat, reused) vs $PEER (deserialize_cdr / deserialize_ros1 of bytes), the same payloads"
echo "$CPUS cores, load average before: $LOAD0, after: $(load); ns/msg: median of $PASSES passes of $ROUNDS rounds; bench on CPU $BENCH_CPU"
awk '{ l[$1] = l[$1] (l[$1] == "" ? "" : "; ") "pass " $2 ": " $3 " " $4 " " $5 } END { for (m in l) print "load average at the start of each " m " pass: " l[m] }' "$TMP/loads" | sort
echo
# Medians of the passes per MODE LABEL ENC, then one row per mode and payload in the manifest's order.
awk -v modes="$MODES" '
    function get(line, key) { return match(line, " " key "=[^ ]*") ? substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2) : "" }
    function add(a, k, v) { a[k] = a[k] " " v }
    function med(s,   v, n, i, j, t) {
        n = split(s, v, " ")
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function x(r) { return sprintf(r >= 100 ? "%.0fx" : r >= 10 ? "%.1fx" : "%.2fx", r) }
    FILENAME ~ /rbag$/ { k = $1 " " $2 " " $3; add(rd, k, get($0, "decode_ns")); add(tr, k, get($0, "tree_ns")); add(mc, k, get($0, "memcpy_ns")); next }
    { k = $2 " " $3; add(pd, $1 " " k, get($0, "decode_ns")); if (!(k in bytes)) { order[++n] = k; bytes[k] = get($0, "bytes") } }
    END {
        printf "%-6s %-24s %-4s %9s %12s %15s %13s %12s   %s\n", "mode", "type", "enc", "bytes", "rbag ns/msg", "rosbags ns/msg", "rosbags/rbag", "tree ns/msg", "rbag decode / memcpy"
        nm = split(modes, ms, " ")
        for (m = 1; m <= nm; m++) for (i = 1; i <= n; i++) {
            k = ms[m] " " order[i]; split(order[i], f, " "); r = med(rd[k]); p = med(pd[k]); c = med(mc[k]); tt = med(tr[k])
            if (r == "" || p == "") continue
            big = f[1] ~ /Image|PointCloud2/ ? sprintf("%.4f (memcpy %.0f ns)", r / c, c) : ""
            printf "%-6s %-24s %-4s %9d %12.0f %15.0f %13s %12.0f   %s\n", ms[m], f[1], f[2], bytes[order[i]], r, p, x(p / r), tt, big
            if (f[1] ~ /Imu|TFMessage/) t = t sprintf("%s%s %s %s %s (%s)", t == "" ? "" : "; ", ms[m], f[1], f[2], p / r >= 25 ? "met" : "MISSED", x(p / r))
        }
        print "\ntargets (information only), decode >= 25x rosbags: " t
    }
' "$TMP/rbag" "$TMP/rosbags"
