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
                        [--timeout S]
    cyclone_peer.py serve --domain D --service /test_service1 [--count N] [--timeout S]

`call` is `ros2 service call` as rmw_cyclonedds does it: request on rq/<service>Request with
the 16-byte request header (client id, sequence number) before the fields, the answer taken
from rr/<service>Reply by that header. --srv is one of rosbag2_interfaces' services below;
--value is SetRate's rate, Burst's count or Seek's time in seconds.

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


TYPES = {
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

    req_fields, resp_fields = SERVICES[args.srv]
    Req, Resp = srv_struct(args.srv, "Request", req_fields), srv_struct(args.srv, "Response", resp_fields)
    dp = DomainParticipant(args.domain)
    q = Qos(Policy.Reliability.Reliable(duration(seconds=10)), Policy.Durability.Volatile, Policy.History.KeepLast(10))
    reader = DataReader(dp, Topic(dp, f"rr{args.service}Reply", Resp), qos=q)
    writer = DataWriter(dp, Topic(dp, f"rq{args.service}Request", Req), qos=q)
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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("call")
    c.add_argument("--domain", type=int, required=True)
    c.add_argument("--service", required=True)
    c.add_argument("--srv", choices=sorted(SERVICES), required=True)
    c.add_argument("--value", default="0", help="decimal: SetRate's rate, Seek's time in seconds")
    c.add_argument("--timeout", type=float, default=20.0)
    v = sub.add_parser("serve")
    v.add_argument("--domain", type=int, required=True)
    v.add_argument("--service", required=True)
    v.add_argument("--count", type=int, default=1)
    v.add_argument("--timeout", type=float, default=60.0)
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
    return {"pub": run_pub, "sub": run_sub, "call": run_call, "serve": run_serve}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
