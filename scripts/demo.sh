#!/usr/bin/env bash
# The main job on data rbag makes itself: build, write a sample bag with rbag's own writer,
# inspect it, convert it, simulate a recorder crash and repair it. Needs no ROS and no
# committed bags. Output goes to ./demo-out (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-demo-out}"
mkdir -p "$out"
cargo build --release --quiet -p rbag -p rbag-testkit --example write_sample 2>/dev/null || cargo build --release -p rbag --example write_sample
rbag=target/release/rbag

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

rm -f "$out"/*.bag "$out"/*.bag.active
step target/release/examples/write_sample "$out/sample.bag" 10
step "$rbag" info "$out/sample.bag"
step "$rbag" convert "$out/sample.bag" -o "$out/sample_lz4.bag" --compression lz4
step "$rbag" info "$out/sample_lz4.bag"
step "$rbag" convert "$out/sample_lz4.bag" -o "$out/chatter.bag" --topics /chatter --start 1700000002 --end 1700000004
step "$rbag" info --json "$out/chatter.bag"
# A recorder killed mid-write: no index at the end, and the last chunk torn.
step "$rbag" convert "$out/sample.bag" -o "$out/chunked.bag" --chunk-interval 1
size=$(stat -c %s "$out/chunked.bag")
head -c $((size * 6 / 10)) "$out/chunked.bag" > "$out/crashed.bag.active"
printf '\n$ # keep the first 60%% of chunked.bag as crashed.bag.active, as if its recorder had been killed\n'
step "$rbag" info "$out/crashed.bag.active" || true
step "$rbag" reindex "$out/crashed.bag.active" || [ $? -eq 3 ]
step "$rbag" info "$out/crashed.bag"
