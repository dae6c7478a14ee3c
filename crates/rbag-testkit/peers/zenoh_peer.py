"""A ROS 2 peer on Zenoh for rbag's tests: eclipse-zenoh (pip, 1.10) written to behave on the
wire exactly as rmw_zenoh_cpp does, with no ROS installed. Every convention below was read from
rmw_zenoh's released sources (tags 0.2.10 jazzy, 0.6.7 kilted, 0.10.5 lyrical, 0.12.0 rolling;
these files are the same in all four for ordinary messages):

- data key `<domain>/<name less its leading '/'>/<dds type>/<RIHS01 hash>`:
  rmw_zenoh_cpp/src/detail/liveliness_utils.cpp, TopicInfo's constructor (L76-94 in 0.2.10);
- liveliness token `@ros2_lv/<domain>/<zid>/<nid>/<eid>/<NN|MP|MS>/<enclave>/<ns>/<node>[/<topic>/
  <type>/<hash>/<qos>]`, '/' inside a field written '%': Entity::Entity (L435-497) and
  mangle_name (L697-708); the QoS text, each value only where it differs from the default
  (reliable, volatile, keep-last 42, infinite, automatic): qos_to_keyexpr (L289-351);
- attachment: i64 LE sequence number from 1, i64 LE source timestamp in ns, the byte 0x10
  (zenoh-ext's length prefix of a std::array<uint8_t,16>), the 16-byte GID:
  attachment_helpers.cpp L67-82 and rmw_publisher_data.cpp L204, L311-312;
- payload: CDR with its 4-byte encapsulation header (type_support.cpp L90-106);
- a subscription drops samples without an attachment (rmw_subscription_data.cpp L221-228).

--transient-local uses zenoh-ext's AdvancedPublisher (a cache of --depth samples, publisher
detection) or AdvancedSubscriber (history of --depth samples, late publishers detected), as
rmw_zenoh does for that durability (rmw_publisher_data.cpp L114-159, rmw_subscription_data.cpp
L165-250 in 0.2.10).

Sessions are peers with multicast scouting off, connected to --connect (rmw_zenoh's default
session config connects to tcp/localhost:7447; tests pass their own loopback port).

    zenoh_peer.py router --listen tcp/127.0.0.1:P
    zenoh_peer.py talker --connect E --domain D --topic /chatter --dds-type T --hash H
                         [--kind string|blob|clock] [--size BYTES] [--count N] [--rate HZ]
                         [--depth K] [--transient-local] [--best-effort] [--wait-sub S] [--linger S]
    zenoh_peer.py listener --connect E --domain D --topic /chatter --dds-type T --hash H
                         [--count N] [--timeout S] [--depth K] [--transient-local]
    zenoh_peer.py tokens --connect E --domain D [--timeout S] [--until SUBSTRING]
    zenoh_peer.py call --connect E --domain D --topic /rosbag2_player/pause
                         --dds-type rosbag2_interfaces::srv::dds_::Pause_ [--service-hash H]
                         [--request HEX] [--timeout S]

A client (`call`) does as rmw_client_data.cpp (L132-149, L383-397 in 0.2.10): an `SC` token, a
query on the service's data key with the request's CDR as payload and the attachment (sequence
number 1, the client's GID); the reply's attachment must carry that sequence number and GID
back (rmw_service_data.cpp L438-454). Without --service-hash it takes the hash from the server's `SS`
token, as a client built from the same interface would have it. It prints SERVICE <token>,
CLIENT <its GID hex>,
then RESPONSE <payload hex> <attachment hex>, or NO_SERVICE / NO_RESPONSE (exit 3 / 4).

Actions (example_interfaces/action/Fibonacci as rmw_zenoh + rclcpp_action run it with service
introspection configured to CONTENTS on both sides, the way rosbag2 (Kilted+) records actions):

    zenoh_peer.py action-server --connect E --domain D [--action /fibonacci] [--goals N]
                         [--cancels N] [--timeout S] [--await-readers] [--linger S]
    zenoh_peer.py action-client --connect E --domain D [--action /fibonacci] [--goals N]
                         [--order K] [--cancel] [--timeout S] [--await-readers] [--linger S]

Each of the three services (send_goal, get_result, cancel_goal) is a queryable (server, `SS`
token) or querier (client, `SC` token) on `<domain>/<action>/_action/<service>/<type>/<hash>`,
the type being the request's less `Request_` (`example_interfaces::action::dds_::
Fibonacci_SendGoal_`, `action_msgs::srv::dds_::CancelGoal_`); payloads are CDR with the
encapsulation header and no request header; the attachment is a topic sample's (the client's
sequence number per service, from 1, and GID), echoed in the reply. Feedback
(`..._FeedbackMessage_`) and status (`action_msgs::msg::dds_::GoalStatusArray_`, transient local
keep-last 1: an advanced publisher) are published with attachments, and so are the services'
`<service>/_service_event` topics (`<Type>_Event_`: ServiceEventInfo (event_type, stamp,
client_gid = the client's GID on both sides, sequence_number), request and response as
sequences of at most one). The server writes REQUEST_RECEIVED (1) and RESPONSE_SENT (2), the
client REQUEST_SENT (0) and RESPONSE_RECEIVED (3). Behaviour and output are cyclone_peer.py's
action-server / action-client (GOAL <uuid hex> <order>, RESULT <uuid hex> <json sequence>,
CANCEL <uuid hex> <return code>, DONE <n>; ACCEPTED <uuid hex>, FEEDBACK, RESULT <status>
<json>, CANCELED <code>, DONE). --await-readers: wait (up to 10 s) for a matching subscriber
before each publication, so that a recorder that subscribed misses nothing.

Services (example_interfaces/srv/AddTwoInts, as rmw_zenoh + rclcpp run it; with --introspection,
service introspection configured to CONTENTS, the way rosbag2 records services):

    zenoh_peer.py service-server --connect E --domain D [--service /add_two_ints] [--count N]
                         [--introspection] [--timeout S] [--await-readers] [--linger S]
    zenoh_peer.py service-client --connect E --domain D [--service /add_two_ints] [--count N]
                         [--first I] [--introspection] [--timeout S] [--await-readers] [--linger S]

The server is a queryable on `<domain>/<service>/example_interfaces::srv::dds_::AddTwoInts_/<hash>`
with an `SS` token (rmw_service_data.cpp L129-176 in 0.2.10), the client a querier with an `SC`
token naming the server's hash (rmw_client_data.cpp L132-149, L383-397); the request's payload is
CDR `int64 a, int64 b` with the encapsulation header, the attachment the client's (sequence number
from 1, GID), echoed in the reply (rmw_service_data.cpp L438-454) whose payload is `int64 sum`.
With --introspection each side publishes `<service>/_service_event`
(`example_interfaces::srv::dds_::AddTwoInts_Event_`, laid out as the action services' events
above): the server REQUEST_RECEIVED (1) and RESPONSE_SENT (2), the client REQUEST_SENT (0) and
RESPONSE_RECEIVED (3). Call i (from --first, default 0) asks a = i + 1, b = 100 * (i + 1) - 7.
The server prints REQUEST <i> <payload hex> <a> <b> <sequence number> <client GID hex> per request
and DONE <n>, exit 0 once --count requests came (else 2); the client prints CLIENT <GID hex>,
CALL <i> <a> <b> <payload hex>, SUM <i> <sum>, DONE (NO_SERVER exit 3, NO_RESPONSE exit 4).

A `/clock` publisher (rosgraph_msgs/msg/Clock, as a simulator's rclcpp::ClockQoS publisher
on rmw_zenoh: best effort, keep last 1) is a talker with `--kind clock --best-effort --depth 1
--topic /clock --dds-type rosgraph_msgs::msg::dds_::Clock_ --hash <Clock's RIHS01>`: sample i
carries sec = 100 + i, nanosec = 250000000 (so a log time taken from it is recognisable).
--best-effort writes reliability 2 (RMW_QOS_POLICY_RELIABILITY_BEST_EFFORT) in the token's QoS
(qos_to_keyexpr) and publishes with congestion control DROP (rmw_zenoh blocks only for reliable
keep-all publishers, as rbag's own Zenoh publisher does).

Output, one line each, flushed: READY <zid>; TOKEN <key expression> for each token it declares
(talker, listener) or sees (tokens); talker: PUBLISHED <i> <payload hex> <attachment hex> (or
`-` for the payload with --size over 4096), DONE; listener: RECEIVED <i> <payload hex or
sha256:...> <attachment hex>, DONE <n>; exit 0 when --count samples came, else 2.
"""
import argparse
import hashlib
import json
import struct
import sys
import threading
import time

import zenoh
import zenoh.ext

STRING = "std_msgs::msg::dds_::String_"


def say(*parts):
    print(*parts, flush=True)


def session(args, mode="peer"):
    conf = zenoh.Config()
    conf.insert_json5("mode", json.dumps(mode))
    conf.insert_json5("scouting/multicast/enabled", "false")
    # rmw_zenoh's default session config timestamps every sample (the advanced publisher's cache
    # needs the timestamps).
    conf.insert_json5("timestamping/enabled", "true")
    if mode == "router":
        conf.insert_json5("listen/endpoints", json.dumps([args.listen]))
    else:
        conf.insert_json5("connect/endpoints", json.dumps([args.connect]))
        conf.insert_json5("listen/endpoints", json.dumps(["tcp/127.0.0.1:0"]))
    return zenoh.open(conf)


def qos_text(depth, transient_local, best_effort=False):
    # qos_to_keyexpr: reliability, durability, history,depth, deadline, lifespan, liveliness,lease.
    rel = "2" if best_effort else ""
    dur = "1" if transient_local else ""
    d = "" if depth == 42 else str(depth)
    return f"{rel}:{dur}:,{d}:,:,:,,"


def mangle(s):
    return s.replace("/", "%")


def tokens_for(zid, args, kind):
    base = f"@ros2_lv/{args.domain}/{zid}/0"
    node = "talker" if kind == "MP" else "listener"
    node_token = f"{base}/0/NN/%/%/{node}"
    entity = (f"{base}/10/{kind}/%/%/{node}/{mangle(args.topic)}/{mangle(args.dds_type)}/"
              f"{mangle(args.hash)}/{qos_text(args.depth, args.transient_local, args.best_effort)}")
    return [node_token, entity]


def data_key(args):
    return f"{args.domain}/{args.topic.strip('/')}/{args.dds_type}/{args.hash}"


def gid_of(token):
    # rmw_zenoh hashes the token with XXH3-128; any 16 stable bytes identify the publisher.
    return hashlib.blake2b(token.encode(), digest_size=16).digest()


class Cdr:
    """Little-endian CDR after the 4-byte encapsulation header; alignment from the body start."""

    def __init__(self):
        self.b = bytearray()

    def align(self, n):
        while len(self.b) % n:
            self.b.append(0)

    def u32(self, v):
        self.align(4)
        self.b += struct.pack("<I", v)

    def i32(self, v):
        self.align(4)
        self.b += struct.pack("<i", v)

    def string(self, s):
        raw = s.encode() + b"\0"
        self.u32(len(raw))
        self.b += raw

    def octets(self, data):
        self.u32(len(data))
        self.b += data

    def bytes(self):
        return b"\x00\x01\x00\x00" + bytes(self.b)


def payload(kind, i, size):
    c = Cdr()
    if kind == "string":
        c.string(f"hello {i}")
    elif kind == "clock":
        # rosgraph_msgs/msg/Clock: builtin_interfaces/Time clock (int32 sec, uint32 nanosec).
        c.i32(100 + i)
        c.u32(250_000_000)
    else:
        # sensor_msgs/msg/CompressedImage: header (stamp, frame_id "blob"), format "raw", data.
        c.i32(i)
        c.u32(0)
        c.string("blob")
        c.string("raw")
        # As cyclone_peer.py's blob: byte k is k % 251, the first four are i (u32 LE).
        data = bytearray(k % 251 for k in range(size))
        data[: min(size, 4)] = struct.pack("<I", i)[: min(size, 4)]
        c.octets(bytes(data))
    return c.bytes()


def attachment(seq, stamp, gid):
    return struct.pack("<qq", seq, stamp) + b"\x10" + gid


def run_router(args):
    s = session(args, "router")
    say("READY", str(s.zid()))
    try:
        while True:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    s.close()


def announce(args, kind):
    """A session with its node and entity tokens declared (and printed)."""
    s = session(args)
    zid = str(s.zid())
    say("READY", zid)
    tokens = tokens_for(zid, args, kind)
    held = [s.liveliness().declare_token(t) for t in tokens]
    for t in tokens:
        say("TOKEN", t)
    return s, tokens, held


def run_talker(args):
    s, tokens, held = announce(args, "MP")
    # A subscriber's token, when --wait-sub asks for one before publishing.
    if args.wait_sub > 0:
        seen = threading.Event()
        pattern = f"@ros2_lv/{args.domain}/**/MS/**"
        want = mangle(args.topic)

        def on_token(sample):
            if sample.kind == zenoh.SampleKind.PUT and f"/{want}/" in str(sample.key_expr):
                seen.set()

        sub = s.liveliness().declare_subscriber(pattern, on_token, history=True)
        seen.wait(args.wait_sub)
        say("SUBSCRIBER" if seen.is_set() else "NO_SUBSCRIBER")
        time.sleep(0.3)
    gid = gid_of(tokens[1])
    if args.transient_local:
        # rmw_publisher_data.cpp: transient local is an AdvancedPublisher with a cache of
        # `depth` samples and publisher detection.
        pub = zenoh.ext.declare_advanced_publisher(
            s, data_key(args), cache=zenoh.ext.CacheConfig(args.depth), publisher_detection=True)
    elif args.best_effort:
        pub = s.declare_publisher(data_key(args), congestion_control=zenoh.CongestionControl.DROP)
    else:
        pub = s.declare_publisher(data_key(args), congestion_control=zenoh.CongestionControl.BLOCK)
    period = 1.0 / args.rate if args.rate > 0 else 0
    for i in range(args.count):
        data = payload(args.kind, i, args.size)
        att = attachment(i + 1, time.time_ns(), gid)
        pub.put(data, attachment=att)
        shown = data.hex() if len(data) <= 4096 else "sha256:" + hashlib.sha256(data).hexdigest()
        say("PUBLISHED", i, shown, att.hex())
        if period:
            time.sleep(period)
    say("DONE")
    time.sleep(args.linger)
    del held
    s.close()


def run_listener(args):
    s, _, held = announce(args, "MS")
    got = []
    done = threading.Event()

    def on_sample(sample):
        att = sample.attachment
        if att is None:
            return  # rmw_zenoh drops samples without an attachment
        data = sample.payload.to_bytes()
        shown = data.hex() if len(data) <= 4096 else "sha256:" + hashlib.sha256(data).hexdigest()
        say("RECEIVED", len(got), shown, att.to_bytes().hex())
        got.append(1)
        if len(got) >= args.count:
            done.set()

    if args.transient_local:
        # rmw_subscription_data.cpp: an AdvancedSubscriber that fetches `depth` samples of
        # history, late publishers included.
        history = zenoh.ext.HistoryConfig(detect_late_publishers=True, max_samples=args.depth)
        sub = zenoh.ext.declare_advanced_subscriber(
            s, data_key(args), on_sample, history=history, subscriber_detection=True)
    else:
        sub = s.declare_subscriber(data_key(args), on_sample)
    done.wait(args.timeout)
    say("DONE", len(got))
    del sub, held
    s.close()
    sys.exit(0 if len(got) >= args.count else 2)


def run_tokens(args):
    s = session(args)
    say("READY", str(s.zid()))
    found = threading.Event()

    def on_token(sample):
        if sample.kind == zenoh.SampleKind.PUT:
            key = str(sample.key_expr)
            say("TOKEN", key)
            if args.until and args.until in key:
                found.set()

    sub = s.liveliness().declare_subscriber(f"@ros2_lv/{args.domain}/**", on_token, history=True)
    found.wait(args.timeout)
    say("DONE")
    del sub
    s.close()
    sys.exit(0 if (found.is_set() or not args.until) else 2)


def run_call(args):
    s = session(args)
    zid = str(s.zid())
    say("READY", zid)
    # The server's token: @ros2_lv/<domain>/<zid>/<nid>/<eid>/SS/<enclave>/<ns>/<node>/<name>/<type>/<hash>/<qos>
    want = "/SS/"
    name = mangle(args.topic)
    server, end = None, time.monotonic() + args.timeout
    while server is None and time.monotonic() < end:
        for reply in s.liveliness().get(f"@ros2_lv/{args.domain}/**", timeout=2.0):
            key = str(reply.ok.key_expr) if reply.ok else ""
            if want in key and f"/{name}/" in key:
                server = key
        if server is None:
            time.sleep(0.1)
    if server is None:
        say("NO_SERVICE")
        sys.exit(3)
    say("SERVICE", server)
    hash_ = args.service_hash or server.split("/")[-2]
    token = (f"@ros2_lv/{args.domain}/{zid}/0/10/SC/%/%/client/{name}/{mangle(args.dds_type)}/"
             f"{hash_}/::,10:,:,:,,")
    held = s.liveliness().declare_token(token)
    time.sleep(0.2)
    gid = gid_of(token)
    say("CLIENT", gid.hex())
    key = f"{args.domain}/{args.topic.strip('/')}/{args.dds_type}/{hash_}"
    request = bytes.fromhex(args.request) if args.request else b"\x00\x01\x00\x00\x00"
    replies = s.get(key, payload=request, attachment=attachment(1, time.time_ns(), gid),
                    target=zenoh.QueryTarget.ALL_COMPLETE, consolidation=zenoh.ConsolidationMode.NONE,
                    timeout=args.timeout)
    for reply in replies:
        if reply.ok is None:
            continue
        att = reply.ok.attachment.to_bytes() if reply.ok.attachment is not None else b""
        say("RESPONSE", reply.ok.payload.to_bytes().hex(), att.hex())
        del held
        s.close()
        return
    say("NO_RESPONSE")
    sys.exit(4)


# --- Actions: example_interfaces/action/Fibonacci (see the module docstring). ---

FIB = "example_interfaces::action::dds_::Fibonacci"
# Stable made-up RIHS01 hashes per type (peers take a server's hash from its token).
def fake_hash(name):
    return "RIHS01_" + hashlib.sha256(name.encode()).hexdigest()


ACTION_SERVICE_TYPES = {
    "send_goal": f"{FIB}_SendGoal_",
    "get_result": f"{FIB}_GetResult_",
    "cancel_goal": "action_msgs::srv::dds_::CancelGoal_",
}
REQUEST_SENT, REQUEST_RECEIVED, RESPONSE_SENT, RESPONSE_RECEIVED = 0, 1, 2, 3
SERVICE_QOS = "::,10:,:,:,,"
EVENT_QOS = "::,10:,:,:,,"


class Body(Cdr):
    def u8(self, v):
        self.b += struct.pack("<B", v)

    def i8(self, v):
        self.b += struct.pack("<b", v)

    def i64(self, v):
        self.align(8)
        self.b += struct.pack("<q", v)

    def raw(self, data):
        self.b += data

    def time(self, ns):
        self.i32(ns // 1_000_000_000)
        self.u32(ns % 1_000_000_000)

    def i32s(self, values):
        self.u32(len(values))
        for v in values:
            self.i32(v)


def body_of(payload):
    """A payload's fields after the encapsulation header."""
    return payload[4:]


def write_request(b, name, fields):
    if name == "send_goal":
        b.raw(fields["goal_id"])
        b.i32(fields["order"])
    elif name == "get_result":
        b.raw(fields["goal_id"])
    else:
        b.raw(fields["goal_id"])
        b.time(fields.get("stamp", 0))


def write_response(b, name, fields):
    if name == "send_goal":
        b.u8(1 if fields["accepted"] else 0)
        b.time(fields["stamp"])
    elif name == "get_result":
        b.i8(fields["status"])
        b.i32s(fields["sequence"])
    else:
        b.i8(fields["return_code"])
        b.u32(0)  # goals_canceling: none


def encode(writer, name, fields):
    b = Body()
    writer(b, name, fields)
    return b.bytes()


def event_payload(name, kind, gid, seq, request=None, response=None):
    b = Body()
    b.u8(kind)
    b.time(time.time_ns())
    b.raw(gid)
    b.i64(seq)
    b.u32(1 if request is not None else 0)
    if request is not None:
        write_request(b, name, request)
    b.u32(1 if response is not None else 0)
    if response is not None:
        write_response(b, name, response)
    return b.bytes()


class ZPub:
    """A publisher as rmw_zenoh declares one: token, data key, attachment with sequence numbers."""

    def __init__(self, s, zid, args, node, topic, dds_type, eid, transient_local=False, type_hash=None):
        self.hash = type_hash or fake_hash(dds_type)
        dur = "1" if transient_local else ""
        qos = f":{dur}:,1:,:,:,," if transient_local else EVENT_QOS
        self.token = (f"@ros2_lv/{args.domain}/{zid}/0/{eid}/MP/%/%/{node}/{mangle(topic)}/{mangle(dds_type)}/"
                      f"{self.hash}/{qos}")
        self.held = s.liveliness().declare_token(self.token)
        key = f"{args.domain}/{topic.strip('/')}/{dds_type}/{self.hash}"
        if transient_local:
            self.pub = zenoh.ext.declare_advanced_publisher(
                s, key, cache=zenoh.ext.CacheConfig(1), publisher_detection=True)
        else:
            self.pub = s.declare_publisher(key, congestion_control=zenoh.CongestionControl.BLOCK)
        self.gid = gid_of(self.token)
        self.seq = 0
        self.await_readers = args.await_readers

    def put(self, data):
        if self.await_readers:
            end = time.monotonic() + 10.0
            while time.monotonic() < end:
                try:
                    if self.pub.matching_status.matching:
                        break
                except AttributeError:
                    time.sleep(0.5)
                    break
                time.sleep(0.01)
        self.seq += 1
        self.pub.put(data, attachment=attachment(self.seq, time.time_ns(), self.gid))


def action_node(args, node):
    s = session(args)
    zid = str(s.zid())
    say("READY", zid)
    held = [s.liveliness().declare_token(f"@ros2_lv/{args.domain}/{zid}/0/0/NN/%/%/{node}")]
    return s, zid, held


def event_pubs(s, zid, args, node):
    return {
        name: ZPub(s, zid, args, node, f"{args.action}/_action/{name}/_service_event", f"{t}Event_", 20 + k)
        for k, (name, t) in enumerate(ACTION_SERVICE_TYPES.items())
    }


def run_action_server(args):
    import queue

    node = "fibonacci_server"
    s, zid, held = action_node(args, node)
    events = event_pubs(s, zid, args, node)
    feedback = ZPub(s, zid, args, node, f"{args.action}/_action/feedback", f"{FIB}_FeedbackMessage_", 30)
    status = ZPub(s, zid, args, node, f"{args.action}/_action/status", "action_msgs::msg::dds_::GoalStatusArray_", 31,
                  transient_local=True)
    inbox = queue.Queue()
    queryables = []
    for k, (name, t) in enumerate(ACTION_SERVICE_TYPES.items()):
        h = fake_hash(t)
        topic = f"{args.action}/_action/{name}"
        held.append(s.liveliness().declare_token(
            f"@ros2_lv/{args.domain}/{zid}/0/{10 + k}/SS/%/%/{node}/{mangle(topic)}/{mangle(t)}/{h}/{SERVICE_QOS}"))
        key = f"{args.domain}/{topic.strip('/')}/{t}/{h}"
        queryables.append(s.declare_queryable(key, lambda q, name=name: inbox.put((name, q)), complete=True))
    goals = {}  # uuid -> {"stamp": ns, "status": int, "sequence": list}
    pending = []  # get_result queries waiting for their goal: (query, att, uuid)

    def answer(name, q, att, fields):
        payload = encode(write_response, name, fields)
        q.reply(q.key_expr, payload, attachment=attachment(att[0], time.time_ns(), att[1]))
        events[name].put(event_payload(name, RESPONSE_SENT, att[1], att[0], response=fields))

    def publish_status():
        b = Body()
        b.u32(len(goals))
        for uuid, g in goals.items():
            b.raw(uuid)
            b.time(g["stamp"])
            b.i8(g["status"])
        status.put(b.bytes())

    served, canceled, end = 0, 0, time.monotonic() + args.timeout
    while (served < args.goals or canceled < args.cancels) and time.monotonic() < end:
        try:
            name, q = inbox.get(timeout=0.05)
        except queue.Empty:
            name, q = None, None
        if q is not None:
            raw_att = q.attachment.to_bytes() if q.attachment is not None else b""
            if len(raw_att) != 33:
                say("NO_ATTACHMENT", name)
                continue
            seq = struct.unpack("<q", raw_att[:8])[0]
            att = (seq, raw_att[17:])
            body = body_of(q.payload.to_bytes() if q.payload is not None else b"")
            uuid = bytes(body[:16])
            if name == "send_goal":
                order = struct.unpack("<i", body[16:20])[0]
                events[name].put(event_payload(name, REQUEST_RECEIVED, att[1], seq,
                                               request={"goal_id": uuid, "order": order}))
                say(f"GOAL {uuid.hex()} {order}")
                stamp = time.time_ns()
                answer(name, q, att, {"accepted": True, "stamp": stamp})
                goals[uuid] = {"stamp": stamp, "status": 1, "sequence": []}
                publish_status()
                goals[uuid]["status"] = 2
                publish_status()
                sequence = [0, 1]
                for i in range(1, order):
                    sequence.append(sequence[i] + sequence[i - 1])
                    fb = Body()
                    fb.raw(uuid)
                    fb.i32s(sequence)
                    feedback.put(fb.bytes())
                goals[uuid]["sequence"] = sequence
                goals[uuid]["status"] = 4
                publish_status()
            elif name == "get_result":
                events[name].put(event_payload(name, REQUEST_RECEIVED, att[1], seq, request={"goal_id": uuid}))
                pending.append((q, att, uuid))
            else:
                events[name].put(event_payload(name, REQUEST_RECEIVED, att[1], seq, request={"goal_id": uuid}))
                code = 3 if uuid in goals else 2
                answer(name, q, att, {"return_code": code})
                say(f"CANCEL {uuid.hex()} {code}")
                canceled += 1
        still = []
        for q, att, uuid in pending:
            g = goals.get(uuid)
            if g is not None and g["status"] == 4:
                answer("get_result", q, att, {"status": 4, "sequence": g["sequence"]})
                say(f"RESULT {uuid.hex()} {json.dumps(g['sequence'])}")
                served += 1
            elif g is None:
                answer("get_result", q, att, {"status": 0, "sequence": []})
            else:
                still.append((q, att, uuid))
        pending = still
    say(f"DONE {served}")
    time.sleep(args.linger)
    del queryables, held
    s.close()
    sys.exit(0 if served >= args.goals else 2)


def run_action_client(args):
    import os
    import queue

    node = "fibonacci_client"
    s, zid, held = action_node(args, node)
    events = event_pubs(s, zid, args, node)
    feedback_seen = queue.Queue()

    def on_feedback(sample):
        body = body_of(sample.payload.to_bytes())
        n = struct.unpack("<I", body[16:20])[0]
        feedback_seen.put(list(struct.unpack(f"<{n}i", body[20:20 + 4 * n])))

    fb_topic = f"{args.action}/_action/feedback"
    fb_type = f"{FIB}_FeedbackMessage_"
    held.append(s.liveliness().declare_token(
        f"@ros2_lv/{args.domain}/{zid}/0/40/MS/%/%/{node}/{mangle(fb_topic)}/{mangle(fb_type)}/{fake_hash(fb_type)}/{EVENT_QOS}"))
    fb_sub = s.declare_subscriber(f"{args.domain}/{fb_topic.strip('/')}/{fb_type}/*", on_feedback)
    # The servers' tokens give the hashes.
    hashes, end = {}, time.monotonic() + args.timeout
    while len(hashes) < 3 and time.monotonic() < end:
        for reply in s.liveliness().get(f"@ros2_lv/{args.domain}/**", timeout=2.0):
            key = str(reply.ok.key_expr) if reply.ok else ""
            for name in ACTION_SERVICE_TYPES:
                if "/SS/" in key and f"/{mangle(f'{args.action}/_action/{name}')}/" in key:
                    hashes[name] = key.split("/")[-2]
        if len(hashes) < 3:
            time.sleep(0.1)
    if len(hashes) < 3:
        say("NO_SERVER")
        sys.exit(3)
    gids, seqs = {}, {}
    for k, (name, t) in enumerate(ACTION_SERVICE_TYPES.items()):
        topic = f"{args.action}/_action/{name}"
        token = (f"@ros2_lv/{args.domain}/{zid}/0/{10 + k}/SC/%/%/{node}/{mangle(topic)}/{mangle(t)}/"
                 f"{hashes[name]}/{SERVICE_QOS}")
        held.append(s.liveliness().declare_token(token))
        gids[name], seqs[name] = gid_of(token), 0
    time.sleep(0.3)

    def call(name, fields):
        seqs[name] += 1
        seq, gid = seqs[name], gids[name]
        events[name].put(event_payload(name, REQUEST_SENT, gid, seq, request=fields))
        t = ACTION_SERVICE_TYPES[name]
        key = f"{args.domain}/{args.action.strip('/')}/_action/{name}/{t}/{hashes[name]}"
        replies = s.get(key, payload=encode(write_request, name, fields),
                        attachment=attachment(seq, time.time_ns(), gid),
                        target=zenoh.QueryTarget.ALL_COMPLETE, consolidation=zenoh.ConsolidationMode.NONE,
                        timeout=args.timeout)
        for reply in replies:
            if reply.ok is None:
                continue
            body = body_of(reply.ok.payload.to_bytes())
            if name == "send_goal":
                resp = {"accepted": body[0] == 1, "stamp": struct.unpack("<i", body[4:8])[0] * 1_000_000_000
                        + struct.unpack("<I", body[8:12])[0]}
            elif name == "get_result":
                n = struct.unpack("<I", body[4:8])[0]
                resp = {"status": struct.unpack("<b", body[:1])[0], "sequence": list(struct.unpack(f"<{n}i", body[8:8 + 4 * n]))}
            else:
                resp = {"return_code": struct.unpack("<b", body[:1])[0]}
            events[name].put(event_payload(name, RESPONSE_RECEIVED, gid, seq, response=resp))
            return resp
        return None

    for _ in range(args.goals):
        uuid = os.urandom(16)
        resp = call("send_goal", {"goal_id": uuid, "order": args.order})
        if resp is None:
            say("NO_RESPONSE")
            sys.exit(4)
        say(f"ACCEPTED {uuid.hex()}" if resp["accepted"] else f"REJECTED {uuid.hex()}")
        resp = call("get_result", {"goal_id": uuid})
        if resp is None:
            say("NO_RESPONSE")
            sys.exit(4)
        while not feedback_seen.empty():
            say(f"FEEDBACK {json.dumps(feedback_seen.get())}")
        say(f"RESULT {resp['status']} {json.dumps(resp['sequence'])}")
        if args.cancel:
            resp = call("cancel_goal", {"goal_id": uuid, "stamp": 0})
            if resp is None:
                say("NO_RESPONSE")
                sys.exit(4)
            say(f"CANCELED {resp['return_code']}")
    say("DONE")
    time.sleep(args.linger)
    del fb_sub, held
    s.close()


# --- Services: example_interfaces/srv/AddTwoInts (see the module docstring). ---

ADD = "example_interfaces::srv::dds_::AddTwoInts_"
# The RIHS01 hashes of example_interfaces/srv/AddTwoInts and its event (rbag-msg's interface
# tests compute the same).
ADD_HASH = "RIHS01_e118de6bf5eeb66a2491b5bda11202e7b68f198d6f67922cf30364858239c81a"
ADD_EVENT_HASH = "RIHS01_32c1d140259c71e5c355115942bcb31df98b4330e4d906b1b75ccb1c9b3ce6c8"


def add_request(a, b):
    return struct.pack("<qq", a, b)


def add_event(kind, gid, seq, request=None, response=None):
    """An AddTwoInts_Event: ServiceEventInfo, then request and response as sequences of <= 1."""
    b = Body()
    b.u8(kind)
    b.time(time.time_ns())
    b.raw(gid)
    b.i64(seq)
    b.u32(1 if request is not None else 0)
    if request is not None:
        b.i64(request[0])
        b.i64(request[1])
    b.u32(1 if response is not None else 0)
    if response is not None:
        b.i64(response)
    return b.bytes()


def service_event_pub(s, zid, args, node):
    if not args.introspection:
        return None
    return ZPub(s, zid, args, node, f"{args.service}/_service_event", f"{ADD}Event_", 20, type_hash=ADD_EVENT_HASH)


def run_service_server(args):
    import queue

    node = "add_two_ints_server"
    s, zid, held = action_node(args, node)
    events = service_event_pub(s, zid, args, node)
    held.append(s.liveliness().declare_token(
        f"@ros2_lv/{args.domain}/{zid}/0/10/SS/%/%/{node}/{mangle(args.service)}/{mangle(ADD)}/{ADD_HASH}/{SERVICE_QOS}"))
    inbox = queue.Queue()
    key = f"{args.domain}/{args.service.strip('/')}/{ADD}/{ADD_HASH}"
    queryable = s.declare_queryable(key, inbox.put, complete=True)
    got, end = 0, time.monotonic() + args.timeout
    while got < args.count and time.monotonic() < end:
        try:
            q = inbox.get(timeout=0.05)
        except queue.Empty:
            continue
        raw_att = q.attachment.to_bytes() if q.attachment is not None else b""
        if len(raw_att) != 33:
            say("NO_ATTACHMENT")  # rmw_service_data.cpp drops such a request
            continue
        seq, gid = struct.unpack("<q", raw_att[:8])[0], raw_att[17:]
        data = q.payload.to_bytes() if q.payload is not None else b""
        body = body_of(data)
        if len(body) < 16:
            say("BAD_REQUEST", data.hex())
            continue
        a, b = struct.unpack("<qq", body[:16])
        say("REQUEST", got, data.hex(), a, b, seq, gid.hex())
        got += 1
        if events is not None:
            events.put(add_event(REQUEST_RECEIVED, gid, seq, request=(a, b)))
        q.reply(q.key_expr, b"\x00\x01\x00\x00" + struct.pack("<q", a + b),
                attachment=attachment(seq, time.time_ns(), gid))
        # Dropping the query sends the final reply, which ends the client's get.
        del q
        if events is not None:
            events.put(add_event(RESPONSE_SENT, gid, seq, response=a + b))
    say("DONE", got)
    time.sleep(args.linger)
    del queryable, held
    s.close()
    sys.exit(0 if got >= args.count else 2)


def run_service_client(args):
    node = "add_two_ints_client"
    s, zid, held = action_node(args, node)
    events = service_event_pub(s, zid, args, node)
    name = mangle(args.service)
    server, end = None, time.monotonic() + args.timeout
    while server is None and time.monotonic() < end:
        for reply in s.liveliness().get(f"@ros2_lv/{args.domain}/**", timeout=2.0):
            key = str(reply.ok.key_expr) if reply.ok else ""
            if "/SS/" in key and f"/{name}/" in key:
                server = key
        if server is None:
            time.sleep(0.1)
    if server is None:
        say("NO_SERVER")
        sys.exit(3)
    hash_ = server.split("/")[-2]
    token = f"@ros2_lv/{args.domain}/{zid}/0/10/SC/%/%/{node}/{name}/{mangle(ADD)}/{hash_}/{SERVICE_QOS}"
    held.append(s.liveliness().declare_token(token))
    gid = gid_of(token)
    say("CLIENT", gid.hex())
    time.sleep(0.3)
    key = f"{args.domain}/{args.service.strip('/')}/{ADD}/{hash_}"
    for i in range(args.first, args.first + args.count):
        a, b, seq = i + 1, 100 * (i + 1) - 7, i - args.first + 1
        data = b"\x00\x01\x00\x00" + add_request(a, b)
        say("CALL", i, a, b, data.hex())
        if events is not None:
            events.put(add_event(REQUEST_SENT, gid, seq, request=(a, b)))
        replies = s.get(key, payload=data, attachment=attachment(seq, time.time_ns(), gid),
                        target=zenoh.QueryTarget.ALL_COMPLETE, consolidation=zenoh.ConsolidationMode.NONE,
                        timeout=args.timeout)
        total = None
        for reply in replies:
            if reply.ok is None:
                continue
            att = reply.ok.attachment.to_bytes() if reply.ok.attachment is not None else b""
            if len(att) != 33 or struct.unpack("<q", att[:8])[0] != seq:
                continue
            total = struct.unpack("<q", body_of(reply.ok.payload.to_bytes())[:8])[0]
        if total is None:
            say("NO_RESPONSE")
            sys.exit(4)
        if events is not None:
            events.put(add_event(RESPONSE_RECEIVED, gid, seq, response=total))
        say("SUM", i, total)
    say("DONE")
    time.sleep(args.linger)
    del held
    s.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["router", "talker", "listener", "tokens", "call", "action-server", "action-client",
                                    "service-server", "service-client"])
    p.add_argument("--listen", default="tcp/127.0.0.1:7447")
    p.add_argument("--connect", default="tcp/127.0.0.1:7447")
    p.add_argument("--domain", type=int, default=0)
    p.add_argument("--topic", default="/chatter")
    p.add_argument("--dds-type", default=STRING)
    p.add_argument("--hash", default="RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18")
    p.add_argument("--kind", choices=["string", "blob", "clock"], default="string")
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--rate", type=float, default=50.0)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--transient-local", action="store_true")
    p.add_argument("--best-effort", action="store_true",
                   help="talker: best-effort reliability in the token, congestion control DROP")
    p.add_argument("--wait-sub", type=float, default=0.0)
    p.add_argument("--linger", type=float, default=0.5)
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--until", default="")
    p.add_argument("--service-hash", default="", help="call: the hash the client names (default: the server's)")
    p.add_argument("--request", default="", help="call: the request's CDR, encapsulation included, in hex")
    p.add_argument("--action", default="/fibonacci")
    p.add_argument("--goals", type=int, default=1)
    p.add_argument("--cancels", type=int, default=0, help="action-server: also wait for this many cancel requests")
    p.add_argument("--order", type=int, default=5)
    p.add_argument("--cancel", action="store_true", help="action-client: cancel each goal once it ended")
    p.add_argument("--await-readers", action="store_true")
    p.add_argument("--service", default="/add_two_ints", help="service-server/-client: the service's name")
    p.add_argument("--first", type=int, default=0, help="service-client: the number of the first call")
    p.add_argument("--introspection", action="store_true",
                   help="service-server/-client: publish <service>/_service_event with the contents")
    args = p.parse_args()
    {"router": run_router, "talker": run_talker, "listener": run_listener, "tokens": run_tokens, "call": run_call,
     "action-server": run_action_server, "action-client": run_action_client,
     "service-server": run_service_server, "service-client": run_service_client}[args.role](args)


if __name__ == "__main__":
    main()
