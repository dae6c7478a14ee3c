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
                         [--kind string|blob] [--size BYTES] [--count N] [--rate HZ]
                         [--depth K] [--transient-local] [--wait-sub S] [--linger S]
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


def qos_text(depth, transient_local):
    # qos_to_keyexpr: reliability, durability, history,depth, deadline, lifespan, liveliness,lease.
    dur = "1" if transient_local else ""
    d = "" if depth == 42 else str(depth)
    return f":{dur}:,{d}:,:,:,,"


def mangle(s):
    return s.replace("/", "%")


def tokens_for(zid, args, kind):
    base = f"@ros2_lv/{args.domain}/{zid}/0"
    node = "talker" if kind == "MP" else "listener"
    node_token = f"{base}/0/NN/%/%/{node}"
    entity = (f"{base}/10/{kind}/%/%/{node}/{mangle(args.topic)}/{mangle(args.dds_type)}/"
              f"{mangle(args.hash)}/{qos_text(args.depth, args.transient_local)}")
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["router", "talker", "listener", "tokens", "call"])
    p.add_argument("--listen", default="tcp/127.0.0.1:7447")
    p.add_argument("--connect", default="tcp/127.0.0.1:7447")
    p.add_argument("--domain", type=int, default=0)
    p.add_argument("--topic", default="/chatter")
    p.add_argument("--dds-type", default=STRING)
    p.add_argument("--hash", default="RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18")
    p.add_argument("--kind", choices=["string", "blob"], default="string")
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--count", type=int, default=10)
    p.add_argument("--rate", type=float, default=50.0)
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--transient-local", action="store_true")
    p.add_argument("--wait-sub", type=float, default=0.0)
    p.add_argument("--linger", type=float, default=0.5)
    p.add_argument("--timeout", type=float, default=20.0)
    p.add_argument("--until", default="")
    p.add_argument("--service-hash", default="", help="call: the hash the client names (default: the server's)")
    p.add_argument("--request", default="", help="call: the request's CDR, encapsulation included, in hex")
    args = p.parse_args()
    {"router": run_router, "talker": run_talker, "listener": run_listener, "tokens": run_tokens, "call": run_call}[args.role](args)


if __name__ == "__main__":
    main()
