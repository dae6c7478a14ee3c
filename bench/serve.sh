#!/usr/bin/env bash
# `rbag serve` against a minimal server on the pip `foxglove-sdk` (bench/serve_sdk.py), in the
# same run: sustained messages/s to one client, Foxglove's npm `@foxglove/ws-protocol`
# (tests/web/serve_client.mjs in bench mode), on loopback. See bench/README.md ("serve.sh").
#
#   bash bench/serve.sh
#
# Environment:
#   RUNS=3           rounds; each runs both servers once, interleaved (medians reported)
#   N=300000         messages in the generated MCAP file (bench/serve_gen.py, mcap library)
#   SIZE=64          bytes per message (CDR std_msgs/msg/String)
#   TOPICS=10        topics, round robin
#   SCRATCH_PARENT   where the scratch directory goes (default: the repository's parent; not tmpfs)
#   SKIP_BUILD=1     use target/release/rbag as built
#
# Both servers send every message of the same file as fast as they can once the client has
# subscribed to every channel (rbag: --rate 1e9; the SDK script: a loop of Channel.log over
# messages read into memory beforehand, so its rate excludes reading and rbag's includes it).
# Neither drops here (rbag's 64 MiB queue and the SDK backlog, set to the message count, hold
# the whole file). The client counts messages until it has all N; the rate is N over the time
# from its first message to its last. Rates are reported, never asserted: the script fails
# only if a server errors or a client does not get all N messages.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH=serve
RUNS=${RUNS:-3}
N=${N:-300000}
SIZE=${SIZE:-64}
TOPICS=${TOPICS:-10}
SCRATCH_PARENT=${SCRATCH_PARENT:-$(dirname "$ROOT")}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
RBAG=$TARGET/release/rbag
VPY=$ROOT/.peers/venv/bin/python
CLIENT=$ROOT/crates/rbag/tests/web/serve_client.mjs
export RBAG_WEB_MODULES=$ROOT/.peers/web/node_modules
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"

command -v node >/dev/null || die "node is missing: run 'bash $ROOT/scripts/setup-peers.sh' first"
[[ -d $RBAG_WEB_MODULES/@foxglove/ws-protocol ]] || die "$RBAG_WEB_MODULES/@foxglove/ws-protocol is missing: run scripts/setup-peers.sh"
"$VPY" -c 'import foxglove, mcap' 2>/dev/null || die "foxglove-sdk or mcap missing in $VPY: run scripts/setup-peers.sh"
if [[ ${SKIP_BUILD:-0} != 1 ]]; then
    say "== building (release)"
    (cd "$ROOT" && cargo build --release -q -p rbag) >&2
fi
[[ -x $RBAG ]] || die "missing $RBAG (cargo build --release -p rbag)"

mkdir -p "$SCRATCH_PARENT"
scratch_dir
MCAP=$TMP/serve.mcap
say "== generating $MCAP ($N messages of $SIZE B on $TOPICS topics)"
"$VPY" "$ROOT/bench/serve_gen.py" "$MCAP" "$N" "$SIZE" "$TOPICS"
cat "$MCAP" >/dev/null
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

PID=
# stop_server: SIGTERM to the server, and its exit status waited for (rbag serve exits 0).
stop_server() {
    if [[ -n $PID ]]; then
        kill "$PID" 2>/dev/null || true
        wait "$PID" 2>/dev/null || true
    fi
    PID=
}
trap 'stop_server; rm -rf "$TMP"' EXIT

# cpu_ticks PID: user + system CPU of PID so far, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# run NAME CMD...: starts the server CMD (it prints "...: ws://127.0.0.1:PORT" on stderr), runs
# the client against it and appends the rate to $S/NAME.rate.
run() {
    local name=$1
    shift
    "$@" 2>"$S/$name.err" &
    PID=$!
    local port= i
    for i in $(seq 1 300); do
        port=$(sed -n 's/.*ws:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$S/$name.err" | head -1)
        [[ -n $port ]] && break
        kill -0 "$PID" 2>/dev/null || die "$name exited: $(cat "$S/$name.err")"
        sleep 0.1
    done
    [[ -n $port ]] || die "$name printed no address: $(cat "$S/$name.err")"
    local cpu0 cpu1
    cpu0=$(cpu_ticks "$PID")
    node "$CLIENT" bench "ws://127.0.0.1:$port" --proto foxglove.sdk.v1 --expect "$N" --timeout 300 >"$S/$name.json"
    cpu1=$(cpu_ticks "$PID")
    # Server CPU (user + sys, all threads) per message while it served the client, in µs.
    awk -v a="$cpu0" -v b="$cpu1" -v n="$N" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.2f\n", (b - a) / hz / n * 1e6 }' >>"$S/$name.cpu"
    stop_server
    local got rate
    got=$("$VPY" -c 'import json, sys; print(json.load(open(sys.argv[1])).get("count") or 0)' "$S/$name.json")
    [[ $got == "$N" ]] || die "$name: the client got $got of $N messages: $(cat "$S/$name.json" | head -c 400)"
    rate=$("$VPY" -c 'import json, sys; print(round(json.load(open(sys.argv[1]))["rate"]))' "$S/$name.json")
    echo "$rate" >>"$S/$name.rate"
    [[ ${VERBOSE:-0} == 1 ]] && say "   $name: $rate msg/s, server CPU $(tail -1 "$S/$name.cpu") µs/msg"
    return 0
}

for r in $(seq 1 "$RUNS"); do
    say "== round $r/$RUNS"
    run rbag "$RBAG" serve "$MCAP" --port 0 --rate 1e9
    run sdk "$VPY" "$ROOT/bench/serve_sdk.py" "$MCAP"
done

RB=$(median "$S/rbag.rate")
SDK=$(median "$S/sdk.rate")
cat <<EOF
serve.sh: $N messages of $SIZE B on $TOPICS topics, one @foxglove/ws-protocol client (node $(node --version)), loopback
  machine: $(nproc) cores, load at start $LOAD0; scratch on $FSTYPE ($DEV)
  $("$RBAG" --version | head -1); foxglove-sdk $("$VPY" -c 'import importlib.metadata as m; print(m.version("foxglove-sdk"))')
  rbag serve:      $RB msg/s   (median of $RUNS: $(paste -sd' ' "$S/rbag.rate"))
  foxglove-sdk:    $SDK msg/s   (median of $RUNS: $(paste -sd' ' "$S/sdk.rate"))
  ratio rbag/sdk:  $(ratio "$RB" "$SDK")
  server CPU per message (user + sys, while serving; median): rbag $(median "$S/rbag.cpu") µs, foxglove-sdk $(median "$S/sdk.cpu") µs
EOF
