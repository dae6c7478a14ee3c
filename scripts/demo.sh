#!/usr/bin/env bash
# The main job on data rbag makes itself: build, write sample bags with rbag's own writers
# (ROS 1 and rosbag2), inspect them, convert between ROS 1, MCAP and SQLite3, split and
# compress, simulate recorder crashes and repair them, decode messages and convert ROS 1 ⇄ ROS 2. Needs no ROS and no
# committed bags. Output goes to ./demo-out (or $1).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-demo-out}"
mkdir -p "$out"
bash scripts/setup-build.sh
cargo build --release --quiet -p rbag --bin rbag --example write_sample 2>/dev/null || cargo build --release -p rbag --bin rbag --example write_sample
rbag=target/release/rbag

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }

rm -rf "$out"/*.bag "$out"/*.bag.active "$out"/*.mcap "$out"/*.db3 "$out"/ros2_*
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

# rosbag2: an MCAP directory of CDR messages, converted to a split SQLite3 bag and back.
step target/release/examples/write_sample "$out/ros2_sample" 10
step "$rbag" info "$out/ros2_sample"
step "$rbag" convert "$out/ros2_sample" -o "$out/ros2_split" -s sqlite3 --max-bag-duration 4 --compression-mode message
step "$rbag" info "$out/ros2_split"
step "$rbag" convert "$out/ros2_split" -o "$out/ros2_chatter.mcap" --topics /chatter --compression zstd
step "$rbag" info --json "$out/ros2_chatter.mcap"
# ROS 1 data kept as it is in MCAP (profile ros1); metadata.yaml rebuilt from the files.
step "$rbag" convert "$out/sample.bag" -o "$out/sample_ros1.mcap" --encoding ros1
step "$rbag" info "$out/sample_ros1.mcap"
rm "$out/ros2_split/metadata.yaml"
printf '\n$ rm %s/ros2_split/metadata.yaml\n' "$out"
step "$rbag" reindex "$out/ros2_split"

# Messages decoded with no ROS installed: YAML as rostopic echo prints it, NDJSON, CSV with a
# field path. Types come from the bag's definitions (or --msg-path, or the bundled store).
step "$rbag" echo "$out/sample.bag" /point -n 2
step "$rbag" echo "$out/sample.bag" /chatter /speed --json -n 4
step "$rbag" echo "$out/ros2_sample" /point.x --csv -n 3
# ROS 1 → ROS 2: messages re-encoded as CDR, types renamed (std_msgs/msg/String), ROS 2
# definitions and RIHS01 hashes written, the latched topic made transient-local; and back.
step "$rbag" convert "$out/sample.bag" -o "$out/ros2_from_ros1" -s sqlite3
step "$rbag" info "$out/ros2_from_ros1"
step "$rbag" convert "$out/ros2_from_ros1" -o "$out/back.bag"
step "$rbag" echo "$out/back.bag" /robot_description
step "$rbag" list

# Live ROS 1 with no ROS installed: rbag record starts an embedded master (none runs on this
# private port), rbag play publishes sample.bag into it over TCPROS, and SIGINT closes the
# recording into an indexed bag. The same commands join a real roscore.
export ROS_MASTER_URI="http://127.0.0.1:${RBAG_DEMO_MASTER_PORT:-11357}/" ROS_HOSTNAME=127.0.0.1
rm -f "$out"/recorded*.bag*
printf '\n\033[1m$ %s &\033[0m\n' "$rbag record --ros1 -a -o $out/recorded.bag -L 1"
"$rbag" record --ros1 -a -o "$out/recorded.bag" -L 1 &
rec=$!
trap 'kill -INT $rec 2>/dev/null || true' EXIT
sleep 2
step "$rbag" play --ros1 "$out/sample.bag" --wait-for-subscribers -r 5 --topics /chatter /point
sleep 1
printf '\n$ kill -INT %s   # Ctrl-C on the recorder\n' "$rec"
kill -INT "$rec"
wait "$rec"
trap - EXIT
step "$rbag" info "$out/recorded.bag"

# Live ROS 2 with no ROS 2 installed: rbag record joins DDS domain 97 on this host only
# (ROS_LOCALHOST_ONLY=1: loopback, unicast discovery), rbag play publishes the rosbag2 sample
# into it over DDS (Cyclone DDS, as rmw_cyclonedds), and SIGINT writes metadata.yaml. The same
# commands record and feed real ROS 2 nodes on that domain.
export ROS_LOCALHOST_ONLY=1 ROS_DOMAIN_ID="${RBAG_DEMO_DOMAIN:-97}"
unset CYCLONEDDS_URI
rm -rf "$out/ros2_recorded"
printf '\n\033[1m$ %s &\033[0m\n' "$rbag record --ros2 -a -o $out/ros2_recorded"
"$rbag" record --ros2 -a -o "$out/ros2_recorded" &
rec=$!
trap 'kill -INT $rec 2>/dev/null || true' EXIT
sleep 1
# -d 1: give the recorder a second to discover the new publishers and subscribe (ros2 bag
# play --delay), or their first messages go out before anyone listens.
step "$rbag" play --ros2 "$out/ros2_sample" -r 5 -d 1 --topics /chatter /point
sleep 1
printf '\n$ kill -INT %s   # Ctrl-C on the recorder\n' "$rec"
kill -INT "$rec"
wait "$rec"
trap - EXIT
step "$rbag" info "$out/ros2_recorded"
