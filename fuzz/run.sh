#!/usr/bin/env bash
# Runs one fuzz target: ./run.sh TARGET SECONDS [extra libFuzzer flags...]
# Seeds come from examples/make_seeds.rs, seeds/TARGET (small crafted files kept in git) and the
# real bags in $RBAG_BAGS (default ../shared/corpus/ros1 beside the repository); all land in
# corpus/TARGET, which git ignores.
# SANITIZER=none (default: address, through RUSTC_BOOTSTRAP=1 on a stable toolchain).
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?target: ros1_record, ros1_bag, mcap_file, rosbag2_metadata, msg_definition, cdr_decode, ros1_decode, xmlrpc_parse, tcpros_header, ros2_names_qos, filter_expr, options_yaml, doctor_file, image_decode or foxglove_client}
secs=${2:-600}
shift 2 || true
bags=${RBAG_BAGS:-$(pwd)/../../shared/corpus/ros1}
ros2=${RBAG_ROS2_BAGS:-$(pwd)/../../shared/corpus/ros2}
san=${SANITIZER:-address}
# SQLite's amalgamation (libsqlite3-sys 0.39) has two function-local `static const aiOff[]`
# arrays; ASan's ODR check takes them for one global defined twice and aborts at start-up.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_odr_violation=0}

mkdir -p corpus/"$target" artifacts/"$target"
cargo run --quiet --release --example make_seeds -- corpus >/dev/null
# Hand-crafted cases kept in git (seeds/README.md): undeclared connections, decompression bombs,
# repeated file lists.
if [ -d seeds/"$target" ]; then
    cp -f seeds/"$target"/* corpus/"$target"/
fi
dict=ros1.dict
if [ "$target" = mcap_file ]; then
    for b in "$ros2"/mcap/*/*.mcap; do
        [ -f "$b" ] && cp -f "$b" corpus/mcap_file/real-"$(basename "$b")"
    done
    maxlen=200000
    dict=mcap.dict
elif [ "$target" = rosbag2_metadata ]; then
    for m in "$ros2"/*/*/metadata.yaml; do
        [ -f "$m" ] && cp -f "$m" corpus/rosbag2_metadata/real-"$(basename "$(dirname "$m")")"-"$(basename "$(dirname "$(dirname "$m")")")".yaml
    done
    maxlen=16384
    dict=metadata.dict
elif [ "$target" = msg_definition ]; then
    for f in /usr/share/*/msg/*.msg; do
        [ -f "$f" ] && cp -f "$f" corpus/msg_definition/real-"$(basename "$(dirname "$(dirname "$f")")")"-"$(basename "$f")"
    done
    maxlen=16384
    dict=msg.dict
elif [ "$target" = cdr_decode ] || [ "$target" = ros1_decode ]; then
    # One message of every bundled type, and real messages of the corpus's bags.
    cargo run --quiet --release --example make_codec_seeds -- corpus "$(dirname "$bags")"
    maxlen=8192
    dict=codec.dict
elif [ "$target" = xmlrpc_parse ]; then
    # Bodies captured from real rospy/roscpp/rosmaster traffic.
    for f in ../crates/rbag-ros1/tests/fixtures/xmlrpc/*.xml; do
        [ -f "$f" ] && cp -f "$f" corpus/xmlrpc_parse/real-"$(basename "$f")"
    done
    maxlen=16384
    dict=xmlrpc.dict
elif [ "$target" = ros2_names_qos ]; then
    # Offered QoS of the corpus's rosbag2 bags, and names and user data as discovery sees them.
    for m in "$ros2"/*/*/metadata.yaml; do
        [ -f "$m" ] && cp -f "$m" corpus/ros2_names_qos/real-"$(basename "$(dirname "$m")")"-"$(basename "$(dirname "$(dirname "$m")")")".yaml
    done
    printf 'rt/chatter' > corpus/ros2_names_qos/topic
    printf 'std_msgs::msg::dds_::String_' > corpus/ros2_names_qos/type
    printf 'typehash=RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18;' > corpus/ros2_names_qos/userdata
    printf '/chatter:\n  reliability: best_effort\n  durability: transient_local\n  deadline:\n    sec: 1\n    nsec: 0\n' > corpus/ros2_names_qos/overrides.yaml
    # Control-service requests: encapsulation, rmw_cyclonedds' header, SetRate's float64 / Seek's Time.
    printf '\x00\x01\x00\x00\x07\x07\x07\x07\x07\x07\x07\x07\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x04\x40' > corpus/ros2_names_qos/set_rate
    printf '\x00\x01\x00\x00\x07\x07\x07\x07\x07\x07\x07\x07\x02\x00\x00\x00\x00\x00\x00\x00\x05\x00\x00\x00\x09\x00\x00\x00' > corpus/ros2_names_qos/seek
    # rmw_zenoh: tokens of its design doc, a transient-local QoS text, and both attachment forms.
    printf '@ros2_lv/0/8b20917502ee955ac4476e0266340d5c/0/10/MP/%%/%%/talker/%%chatter/std_msgs::msg::dds_::String_/RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18/::,7:,:,:,,' > corpus/ros2_names_qos/token_mp
    printf '@ros2_lv/0/aac3178e146ba6f1fc6e6a4085e77f21/0/0/NN/%%/%%/listener' > corpus/ros2_names_qos/token_nn
    printf ':1:,1:1,0:,:,,' > corpus/ros2_names_qos/qos_text
    printf '\x01\x00\x00\x00\x00\x00\x00\x00\x15\xcd\x5b\x07\x00\x00\x00\x00\x10\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07' > corpus/ros2_names_qos/attachment
    printf '\x0fsequence_number\x01\x00\x00\x00\x00\x00\x00\x00\x10source_timestamp\x15\xcd\x5b\x07\x00\x00\x00\x00\x0asource_gid\x10\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07\x07' > corpus/ros2_names_qos/attachment_keyed
    maxlen=16384
    dict=metadata.dict
elif [ "$target" = filter_expr ]; then
    # Expressions of docs/filter.md and more (seeds/filter_expr, copied above).
    maxlen=4096
    dict=expr.dict
elif [ "$target" = options_yaml ]; then
    # rosbag2's README examples and every key (seeds/options_yaml, copied above).
    maxlen=16384
    dict=options.dict
elif [ "$target" = doctor_file ]; then
    # The bags ros1_bag and mcap_file start from: generated, crafted and real, of both formats.
    cp -f corpus/ros1_bag/gen-* seeds/ros1_bag/* seeds/mcap_file/* corpus/doctor_file/
    for b in "$bags"/*.bag "$bags"/*.bag.active "$ros2"/mcap/*/*.mcap; do
        [ -f "$b" ] && cp -f "$b" corpus/doctor_file/real-"$(basename "$b")"
    done
    maxlen=200000
    cat ros1.dict mcap.dict > corpus/doctor_file.dict
    dict=corpus/doctor_file.dict
elif [ "$target" = tcpros_header ]; then
    # Connection headers and first frames: the bags' connection records hold the same fields.
    maxlen=16384
elif [ "$target" = image_decode ]; then
    # A 2x2 image of each encoding: sizes, step, encoding byte, endianness, then samples.
    for e in 0 1 2 3 4 5 9 10; do
        { printf '\002\000\000\000\002\000\000\000\020\000\000\000'; printf "\\$(printf '%03o' "$e")"; printf '\000'
          head -c 32 /dev/urandom; } > corpus/image_decode/enc"$e"
    done
    maxlen=65536
    dict=image.dict
elif [ "$target" = foxglove_client ]; then
    # One request of each kind the protocol has (first byte: 0 text, 1 binary, 2 HTTP head,
    # 3 query), as the npm client and Foxglove send them.
    printf '\000{"op":"subscribe","subscriptions":[{"id":1,"channelId":3}]}' > corpus/foxglove_client/subscribe
    printf '\000{"op":"unsubscribe","subscriptionIds":[1]}' > corpus/foxglove_client/unsubscribe
    printf '\000{"op":"getParameters","parameterNames":[],"id":"x"}' > corpus/foxglove_client/params
    printf '\001\003\000\000\000\000\000\200\077\001\000\000\000\000\000\000\000\002\000\000\000ab' > corpus/foxglove_client/playback
    printf '\001\001\001\000\000\000\005\000\000\000hello' > corpus/foxglove_client/publish
    printf '\002GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: foxglove.sdk.v1\r\n\r\n' > corpus/foxglove_client/head
    printf '\003topic=%%2Fcamera%%2Fimage_raw&t=1795300125212825824&x=a+b' > corpus/foxglove_client/query
    maxlen=16384
    dict=foxglove.dict
elif [ "$target" = ros1_bag ]; then
    for b in "$bags"/*.bag "$bags"/*.bag.active; do
        [ -f "$b" ] && cp -f "$b" corpus/ros1_bag/real-"$(basename "$b")"
    done
    maxlen=200000
else
    # The first records of each real bag (bag header, connections, first chunk).
    for b in "$bags"/*.bag; do
        [ -f "$b" ] && head -c $((65536 + 13)) "$b" | tail -c +14 > corpus/ros1_record/real-"$(basename "$b")".bin
    done
    maxlen=65536
fi

export RUSTC_BOOTSTRAP=1
exec nice -n 10 cargo fuzz run -s "$san" "$target" corpus/"$target" -- \
    -dict="$dict" -max_len="$maxlen" -rss_limit_mb=2048 -timeout=10 \
    -max_total_time="$secs" -print_final_stats=1 "$@"
