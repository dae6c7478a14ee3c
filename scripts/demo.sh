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

rm -f "$out"/sample.bag "$out"/sample_lz4.bag "$out"/chatter.bag "$out"/crashed.bag "$out"/crashed.bag.active
step target/release/examples/write_sample "$out/sample.bag" 10
step "$rbag" info "$out/sample.bag"
step "$rbag" convert "$out/sample.bag" -o "$out/sample_lz4.bag" --compression lz4
step "$rbag" info "$out/sample_lz4.bag"
step "$rbag" convert "$out/sample_lz4.bag" -o "$out/chatter.bag" --topics /chatter --start 1700000002 --end 1700000004
step "$rbag" info --json "$out/chatter.bag"
# A bag cut short: its index at the end is gone.
head -c -1000 "$out/sample.bag" > "$out/crashed.bag.active"
printf "\n$ # the bag cut 1000 bytes short (an interrupted copy, a full disk)\n"
step "$rbag" info "$out/crashed.bag.active" || true
step "$rbag" reindex "$out/crashed.bag.active" || [ $? -eq 3 ]
step "$rbag" info "$out/crashed.bag"
