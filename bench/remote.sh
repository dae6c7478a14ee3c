#!/usr/bin/env bash
# Benchmark for bags read where they lie and for fleets (issue 16): rbag against its peers and
# floors, in one run, on loopback. See bench/README.md ("Remote").
#
#   bash bench/remote.sh
#
# Rows (medians of RUNS):
#   info      `rbag info --stats` of a generated ~1 GiB ROS 1 bag (bench_gen) and of its MCAP
#             conversion: local, over HTTP (bench/py/range_server.py, sendfile) and from S3
#             (moto). Printed: time, requests, bytes fetched and their share of the file.
#             Targets: bytes ≤ 1 % of the file; time ≤ 3 × local info + requests × round trip,
#             the round trip being the median time curl takes for a 1-byte ranged GET
#   read      a full sequential read of the ~1 GiB bag over HTTP: rbag.Reader(url).messages(raw=True)
#             with every payload's length taken, against curl -o /dev/null of the same object.
#             Printed as rbag's throughput over curl's. Target ≥ 0.8
#   dask      rbag.dask.read_topic over 8 bags of ~300 MB (local), the sum of one /imu/data
#             column: a distributed.LocalCluster of 2 workers of one thread against 1 worker of
#             one thread. Target ≥ 1.6 ×
#   catalog   `rbag catalog s3://bench/fleet/ -o catalog.parquet` of 200 small bags in moto.
#             Target ≥ 50 bags/s
#
# Environment:
#   RUNS=3  BIG_SECONDS=34 (≈1 GiB)  DASK_SECONDS=10 (≈300 MB each)  CATALOG_BAGS=200
#   ONLY=info,read,dask,catalog  SCRATCH_PARENT=/work (a real disk)  SKIP_BUILD=1
#
# The release wheel replaces the dev wheel in .peers/venv; scripts/test-python.sh puts the dev
# one back. Timings are reported, never asserted.
set -euo pipefail
BENCH=remote
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$ROOT/bench
RUNS=${RUNS:-3}
BIG_SECONDS=${BIG_SECONDS:-34}
DASK_SECONDS=${DASK_SECONDS:-10}
CATALOG_BAGS=${CATALOG_BAGS:-200}
ONLY=${ONLY:-info,read,dask,catalog}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
VENV=$ROOT/.peers/venv
VENV_PY=$VENV/bin/python
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}/release
RBAG=$TARGET/rbag
GEN=$TARGET/examples/bench_gen
# shellcheck source=bench/lib.sh
source "$HERE/lib.sh"

want() { [[ ,$ONLY, == *,$1,* ]]; }
[[ -x $VENV/bin/moto_server ]] || die "moto missing: run 'bash scripts/setup-peers.sh' first"
command -v curl >/dev/null || die "curl is missing"
if want dask; then
    "$VENV_PY" -c 'import dask.dataframe, distributed' 2>/dev/null || die "Dask missing: run 'bash scripts/setup-peers.sh' first"
fi

if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building rbag, bench_gen and the release wheel"
    (cd "$ROOT" && cargo build --release -q -p rbag && cargo build --release -q -p rbag-storage --example bench_gen) >&2
    WHEELS=$(mktemp -d)
    (cd "$ROOT" && PATH="$VENV/bin:$PATH" maturin build --release -q -m crates/rbag-py/Cargo.toml -o "$WHEELS") >&2
    "$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$WHEELS"/*.whl
    rm -rf "$WHEELS"
fi
scratch_dir

free_port() { "$VENV_PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null; rm -rf "$TMP"' EXIT

HTTP_PORT=$(free_port)
"$VENV_PY" "$HERE/py/range_server.py" "$TMP" "$HTTP_PORT" &
PIDS+=($!)
HTTP=http://127.0.0.1:$HTTP_PORT
S3_PORT=$(free_port)
"$VENV/bin/moto_server" -H 127.0.0.1 -p "$S3_PORT" >/dev/null 2>&1 &
PIDS+=($!)
export AWS_ENDPOINT_URL=http://127.0.0.1:$S3_PORT AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=bench \
    AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
for _ in $(seq 100); do curl -sf "$AWS_ENDPOINT_URL/moto-api/" >/dev/null && break; sleep 0.1; done
# moto checks no signature, but wants one to be present.
AUTH='Authorization: AWS4-HMAC-SHA256 Credential=bench/20240101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0'
# -T streams the file (--data-binary would hold it in memory).
s3_put() { curl -sf -X PUT -H "$AUTH" -H 'Content-Type: application/octet-stream' ${2:+-T "$2"} "$AWS_ENDPOINT_URL/$1" >/dev/null; }
s3_put bench

# time_of CMD...: seconds one run takes (output discarded).
time_of() { local t0; t0=$(now_ns); "$@" >/dev/null 2>&1; awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { print (b - a) / 1e9 }'; }
# med_of N CMD...: the median of N runs of CMD.
med_of() {
    local n=$1 f=$S/med.$RANDOM
    shift
    : >"$f"
    for _ in $(seq "$n"); do time_of "$@" >>"$f"; done
    median "$f"
}

if want info || want read; then
    say "== generating a ~1 GiB ROS 1 bag ($BIG_SECONDS s) and its MCAP conversion"
    "$GEN" "$TMP/big.bag" --seconds "$BIG_SECONDS" >/dev/null
    "$RBAG" convert "$TMP/big.bag" -o "$TMP/big.mcap" >/dev/null 2>&1
    s3_put bench/big.bag "$TMP/big.bag"
    s3_put bench/big.mcap "$TMP/big.mcap"
fi

if want info; then
    # The round trip of each server: the median time curl takes for a 1-byte ranged GET of the
    # same object (moto's grows with the object's size: it reads it to serve a range).
    rtt_of() { for _ in $(seq 11); do curl -s -o /dev/null -r 0-0 -H "$AUTH" -w '%{time_total}\n' "$1"; done | sort -g | sed -n 6p; }
    printf '\ninfo (bound = 3 x local + requests x round trip; round trip = curl 1-byte ranged GET)\n'
    printf '%-6s %-6s %10s %9s %12s %8s %10s %10s %s\n' file where time requests bytes share rtt bound verdict
    for f in big.bag big.mcap; do
        size=$(stat -c %s "$TMP/$f")
        local_t=$(med_of "$RUNS" "$RBAG" info "$TMP/$f")
        printf '%-6s %-6s %10s\n' "${f#big.}" local "$(fmt "$local_t")"
        for where in http s3; do
            url=$([[ $where == http ]] && echo "$HTTP/$f" || echo "s3://bench/$f")
            RTT=$(rtt_of "$([[ $where == http ]] && echo "$HTTP/$f" || echo "$AWS_ENDPOINT_URL/bench/$f")")
            t=$(med_of "$RUNS" "$RBAG" info "$url")
            stats=$("$RBAG" --stats info "$url" 2>&1 >/dev/null | sed -n 's/^stats: \([0-9]*\) remote request(s), \([0-9]*\) byte(s) fetched/\1 \2/p')
            read -r req bytes <<<"$stats"
            bound=$(awk -v l="$local_t" -v r="$req" -v rtt="$RTT" 'BEGIN { print 3 * l + r * rtt }')
            share=$(awk -v b="$bytes" -v s="$size" 'BEGIN { printf "%.3f%%", 100 * b / s }')
            ok=$(awk -v t="$t" -v bd="$bound" -v b="$bytes" -v s="$size" 'BEGIN { print (t <= bd && b * 100 <= s) ? "met" : "MISSED" }')
            printf '%-6s %-6s %10s %9s %12s %8s %10s %10s %s\n' "${f#big.}" "$where" "$(fmt "$t")" "$req" "$bytes" "$share" "$(fmt "$RTT")" "$(fmt "$bound")" "$ok"
        done
    done
fi

if want read; then
    size=$(stat -c %s "$TMP/big.bag")
    curl_t=$(med_of "$RUNS" curl -sf -o /dev/null "$HTTP/big.bag")
    read_py="import rbag, sys; n = sum(len(m.data) for m in rbag.Reader(sys.argv[1]).messages(raw=True)); assert n > 0"
    rbag_t=$(med_of "$RUNS" "$VENV_PY" -c "$read_py" "$HTTP/big.bag")
    local_t=$(med_of "$RUNS" "$VENV_PY" -c "$read_py" "$TMP/big.bag")
    r=$(ratio "$curl_t" "$rbag_t")
    printf '\nread (%s MB over HTTP)\n' "$((size / 1000000))"
    printf '  curl -o /dev/null   %10s  %5s MB/s\n' "$(fmt "$curl_t")" "$(mbps "$size" "$curl_t")"
    printf '  rbag raw messages   %10s  %5s MB/s\n' "$(fmt "$rbag_t")" "$(mbps "$size" "$rbag_t")"
    printf '  (the same read of the local file, page cache warm: %s, %s MB/s)\n' "$(fmt "$local_t")" "$(mbps "$size" "$local_t")"
    printf '  rbag/curl throughput %s (target >= 0.8: %s)\n' "$r" "$(verdict "$r" 0.8)"
fi

if want dask; then
    say "== generating 8 bags of ~300 MB ($DASK_SECONDS s each)"
    mkdir -p "$TMP/dask"
    for i in $(seq 0 7); do "$GEN" "$TMP/dask/run$i.bag" --seconds "$DASK_SECONDS" >/dev/null; done
    # Prints the compute's seconds (the cluster's start-up and the plan are not timed), RUNS
    # times on one cluster, after a warm-up compute that imports rbag on the workers.
    dask_py='
import sys, glob, time
import rbag.dask
from distributed import Client, LocalCluster
workers, runs = int(sys.argv[1]), int(sys.argv[3])
paths = sorted(glob.glob(sys.argv[2] + "/*.bag"))
with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as c, Client(c):
    read = lambda k: rbag.dask.read_topic(paths, "/imu/data", ["linear_acceleration.x"], target_bytes=(8 << 20) + k)
    read(0)["linear_acceleration.x"].sum().compute()
    for k in range(1, runs + 1):
        # A plan of its own each time (target_bytes differs by k bytes): new task keys, so
        # that nothing computed before is reused.
        df = read(k)
        t0 = time.perf_counter()
        df["linear_acceleration.x"].sum().compute()
        print(time.perf_counter() - t0)
'
    "$VENV_PY" -c "$dask_py" 1 "$TMP/dask" "$RUNS" >"$S/dask1" 2>/dev/null
    "$VENV_PY" -c "$dask_py" 2 "$TMP/dask" "$RUNS" >"$S/dask2" 2>/dev/null
    one=$(median "$S/dask1")
    two=$(median "$S/dask2")
    r=$(ratio "$one" "$two")
    printf '\ndask (8 bags, /imu/data, LocalCluster; the compute only, medians of %s)\n' "$RUNS"

    printf '  1 worker  %10s\n  2 workers %10s\n  speed-up %s (target >= 1.6: %s)\n' "$(fmt "$one")" "$(fmt "$two")" "$r" "$(verdict "$r" 1.6)"
fi

if want catalog; then
    say "== uploading $CATALOG_BAGS small bags to s3://bench/fleet/"
    "$GEN" "$TMP/small.bag" --seconds 1 --rates 100,100,0 >/dev/null
    for i in $(seq 1 "$CATALOG_BAGS"); do s3_put "bench/fleet/run$i.bag" "$TMP/small.bag"; done
    fresh_catalog() { rm -f "$TMP/catalog.parquet"; "$RBAG" catalog s3://bench/fleet/ -o "$TMP/catalog.parquet"; }
    t=$(med_of "$RUNS" fresh_catalog)
    again=$(med_of "$RUNS" "$RBAG" catalog s3://bench/fleet/ -o "$TMP/catalog.parquet")
    rate=$(awk -v n="$CATALOG_BAGS" -v t="$t" 'BEGIN { printf "%.0f", n / t }')
    printf '\ncatalog (%s bags in moto)\n  first run %s, %s bags/s (target >= 50: %s)\n  rerun, nothing changed: %s\n' \
        "$CATALOG_BAGS" "$(fmt "$t")" "$rate" "$(verdict "$rate" 50)" "$(fmt "$again")"
fi
