#!/usr/bin/env bash
# Message decoding benchmark: rbag_msg::decode against rosbags' deserialize_cdr /
# deserialize_ros1 on the same bytes (sensor_msgs/Imu, tf2_msgs/TFMessage, sensor_msgs/PointCloud2
# with 64k points, sensor_msgs/Image 640x480 rgb8; CDR and ROS 1), with a memcpy of every payload
# as the floor for the large ones. See bench/README.md ("Message decoding").
#
#   bash bench/decode.sh
#
# Environment:
#   PASSES=3          passes, each running rbag then rosbags (interleaved, so that a burst of load
#                     on the shared machine hits both tools); the median of the passes is reported
#   ROUNDS=7          timed rounds per payload in each pass (each tool prints their median)
#   RBAG_ROUND_MS=50  length of one rbag round; PY_ROUND_MS=200 of one rosbags round
#   SKIP_BUILD=1      use the bench_decode example already in target/release/examples
#
# Both tools decode every payload once and check field values before timing (rbag also checks that
# re-encoding gives the same bytes); timings are reported, never asserted.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PASSES=${PASSES:-3}
ROUNDS=${ROUNDS:-7}
RBAG_ROUND_MS=${RBAG_ROUND_MS:-50}
PY_ROUND_MS=${PY_ROUND_MS:-200}
VENV_PY=$ROOT/.peers/venv/bin/python
EX=${CARGO_TARGET_DIR:-$ROOT/target}/release/examples

say() { printf '%s\n' "$*" >&2; }
die() { say "decode.sh: $*"; exit 1; }

[[ -x $VENV_PY ]] && "$VENV_PY" -c 'import rosbags.typesys, numpy' 2>/dev/null \
    || die "peers missing: run 'bash $ROOT/scripts/setup-peers.sh' first"
PEER=$("$VENV_PY" -c 'from importlib.metadata import version; print("rosbags", version("rosbags"))')
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -p rbag-msg --example bench_decode) >&2
fi
[[ -x $EX/bench_decode ]] || die "missing $EX/bench_decode"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
say "== generating payloads with $PEER in $TMP"
"$VENV_PY" "$ROOT/bench/decode_gen.py" "$TMP"
for i in $(seq 1 "$PASSES"); do
    say "== pass $i/$PASSES (load $(cut -d' ' -f1 /proc/loadavg)): rbag, then $PEER; $ROUNDS rounds of ~$RBAG_ROUND_MS / ~$PY_ROUND_MS ms per payload"
    "$EX/bench_decode" "$TMP/manifest" "$ROUNDS" "$RBAG_ROUND_MS" | tee -a "$TMP/rbag" >&2
    "$VENV_PY" "$ROOT/bench/decode_rosbags.py" "$TMP/manifest" "$ROUNDS" "$PY_ROUND_MS" | tee -a "$TMP/rosbags" >&2
done

echo "message decoding: rbag_msg::decode vs $PEER (deserialize_cdr / deserialize_ros1 of bytes), the same payloads"
echo "$(nproc) cores, load average before: $LOAD0, after: $(cut -d' ' -f1-3 /proc/loadavg); ns/msg: median of $PASSES passes of $ROUNDS rounds"
echo
# Medians of the passes per LABEL ENC, then one row per payload in the manifest's order.
awk '
    function get(line, key) { return match(line, " " key "=[^ ]*") ? substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 2) : "" }
    function add(a, k, v) { a[k] = a[k] " " v }
    function med(s,   v, n, i, j, t) {
        n = split(s, v, " ")
        for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
        return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    }
    function x(r) { return sprintf(r >= 100 ? "%.0fx" : r >= 10 ? "%.1fx" : "%.2fx", r) }
    FILENAME ~ /rbag$/ { k = $1 " " $2; add(rd, k, get($0, "decode_ns")); add(mc, k, get($0, "memcpy_ns")); next }
    { k = $1 " " $2; add(pd, k, get($0, "decode_ns")); if (!(k in bytes)) { order[++n] = k; bytes[k] = get($0, "bytes") } }
    END {
        printf "%-24s %-4s %9s %12s %15s %13s   %s\n", "type", "enc", "bytes", "rbag ns/msg", "rosbags ns/msg", "rosbags/rbag", "rbag decode / memcpy"
        for (i = 1; i <= n; i++) {
            k = order[i]; split(k, f, " "); r = med(rd[k]); p = med(pd[k]); c = med(mc[k])
            big = f[1] ~ /Image|PointCloud2/ ? sprintf("%.4f (memcpy %.0f ns)", r / c, c) : ""
            printf "%-24s %-4s %9d %12.0f %15.0f %13s   %s\n", f[1], f[2], bytes[k], r, p, x(p / r), big
            if (f[1] ~ /Imu|TFMessage/) t = t sprintf("%s%s %s %s (%s)", t == "" ? "" : "; ", f[1], f[2], p / r >= 20 ? "met" : "MISSED", x(p / r))
        }
        print "\ntargets (information only), decode >= 20x rosbags: " t
    }
' "$TMP/rbag" "$TMP/rosbags"
