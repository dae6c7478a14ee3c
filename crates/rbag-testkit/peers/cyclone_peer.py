"""A real ROS 2 wire peer for rbag's tests: Cyclone DDS's Python binding (11.0.1, the same
Cyclone that rmw_cyclonedds and rbag use), speaking ROS 2 topic and type names with no ROS 2
installed.

Run it with CYCLONEDDS_URI pointing at crates/rbag-testkit/cyclonedds-loopback.xml (the testkit's
CyclonePeer does) so nothing leaves the loopback interface.

    cyclone_peer.py pub --domain D --topic rt/chatter --type string|imu|blob|unknown|clock|log|image|tf
                        [--count N] [--rate HZ] [--reliable|--best-effort]
                        [--transient-local] [--depth K] [--start-delay S] [--linger S]
                        [--size BYTES] [--no-wait] [--match-timeout S] [--no-hex]
    cyclone_peer.py sub --domain D --topic rt/chatter --type string|imu|blob|unknown|clock|log|image|tf
                        [--count N] [--timeout S] [--reliable|--best-effort]
                        [--transient-local] [--depth K] [--no-hex]

    cyclone_peer.py call --domain D --service /rosbag2_player/set_rate --srv SetRate [--value V]
                        [--type-hash RIHS01_…] [--timeout S]
    cyclone_peer.py serve --domain D --service /test_service1 [--count N] [--timeout S]

`call` is `ros2 service call` as rmw_cyclonedds does it: request on rq/<service>Request with
the 16-byte request header (client id, sequence number) before the fields, the answer taken
from rr/<service>Reply by that header. --srv is one of rosbag2_interfaces' services below;
--value is SetRate's rate, Burst's count, Seek's time in seconds or Record's uri. With
--type-hash the client uses Lyrical's layout (return codes) and names that hash in its request
writer's user data (`typehash=…;`, as rmw_cyclonedds writes it).

Types (ROS 2 name -> DDS name):
    string   std_msgs/msg/String         std_msgs::msg::dds_::String_        data = "hello <i>"
    imu      sensor_msgs/msg/Imu         sensor_msgs::msg::dds_::Imu_        values derived from i
    blob     sensor_msgs/msg/CompressedImage  sensor_msgs::msg::dds_::CompressedImage_
             header.frame_id "blob", format "raw", data = --size bytes: i as u32 LE, then k % 251
    unknown  (no ROS definition)         rbag_test::msg::dds_::Mystery_      {int32 a = i; string b = "mystery <i>"}
    clock    rosgraph_msgs/msg/Clock     rosgraph_msgs::msg::dds_::Clock_    clock = {sec: i, nanosec: 0}
    log      rcl_interfaces/msg/Log      rcl_interfaces::msg::dds_::Log_     level 20, name "peer", msg "log <i>"
    image    sensor_msgs/msg/Image       sensor_msgs::msg::dds_::Image_      2x2 rgb8, data bytes 12*i + k
    tf       tf2_msgs/msg/TFMessage      tf2_msgs::msg::dds_::TFMessage_     one transform "map" -> "tf_<i>"
RECEIVED json is the sample's fields; for blob and image the data is summarised as data_len,
data_sha256 (and data_head for blob).

Output, one line each, flushed:
    pub: READY, MATCHED <n> (unless --no-wait), PUBLISHED <i> <hex of the serialized sample, with
         its 4-byte encapsulation header>, DONE, then it lingers and exits 0.
         NO_MATCH and exit 3 when no reader matched within --match-timeout.
    serve: (test_msgs/srv/BasicTypes) READY, MATCHED once a client's request writer matched,
         REQUEST <json of the request's fields> per request, DONE <n>; exit 0 when --count came.
    call: RESPONSE <json of the response fields>, exit 0; NO_SERVICE (exit 3) when the service
         was not found within --timeout, NO_RESPONSE (exit 4) when no answer came.
    sub: READY, MATCHED <n> once a writer matched, then per sample RECEIVED <json of the fields> and RECEIVED_HEX <hex of the sample
         serialized again>, then DONE <count>; exit 0 when --count samples arrived, else 2.
         A sample without data (an instance disposed or left without writers, as Cyclone
         reports when a writer is deleted) prints NOT_DATA <instance state> and is not counted.
    --no-hex prints `-` instead of the hex (for big or many samples).
QoS: reliable by default; history keep-all unless --depth K (keep-last K). A transient-local
writer also gets durability_service history keep-last K (Cyclone serves late joiners from it,
as rmw_cyclonedds sets it).

Actions (example_interfaces/action/Fibonacci, as rclcpp_action with service introspection
configured to CONTENTS on both sides, the way rosbag2 (Kilted+) records actions; research19
section 3, rosbag2_cpp action_utils.cpp):

    cyclone_peer.py action-server --domain D [--action /fibonacci] [--goals N] [--cancels N]
                        [--timeout S] [--period S] [--await-readers] [--linger S]
    cyclone_peer.py action-client --domain D [--action /fibonacci] [--order K] [--goals N]
                        [--cancel] [--timeout S] [--await-readers]

Wire, for the action /fibonacci (rmw_cyclonedds names, rosidl types):
    rq/fibonacci/_action/send_goalRequest    example_interfaces::action::dds_::Fibonacci_SendGoal_Request_
        16-byte request header (uint64 client id, int64 sequence number), then
        unique_identifier_msgs/UUID goal_id, Fibonacci_Goal goal (int32 order)
    rr/fibonacci/_action/send_goalReply      ..._SendGoal_Response_: header, bool accepted, Time stamp
    rq|rr/fibonacci/_action/get_result...    ..._GetResult_Request_ (goal_id) / _Response_
                                             (int8 status, Fibonacci_Result result: int32[] sequence)
    rq|rr/fibonacci/_action/cancel_goal...   action_msgs::srv::dds_::CancelGoal_Request_ (GoalInfo
                                             goal_info) / _Response_ (int8 return_code,
                                             GoalInfo[] goals_canceling)
    rt/fibonacci/_action/feedback            ..._FeedbackMessage_: goal_id, Fibonacci_Feedback
                                             feedback (int32[] sequence)
    rt/fibonacci/_action/status              action_msgs::msg::dds_::GoalStatusArray_, reliable,
                                             transient-local, keep-last 1 (rcl_action's status QoS)
    rt/fibonacci/_action/<svc>/_service_event  <Type>_Event_: service_msgs/ServiceEventInfo info
                                             (uint8 event_type, Time stamp, char[16] client_gid,
                                             int64 sequence_number), request (sequence<Request,1>,
                                             no header), response (sequence<Response,1>)
The server writes REQUEST_RECEIVED (1) when it takes a request and RESPONSE_SENT (2) with the
response; the client REQUEST_SENT (0) and RESPONSE_RECEIVED (3), each with the message it
concerns and the other sequence empty (rcl's service introspection). client_gid is the 8-byte
request-header client id (little endian) and 8 zero bytes on both sides, so that one call is
one (client_gid, sequence_number) pair to `ros2 bag info -v` (rmw_cyclonedds itself puts the
request writer's publication handle in the server side's second half, which makes real Cyclone
bags count each call twice; rmw_fastrtps and rmw_zenoh use one id on both sides).

action-server serves goals from any client (the header's client id and sequence number are
echoed, as rmw_cyclonedds does): it accepts every goal, publishes status ACCEPTED (1),
EXECUTING (2), then SUCCEEDED (4) (one GoalStatusArray of all its goals each time, as
rclcpp_action publishes on every state change), and feedback: the sequence starts [0, 1] and
one feedback message is published per step i = 1 .. order-1 (rclcpp's Fibonacci example), so
order K gives K-1 feedback messages and the result sequence has K+1 numbers. get_result is
answered once the goal ended (held until then), with status 4 and the sequence. cancel_goal for
a goal that ended answers return_code 3 (ERROR_GOAL_TERMINATED), an unknown goal 2
(ERROR_UNKNOWN_GOAL_ID), both with no goals_canceling. Output: READY, GOAL <uuid hex> <order>,
RESULT <uuid hex> <json sequence>, CANCEL <uuid hex> <return code>, DONE <goals>; it exits 0 after
--goals results were served and --cancels cancel requests answered (and a --linger), 2 on
--timeout.
action-client sends --goals goals of --order K one after the other: send_goal, then get_result
(as rclcpp_action's result-aware goal does), then with --cancel a cancel_goal for that finished
goal. Output: ACCEPTED <uuid hex>, FEEDBACK <json sequence> per feedback message of its goal,
RESULT <status> <json sequence>, CANCELED <return code>, DONE; exit 0, or NO_SERVER (3) /
NO_RESPONSE (4).
--await-readers (both): before writing on an event topic, wait (up to 10 s) for one matched
reader (a recorder); the server also waits for two readers on feedback and status (the client
and a recorder); and before DONE, for every matched reader to acknowledge what was written.
Tests use it so that a recorder that subscribed misses nothing.
"""
import argparse
import dataclasses
import json
import sys
import time
from dataclasses import dataclass

from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.idl import IdlStruct
from cyclonedds.internal import InvalidSample
import cyclonedds.idl.types as types
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class String_(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    data: str


@dataclass
class Time_(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: types.int32
    nanosec: types.uint32


@dataclass
class Header_(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time_
    frame_id: str


@dataclass
class Quaternion_(IdlStruct, typename="geometry_msgs::msg::dds_::Quaternion_"):
    x: types.float64
    y: types.float64
    z: types.float64
    w: types.float64


@dataclass
class Vector3_(IdlStruct, typename="geometry_msgs::msg::dds_::Vector3_"):
    x: types.float64
    y: types.float64
    z: types.float64


@dataclass
class Imu_(IdlStruct, typename="sensor_msgs::msg::dds_::Imu_"):
    header: Header_
    orientation: Quaternion_
    orientation_covariance: types.array[types.float64, 9]
    angular_velocity: Vector3_
    angular_velocity_covariance: types.array[types.float64, 9]
    linear_acceleration: Vector3_
    linear_acceleration_covariance: types.array[types.float64, 9]


@dataclass
class CompressedImage_(IdlStruct, typename="sensor_msgs::msg::dds_::CompressedImage_"):
    header: Header_
    format: str
    data: types.sequence[types.uint8]


@dataclass
class Mystery_(IdlStruct, typename="rbag_test::msg::dds_::Mystery_"):
    a: types.int32
    b: str


@dataclass
class Clock_(IdlStruct, typename="rosgraph_msgs::msg::dds_::Clock_"):
    clock: Time_


@dataclass
class Log_(IdlStruct, typename="rcl_interfaces::msg::dds_::Log_"):
    stamp: Time_
    level: types.uint8
    name: str
    msg: str
    file: str
    function: str
    line: types.uint32


@dataclass
class Image_(IdlStruct, typename="sensor_msgs::msg::dds_::Image_"):
    header: Header_
    height: types.uint32
    width: types.uint32
    encoding: str
    is_bigendian: types.uint8
    step: types.uint32
    data: types.sequence[types.uint8]


@dataclass
class Transform_(IdlStruct, typename="geometry_msgs::msg::dds_::Transform_"):
    translation: Vector3_
    rotation: Quaternion_


@dataclass
class TransformStamped_(IdlStruct, typename="geometry_msgs::msg::dds_::TransformStamped_"):
    header: Header_
    child_frame_id: str
    transform: Transform_


@dataclass
class TFMessage_(IdlStruct, typename="tf2_msgs::msg::dds_::TFMessage_"):
    transforms: types.sequence[TransformStamped_]


@dataclass
class WriteSplitEvent_(IdlStruct, typename="rosbag2_interfaces::msg::dds_::WriteSplitEvent_"):
    closed_file: str
    opened_file: str
    node_name: str


TYPES = {
    "write_split": WriteSplitEvent_,
    "string": String_,
    "imu": Imu_,
    "blob": CompressedImage_,
    "unknown": Mystery_,
    "clock": Clock_,
    "log": Log_,
    "image": Image_,
    "tf": TFMessage_,
}


def blob_bytes(i, size):
    pattern = bytes(k % 251 for k in range(min(size, 251 * 16)))
    reps = pattern * (size // len(pattern) + 1) if pattern else b""
    data = bytearray(reps[:size])
    data[: min(4, size)] = i.to_bytes(4, "little")[: min(4, size)]
    return bytes(data)


def make_sample(kind, i, size):
    if kind == "string":
        return String_(data=f"hello {i}")
    if kind == "imu":
        f = float(i)
        return Imu_(
            header=Header_(stamp=Time_(sec=1700000000 + i, nanosec=1000 * i), frame_id="imu_link"),
            orientation=Quaternion_(x=0.0, y=0.0, z=0.5, w=1.0 + f),
            orientation_covariance=[0.01 * k + f for k in range(9)],
            angular_velocity=Vector3_(x=0.1 * f, y=-0.2, z=0.3),
            angular_velocity_covariance=[0.02 * k for k in range(9)],
            linear_acceleration=Vector3_(x=0.0, y=0.0, z=9.81 + f),
            linear_acceleration_covariance=[-1.0 if k == 0 else 0.0 for k in range(9)],
        )
    if kind == "clock":
        return Clock_(clock=Time_(sec=i, nanosec=0))
    if kind == "write_split":
        return WriteSplitEvent_(closed_file=f"bag_{i}.mcap", opened_file=f"bag_{i + 1}.mcap", node_name="/peer")
    if kind == "log":
        return Log_(stamp=Time_(sec=1700000000 + i, nanosec=0), level=20, name="peer", msg=f"log {i}", file="cyclone_peer.py", function="run_pub", line=i)
    if kind == "image":
        return Image_(header=Header_(stamp=Time_(sec=i, nanosec=0), frame_id="camera"), height=2, width=2, encoding="rgb8", is_bigendian=0, step=6, data=bytes((12 * i + k) % 256 for k in range(12)))
    if kind == "tf":
        t = TransformStamped_(
            header=Header_(stamp=Time_(sec=i, nanosec=0), frame_id="map"),
            child_frame_id=f"tf_{i}",
            transform=Transform_(translation=Vector3_(x=float(i), y=0.0, z=0.0), rotation=Quaternion_(x=0.0, y=0.0, z=0.0, w=1.0)),
        )
        return TFMessage_(transforms=[t])
    if kind == "blob":
        return CompressedImage_(header=Header_(stamp=Time_(sec=i, nanosec=0), frame_id="blob"), format="raw", data=blob_bytes(i, size))
    return Mystery_(a=i, b=f"mystery {i}")


def summary(kind, sample):
    if kind == "blob":
        import hashlib

        d = bytes(sample.data)
        return {"header": dataclasses.asdict(sample.header), "format": sample.format, "data_len": len(d), "data_head": d[:8].hex(), "data_sha256": hashlib.sha256(d).hexdigest()}
    if kind == "image":
        import hashlib

        out = dataclasses.asdict(sample)
        d = bytes(out.pop("data"))
        out["data_len"] = len(d)
        out["data_sha256"] = hashlib.sha256(d).hexdigest()
        return out
    return dataclasses.asdict(sample)


def qos(args, writer):
    policies = [
        Policy.Reliability.BestEffort if args.best_effort else Policy.Reliability.Reliable(duration(seconds=10)),
        Policy.Durability.TransientLocal if args.transient_local else Policy.Durability.Volatile,
        Policy.History.KeepLast(args.depth) if args.depth else Policy.History.KeepAll,
    ]
    if not writer and args.max_samples > 0:
        policies.append(Policy.ResourceLimits(args.max_samples, -1, -1))
    if writer and args.transient_local:
        history = Policy.History.KeepLast(args.depth) if args.depth else Policy.History.KeepAll
        policies.append(Policy.DurabilityService(0, history, -1, -1, -1))
    return Qos(*policies)


def say(*parts):
    print(*parts, flush=True)


def hexof(args, sample):
    return "-" if args.no_hex else sample.serialize().hex()


def wait_matched(getter, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        n = getter().current_count
        if n > 0:
            return n
        time.sleep(0.005)
    return 0


def run_pub(args):
    if args.start_delay > 0:
        time.sleep(args.start_delay)
    dp = DomainParticipant(args.domain)
    kind = args.type
    topic = Topic(dp, args.topic, TYPES[kind])
    w = DataWriter(dp, topic, qos=qos(args, writer=True))
    samples = [make_sample(kind, i, args.size) for i in range(args.count)]
    say("READY")
    if not args.no_wait:
        n = wait_matched(w.get_publication_matched_status, args.match_timeout)
        if n == 0:
            say("NO_MATCH")
            return 3
        say(f"MATCHED {n}")
    period = 1.0 / args.rate if args.rate > 0 else 0.0
    next_t = time.monotonic()
    for i, s in enumerate(samples):
        w.write(s)
        say(f"PUBLISHED {i} {hexof(args, s)}")
        if period:
            next_t += period
            pause = next_t - time.monotonic()
            if pause > 0:
                time.sleep(pause)
    if not args.best_effort and not args.no_wait:
        try:
            w.wait_for_acks(duration(seconds=30))
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            say(f"ACKS_FAILED {e}")
    say("DONE")
    if args.linger > 0:
        time.sleep(args.linger)
    return 0


def run_sub(args):
    dp = DomainParticipant(args.domain)
    kind = args.type
    topic = Topic(dp, args.topic, TYPES[kind])
    r = DataReader(dp, topic, qos=qos(args, writer=False))
    say("READY")
    got = 0
    matched = False
    end = time.monotonic() + args.timeout
    while got < args.count and time.monotonic() < end:
        if not matched:
            n = r.get_subscription_matched_status().current_count
            if n > 0:
                matched = True
                say(f"MATCHED {n}")
        for s in r.take(N=1 if args.take_delay > 0 else 64):
            if isinstance(s, InvalidSample):
                # An instance state change (a writer disposed or left), not data: a ROS 2
                # subscription never sees these.
                say(f"NOT_DATA {int(s.sample_info.instance_state)}")
                continue
            say(f"RECEIVED {json.dumps(summary(kind, s))}")
            say(f"RECEIVED_HEX {hexof(args, s)}")
            got += 1
        time.sleep(args.take_delay if args.take_delay > 0 else 0.002)
    say(f"DONE {got}")
    return 0 if got >= args.count else 2


# test_msgs/srv/BasicTypes' request (and response) fields, for the `serve` side.
BASIC_TYPES = [
    ("bool_value", bool), ("byte_value", types.byte), ("char_value", types.uint8), ("float32_value", types.float32), ("float64_value", types.float64),
    ("int8_value", types.int8), ("uint8_value", types.uint8), ("int16_value", types.int16), ("uint16_value", types.uint16), ("int32_value", types.int32),
    ("uint32_value", types.uint32), ("int64_value", types.int64), ("uint64_value", types.uint64), ("string_value", str),
]

# rosbag2_interfaces services: request fields, response fields. A message without fields
# has rosidl's `uint8 structure_needs_at_least_one_member`.
EMPTY = [("structure_needs_at_least_one_member", types.uint8)]
CODE = [("return_code", types.int32), ("error_string", str)]


@dataclass
class Duration_(IdlStruct, typename="builtin_interfaces::msg::dds_::Duration_"):
    sec: types.int32
    nanosec: types.uint32

SERVICES = {
    "Pause": (EMPTY, EMPTY),
    "Resume": (EMPTY, EMPTY),
    "TogglePaused": (EMPTY, EMPTY),
    "IsPaused": (EMPTY, [("paused", bool)]),
    "GetRate": (EMPTY, [("rate", types.float64)]),
    "SetRate": ([("rate", types.float64)], [("success", bool)]),
    "PlayNext": (EMPTY, [("success", bool)]),
    "Seek": ([("time", Time_)], [("success", bool)]),
    "Burst": ([("num_messages", types.uint64)], [("actually_burst", types.uint64)]),
    "Snapshot": (EMPTY, [("success", bool)]),
    "SplitBagfile": (EMPTY, EMPTY),
    "Play": ([("start_offset", Time_), ("playback_duration", Duration_), ("playback_until_timestamp", Time_)],
             [("success", bool)]),
    "Stop": (EMPTY, EMPTY),
    # Jazzy 0.26.10's recorder services (rosbag2_interfaces, backport of #2248).
    "Record": ([("uri", str)], CODE),
    "StartDiscovery": (EMPTY, CODE),
    "StopDiscovery": (EMPTY, CODE),
    "IsDiscoveryRunning": (EMPTY, [("running", bool)]),
}

# Lyrical's layouts where they differ (rosbag2_interfaces 0.33.3: #2312, #2330, #2357); a client
# built with them names their type hash in its endpoints' user data, as rmw_cyclonedds does.
LYRICAL = {
    "Stop": (EMPTY, CODE),
    "Resume": ([("resume_time", Time_), ("resume_mode", types.int32), ("tracking_topic_name", str)], CODE),
    "SplitBagfile": ([("split_time", Time_), ("split_mode", types.int32), ("tracking_topic_name", str)], CODE),
    "Record": ([("uri", str), ("start_time", Time_)], CODE),
}


def srv_struct(srv, kind, fields, pkg="rosbag2_interfaces"):
    """An IdlStruct for <pkg>::srv::dds_::<srv>_<kind>_ with rmw_cyclonedds' request header
    (uint64 client id, int64 sequence number) before the fields."""
    ann = {"client_id": types.uint64, "seq": types.int64}
    ann.update(dict(fields))
    import types as pytypes

    cls = pytypes.new_class(f"{srv}_{kind}_", (IdlStruct,), {"typename": f"{pkg}::srv::dds_::{srv}_{kind}_"}, lambda ns: ns.update({"__annotations__": ann}))
    return dataclass(cls)


def run_call(args):
    import random

    req_fields, resp_fields = (LYRICAL if args.type_hash else SERVICES)[args.srv]
    Req, Resp = srv_struct(args.srv, "Request", req_fields), srv_struct(args.srv, "Response", resp_fields)
    dp = DomainParticipant(args.domain)
    q = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.Volatile, Policy.History.KeepLast(10))
    reader = DataReader(dp, Topic(dp, f"rr{args.service}Reply", Resp), qos=q)
    # rmw_cyclonedds puts the service type's hash in the user data of the client's endpoints.
    wq = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.Volatile, Policy.History.KeepLast(10),
             Policy.Userdata(f"typehash={args.type_hash};".encode())) if args.type_hash else q
    writer = DataWriter(dp, Topic(dp, f"rq{args.service}Request", Req), qos=wq)
    end = time.monotonic() + args.timeout
    while time.monotonic() < end and (writer.get_publication_matched_status().current_count == 0 or reader.get_subscription_matched_status().current_count == 0):
        time.sleep(0.01)
    if time.monotonic() >= end:
        say("NO_SERVICE")
        return 3
    fields = {}
    if args.srv == "SetRate":
        fields["rate"] = float(args.value)
    elif args.srv == "Burst":
        fields["num_messages"] = int(args.value)
    elif args.srv == "Seek":
        from decimal import Decimal

        ns = int(Decimal(args.value) * 1_000_000_000)
        fields["time"] = Time_(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
    elif args.srv == "Record":
        fields["uri"] = "" if args.value == "0" else args.value
        if args.type_hash:
            fields["start_time"] = Time_(sec=0, nanosec=0)
    elif args.srv == "Play":
        fields.update(start_offset=Time_(0, 0), playback_duration=Duration_(0, 0), playback_until_timestamp=Time_(0, 0))
    elif args.srv in ("Resume", "SplitBagfile") and args.type_hash:
        prefix = "resume" if args.srv == "Resume" else "split"
        fields.update({f"{prefix}_time": Time_(0, 0), f"{prefix}_mode": 0, "tracking_topic_name": ""})
    else:
        fields["structure_needs_at_least_one_member"] = 0
    client_id = random.getrandbits(63)
    writer.write(Req(client_id=client_id, seq=1, **fields))
    while time.monotonic() < end:
        for s in reader.take(N=16):
            if isinstance(s, InvalidSample) or s.client_id != client_id or s.seq != 1:
                continue
            out = {k: getattr(s, k) for k, _ in resp_fields if k != "structure_needs_at_least_one_member"}
            say(f"RESPONSE {json.dumps(out)}")
            return 0
        time.sleep(0.005)
    say("NO_RESPONSE")
    return 4


def run_serve(args):
    """The service side of test_msgs/srv/BasicTypes, as an rmw_cyclonedds service sees
    requests: prints each request's fields (the header left out); answers nothing."""
    Req = srv_struct("BasicTypes", "Request", BASIC_TYPES, pkg="test_msgs")
    Resp = srv_struct("BasicTypes", "Response", BASIC_TYPES, pkg="test_msgs")
    dp = DomainParticipant(args.domain)
    q = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.Volatile, Policy.History.KeepLast(10))
    reader = DataReader(dp, Topic(dp, f"rq{args.service}Request", Req), qos=q)
    _writer = DataWriter(dp, Topic(dp, f"rr{args.service}Reply", Resp), qos=q)
    say("READY")
    got, matched, end = 0, False, time.monotonic() + args.timeout
    while got < args.count and time.monotonic() < end:
        if not matched and reader.get_subscription_matched_status().current_count > 0:
            matched = True
            say("MATCHED")
        for s in reader.take(N=16):
            if isinstance(s, InvalidSample):
                continue
            say(f"REQUEST {json.dumps({k: getattr(s, k) for k, _ in BASIC_TYPES})}")
            got += 1
        time.sleep(0.005)
    say(f"DONE {got}")
    return 0 if got >= args.count else 2


# --- Actions: example_interfaces/action/Fibonacci (see the module docstring). ---


def struct(typename, fields):
    """An IdlStruct named `typename` (a DDS type name) with `fields` [(name, type)]."""
    import types as pytypes

    short = typename.rsplit("::", 1)[-1]
    cls = pytypes.new_class(short, (IdlStruct,), {"typename": typename}, lambda ns: ns.update({"__annotations__": dict(fields)}))
    return dataclass(cls)


HEADER = [("client_id", types.uint64), ("seq", types.int64)]
UUID_ = struct("unique_identifier_msgs::msg::dds_::UUID_", [("uuid", types.array[types.uint8, 16])])
GoalInfo_ = struct("action_msgs::msg::dds_::GoalInfo_", [("goal_id", UUID_), ("stamp", Time_)])
GoalStatus_ = struct("action_msgs::msg::dds_::GoalStatus_", [("goal_info", GoalInfo_), ("status", types.int8)])
GoalStatusArray_ = struct("action_msgs::msg::dds_::GoalStatusArray_", [("status_list", types.sequence[GoalStatus_])])
ServiceEventInfo_ = struct(
    "service_msgs::msg::dds_::ServiceEventInfo_",
    [("event_type", types.uint8), ("stamp", Time_), ("client_gid", types.array[types.uint8, 16]), ("sequence_number", types.int64)],
)
FIB = "example_interfaces::action::dds_::Fibonacci"
Goal_ = struct(f"{FIB}_Goal_", [("order", types.int32)])
Result_ = struct(f"{FIB}_Result_", [("sequence", types.sequence[types.int32])])
Feedback_ = struct(f"{FIB}_Feedback_", [("sequence", types.sequence[types.int32])])
FeedbackMessage_ = struct(f"{FIB}_FeedbackMessage_", [("goal_id", UUID_), ("feedback", Feedback_)])

# Each action service: DDS type prefix, request fields, response fields.
ACTION_SERVICES = {
    "send_goal": (f"{FIB}_SendGoal", [("goal_id", UUID_), ("goal", Goal_)], [("accepted", bool), ("stamp", Time_)]),
    "get_result": (f"{FIB}_GetResult", [("goal_id", UUID_)], [("status", types.int8), ("result", Result_)]),
    "cancel_goal": (
        "action_msgs::srv::dds_::CancelGoal",
        [("goal_info", GoalInfo_)],
        [("return_code", types.int8), ("goals_canceling", types.sequence[GoalInfo_])],
    ),
}
REQUEST_SENT, REQUEST_RECEIVED, RESPONSE_SENT, RESPONSE_RECEIVED = 0, 1, 2, 3
STATUS_ACCEPTED, STATUS_EXECUTING, STATUS_SUCCEEDED = 1, 2, 4


class ActionService:
    """One of an action's services on the wire: its request/reply structs with rmw_cyclonedds'
    header (for rq/rr) and without (inside events), and its event topic's writer."""

    def __init__(self, dp, action, name, server, await_readers):
        prefix, req, resp = ACTION_SERVICES[name]
        self.req_fields, self.resp_fields = req, resp
        self.Req = struct(f"{prefix}_Request_", req)
        self.Resp = struct(f"{prefix}_Response_", resp)
        self.WireReq = struct(f"{prefix}_Request_", HEADER + req)
        self.WireResp = struct(f"{prefix}_Response_", HEADER + resp)
        Event = struct(
            f"{prefix}_Event_",
            [("info", ServiceEventInfo_), ("request", types.sequence[self.Req, 1]), ("response", types.sequence[self.Resp, 1])],
        )
        self.Event = Event
        q = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.Volatile, Policy.History.KeepLast(100))
        base = f"{action}/_action/{name}"
        req_topic, reply_topic = Topic(dp, f"rq{base}Request", self.WireReq), Topic(dp, f"rr{base}Reply", self.WireResp)
        if server:
            self.reader = DataReader(dp, req_topic, qos=q)
            self.writer = DataWriter(dp, reply_topic, qos=q)
        else:
            self.reader = DataReader(dp, reply_topic, qos=q)
            self.writer = DataWriter(dp, req_topic, qos=q)
        self.events = DataWriter(dp, Topic(dp, f"rt{base}/_service_event", Event), qos=q)
        self.await_readers = await_readers

    def matched(self):
        return self.writer.get_publication_matched_status().current_count > 0 and self.reader.get_subscription_matched_status().current_count > 0

    def event(self, kind, client_id, seq, request=None, response=None):
        if self.await_readers:
            wait_matched(self.events.get_publication_matched_status, 10.0)
        gid = list(client_id.to_bytes(8, "little")) + [0] * 8
        info = ServiceEventInfo_(event_type=kind, stamp=now_time(), client_gid=gid, sequence_number=seq)
        self.events.write(self.Event(info=info, request=[request] if request is not None else [], response=[response] if response is not None else []))

    def plain(self, wire, fields):
        """The message without the header (for an event), from a wire sample."""
        cls = self.Req if fields is self.req_fields else self.Resp
        return cls(**{k: getattr(wire, k) for k, _ in fields})


def now_time():
    ns = time.time_ns()
    return Time_(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def wait_readers(writer, n, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and writer.get_publication_matched_status().current_count < n:
        time.sleep(0.005)


def acked(writers):
    """Waits until every matched reader acknowledged what `writers` wrote (so that DONE means
    a recorder has it)."""
    for w in writers:
        try:
            w.wait_for_acks(duration(seconds=30))
        except Exception as e:  # noqa: BLE001 - reported, not fatal
            say(f"ACKS_FAILED {e}")


def run_action_server(args):
    dp = DomainParticipant(args.domain)
    srv = {name: ActionService(dp, args.action, name, True, args.await_readers) for name in ACTION_SERVICES}
    q = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.Volatile, Policy.History.KeepLast(100))
    feedback = DataWriter(dp, Topic(dp, f"rt{args.action}/_action/feedback", FeedbackMessage_), qos=q)
    status_qos = Qos(
        Policy.Reliability.Reliable(duration(seconds=10)),
        Policy.Durability.TransientLocal,
        Policy.History.KeepLast(1),
        Policy.DurabilityService(0, Policy.History.KeepLast(1), -1, -1, -1),
    )
    status = DataWriter(dp, Topic(dp, f"rt{args.action}/_action/status", GoalStatusArray_), qos=status_qos)
    goals = {}  # uuid bytes -> {"info": GoalInfo_, "status": int, "sequence": list}
    pending = []  # get_result requests waiting for their goal: (wire request, uuid)
    say("READY")

    def publish_status():
        if args.await_readers:
            wait_readers(status, 2)
        status.write(GoalStatusArray_(status_list=[GoalStatus_(goal_info=g["info"], status=g["status"]) for g in goals.values()]))

    def answer(name, req, **fields):
        s = srv[name]
        resp = s.WireResp(client_id=req.client_id, seq=req.seq, **fields)
        s.writer.write(resp)
        s.event(RESPONSE_SENT, req.client_id, req.seq, response=s.plain(resp, s.resp_fields))

    def result_of(req, uuid):
        g = goals[uuid]
        answer("get_result", req, status=g["status"], result=Result_(sequence=g["sequence"]))
        say(f"RESULT {uuid.hex()} {json.dumps(g['sequence'])}")

    served, canceled, end = 0, 0, time.monotonic() + args.timeout
    while (served < args.goals or canceled < args.cancels) and time.monotonic() < end:
        busy = False
        for req in srv["send_goal"].reader.take(N=16):
            if isinstance(req, InvalidSample):
                continue
            busy = True
            s = srv["send_goal"]
            s.event(REQUEST_RECEIVED, req.client_id, req.seq, request=s.plain(req, s.req_fields))
            uuid = bytes(req.goal_id.uuid)
            stamp = now_time()
            say(f"GOAL {uuid.hex()} {req.goal.order}")
            answer("send_goal", req, accepted=True, stamp=stamp)
            goals[uuid] = {"info": GoalInfo_(goal_id=UUID_(uuid=list(uuid)), stamp=stamp), "status": STATUS_ACCEPTED, "sequence": []}
            publish_status()
            goals[uuid]["status"] = STATUS_EXECUTING
            publish_status()
            sequence = [0, 1]
            for i in range(1, req.goal.order):
                sequence.append(sequence[i] + sequence[i - 1])
                if args.await_readers:
                    wait_readers(feedback, 2)
                feedback.write(FeedbackMessage_(goal_id=UUID_(uuid=list(uuid)), feedback=Feedback_(sequence=list(sequence))))
                if args.period > 0:
                    time.sleep(args.period)
            goals[uuid]["sequence"] = sequence
            goals[uuid]["status"] = STATUS_SUCCEEDED
            publish_status()
        for req in srv["get_result"].reader.take(N=16):
            if isinstance(req, InvalidSample):
                continue
            busy = True
            s = srv["get_result"]
            s.event(REQUEST_RECEIVED, req.client_id, req.seq, request=s.plain(req, s.req_fields))
            pending.append((req, bytes(req.goal_id.uuid)))
        for req in srv["cancel_goal"].reader.take(N=16):
            if isinstance(req, InvalidSample):
                continue
            busy = True
            s = srv["cancel_goal"]
            s.event(REQUEST_RECEIVED, req.client_id, req.seq, request=s.plain(req, s.req_fields))
            uuid = bytes(req.goal_info.goal_id.uuid)
            code = 3 if uuid in goals else 2
            answer("cancel_goal", req, return_code=code, goals_canceling=[])
            say(f"CANCEL {uuid.hex()} {code}")
            canceled += 1
        still = []
        for req, uuid in pending:
            if uuid in goals and goals[uuid]["status"] == STATUS_SUCCEEDED:
                result_of(req, uuid)
                served += 1
            elif uuid not in goals:
                # rcl_action answers an unknown goal's result request at once, status UNKNOWN (0).
                answer("get_result", req, status=0, result=Result_(sequence=[]))
            else:
                still.append((req, uuid))
        pending = still
        if not busy:
            time.sleep(0.005)
    if args.await_readers:
        acked([s.events for s in srv.values()] + [feedback, status])
    say(f"DONE {served}")
    if args.linger > 0:
        time.sleep(args.linger)
    return 0 if served >= args.goals else 2


def run_action_client(args):
    import os
    import random

    dp = DomainParticipant(args.domain)
    srv = {name: ActionService(dp, args.action, name, False, args.await_readers) for name in ACTION_SERVICES}
    q = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.Volatile, Policy.History.KeepLast(100))
    feedback = DataReader(dp, Topic(dp, f"rt{args.action}/_action/feedback", FeedbackMessage_), qos=q)
    status_qos = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.TransientLocal, Policy.History.KeepLast(1))
    _status = DataReader(dp, Topic(dp, f"rt{args.action}/_action/status", GoalStatusArray_), qos=status_qos)
    end = time.monotonic() + args.timeout
    while time.monotonic() < end and not all(s.matched() for s in srv.values()):
        time.sleep(0.01)
    if time.monotonic() >= end:
        say("NO_SERVER")
        return 3
    wait_matched(feedback.get_subscription_matched_status, max(0.0, end - time.monotonic()))
    client_id = random.getrandbits(63)
    seqs = {name: 0 for name in srv}

    def call(name, **fields):
        s = srv[name]
        seqs[name] += 1
        seq = seqs[name]
        req = s.WireReq(client_id=client_id, seq=seq, **fields)
        s.event(REQUEST_SENT, client_id, seq, request=s.plain(req, s.req_fields))
        s.writer.write(req)
        while time.monotonic() < end:
            for resp in s.reader.take(N=16):
                if isinstance(resp, InvalidSample) or resp.client_id != client_id or resp.seq != seq:
                    continue
                s.event(RESPONSE_RECEIVED, client_id, seq, response=s.plain(resp, s.resp_fields))
                return resp
            for f in feedback.take(N=64):
                if not isinstance(f, InvalidSample):
                    say(f"FEEDBACK {json.dumps(list(f.feedback.sequence))}")
            time.sleep(0.005)
        return None

    for _ in range(args.goals):
        uuid = os.urandom(16)
        goal_id = UUID_(uuid=list(uuid))
        resp = call("send_goal", goal_id=goal_id, goal=Goal_(order=args.order))
        if resp is None:
            say("NO_RESPONSE")
            return 4
        say(f"ACCEPTED {uuid.hex()}" if resp.accepted else f"REJECTED {uuid.hex()}")
        resp = call("get_result", goal_id=goal_id)
        if resp is None:
            say("NO_RESPONSE")
            return 4
        say(f"RESULT {resp.status} {json.dumps(list(resp.result.sequence))}")
        if args.cancel:
            resp = call("cancel_goal", goal_info=GoalInfo_(goal_id=goal_id, stamp=Time_(sec=0, nanosec=0)))
            if resp is None:
                say("NO_RESPONSE")
                return 4
            say(f"CANCELED {resp.return_code}")
    if args.await_readers:
        acked([s.events for s in srv.values()])
    say("DONE")
    if args.linger > 0:
        time.sleep(args.linger)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("call")
    c.add_argument("--domain", type=int, required=True)
    c.add_argument("--service", required=True)
    c.add_argument("--srv", choices=sorted(SERVICES), required=True)
    c.add_argument("--value", default="0", help="decimal: SetRate's rate, Seek's time in seconds; Record's uri")
    c.add_argument("--type-hash", default="", help="Lyrical's layout, naming this RIHS01 hash in the user data")
    c.add_argument("--timeout", type=float, default=20.0)
    v = sub.add_parser("serve")
    v.add_argument("--domain", type=int, required=True)
    v.add_argument("--service", required=True)
    v.add_argument("--count", type=int, default=1)
    v.add_argument("--timeout", type=float, default=60.0)
    for name in ("action-server", "action-client"):
        a = sub.add_parser(name)
        a.add_argument("--domain", type=int, required=True)
        a.add_argument("--action", default="/fibonacci")
        a.add_argument("--goals", type=int, default=1)
        a.add_argument("--timeout", type=float, default=60.0)
        a.add_argument("--linger", type=float, default=1.0, help="seconds to stay after DONE")
        a.add_argument("--await-readers", action="store_true")
        if name == "action-server":
            a.add_argument("--period", type=float, default=0.0, help="seconds between feedback messages")
            a.add_argument("--cancels", type=int, default=0, help="also wait for this many cancel requests")
        else:
            a.add_argument("--order", type=int, default=5)
            a.add_argument("--cancel", action="store_true", help="cancel each goal once it ended")
    for name in ("pub", "sub"):
        p = sub.add_parser(name)
        p.add_argument("--domain", type=int, required=True)
        p.add_argument("--topic", default="rt/chatter")
        p.add_argument("--type", choices=sorted(TYPES), default="string")
        p.add_argument("--count", type=int, default=10)
        rel = p.add_mutually_exclusive_group()
        rel.add_argument("--reliable", action="store_true")
        rel.add_argument("--best-effort", action="store_true")
        p.add_argument("--transient-local", action="store_true")
        p.add_argument("--depth", type=int, default=0, help="keep-last depth (0: keep-all)")
        p.add_argument("--no-hex", action="store_true")
        if name == "pub":
            p.add_argument("--rate", type=float, default=0.0, help="samples per second (0: as fast as possible)")
            p.add_argument("--start-delay", type=float, default=0.0)
            p.add_argument("--linger", type=float, default=1.0, help="seconds to stay after DONE")
            p.add_argument("--size", type=int, default=1024, help="blob data bytes")
            p.add_argument("--no-wait", action="store_true", help="publish without waiting for a reader")
            p.add_argument("--match-timeout", type=float, default=20.0)
        else:
            p.add_argument("--timeout", type=float, default=20.0)
            p.add_argument("--max-samples", type=int, default=0, help="reader resource limit (0: unlimited)")
            p.add_argument("--take-delay", type=float, default=0.0, help="take one sample per this many seconds (a slow reader)")
    args = ap.parse_args()
    runs = {"pub": run_pub, "sub": run_sub, "call": run_call, "serve": run_serve}
    runs.update({"action-server": run_action_server, "action-client": run_action_client})
    return runs[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
