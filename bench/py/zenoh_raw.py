"""Raw Zenoh endpoints for bench/ros2_live.sh's Zenoh part: the references that `rbag record
--ros2 --middleware zenoh` and `rbag play ... --middleware zenoh` are measured against.

eclipse-zenoh (the Rust core, through its Python binding) with nothing on top: no CDR, no
definitions, no storage. Each speaks rmw_zenoh's conventions, as rbag does: the data key, an
`MP`/`MS` liveliness token, and the 33-byte attachment on every sample. So rbag and the raw
endpoint see the same graph.

    zenoh_raw.py pub --connect E --domain D --topic /bench --size BYTES --count N --rate HZ|max
                     [--wait-subs K] [--timeout S]
    zenoh_raw.py sub --connect E --domain D --topic /bench --count N [--idle S] [--timeout S]

pub waits until K subscription tokens are on the topic, then publishes N samples of BYTES bytes
(a CDR header and filler), paced at HZ or back to back. It prints one JSON line: sent, bytes,
seconds, msgs_per_s.
sub counts samples until N came, or --idle seconds passed with none after the first. It prints
`ready` on stderr once subscribed, then one JSON line: received, bytes, span_s, msgs_per_s.
"""
import argparse
import json
import struct
import sys
import threading
import time

import zenoh

TYPE = "sensor_msgs::msg::dds_::CompressedImage_"
HASH = "RIHS01_" + "0" * 64


def session(endpoint):
    c = zenoh.Config()
    c.insert_json5("mode", '"peer"')
    c.insert_json5("scouting/multicast/enabled", "false")
    c.insert_json5("timestamping/enabled", "true")
    c.insert_json5("connect/endpoints", json.dumps([endpoint]))
    c.insert_json5("listen/endpoints", '["tcp/127.0.0.1:0"]')
    return zenoh.open(c)


def token(s, args, kind, node):
    zid = str(s.zid())
    name = args.topic.replace("/", "%")
    key = f"@ros2_lv/{args.domain}/{zid}/0/1/{kind}/%/%/{node}/{name}/{TYPE}/{HASH}/::,10:,:,:,,"
    return s.liveliness().declare_token(key)


def key_of(args):
    return f"{args.domain}/{args.topic.strip('/')}/{TYPE}/*"


def run_pub(args):
    s = session(args.connect)
    held = token(s, args, "MP", "raw_pub")
    subs = set()
    lock = threading.Lock()
    want = "/MS/"
    name = "/" + args.topic.replace("/", "%") + "/"

    def on_token(sample):
        k = str(sample.key_expr)
        if want in k and name in k:
            with lock:
                if sample.kind == zenoh.SampleKind.PUT:
                    subs.add(k)
                else:
                    subs.discard(k)

    ls = s.liveliness().declare_subscriber(f"@ros2_lv/{args.domain}/**", on_token, history=True)
    t0 = time.time()
    while len(subs) < args.wait_subs:
        if time.time() - t0 > args.timeout:
            print(f"zenoh_raw pub: {len(subs)} of {args.wait_subs} subscriber(s) after {args.timeout} s", file=sys.stderr)
            sys.exit(3)
        time.sleep(0.01)
    time.sleep(0.5)
    k = f"{args.domain}/{args.topic.strip('/')}/{TYPE}/{HASH}"
    pub = s.declare_publisher(k, congestion_control=zenoh.CongestionControl.BLOCK)
    body = b"\x00\x01\x00\x00" + bytes(max(args.size - 4, 0))
    gid = b"\x07" * 16
    period = 0 if args.rate == "max" else 1.0 / float(args.rate)
    start = time.perf_counter()
    for i in range(args.count):
        if period:
            due = start + i * period
            left = due - time.perf_counter()
            if left > 0:
                time.sleep(left)
        pub.put(body, attachment=struct.pack("<qq", i + 1, time.time_ns()) + b"\x10" + gid)
    secs = time.perf_counter() - start
    print(json.dumps({"sent": args.count, "bytes": args.count * len(body), "seconds": secs,
                      "msgs_per_s": args.count / secs if secs > 0 else 0}, separators=(",", ":")), flush=True)
    time.sleep(1.0)
    del ls, held, pub
    s.close()


def run_sub(args):
    s = session(args.connect)
    held = token(s, args, "MS", "raw_sub")
    state = {"n": 0, "bytes": 0, "first": None, "last": None}
    done = threading.Event()

    def on_sample(sample):
        now = time.perf_counter()
        if sample.attachment is None:
            return
        state["n"] += 1
        state["bytes"] += len(sample.payload)
        state["first"] = state["first"] or now
        state["last"] = now
        if state["n"] >= args.count:
            done.set()

    sub = s.declare_subscriber(key_of(args), on_sample)
    print("ready", file=sys.stderr, flush=True)
    t0 = time.time()
    while not done.wait(0.1):
        idle = state["last"] is not None and time.perf_counter() - state["last"] > args.idle
        if idle or time.time() - t0 > args.timeout:
            break
    span = (state["last"] - state["first"]) if state["n"] > 1 else 0
    print(json.dumps({"received": state["n"], "bytes": state["bytes"], "span_s": span,
                      "msgs_per_s": (state["n"] - 1) / span if span > 0 else 0}, separators=(",", ":")), flush=True)
    del sub, held
    s.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["pub", "sub"])
    p.add_argument("--connect", required=True)
    p.add_argument("--domain", type=int, default=0)
    p.add_argument("--topic", default="/bench")
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--rate", default="max")
    p.add_argument("--wait-subs", type=int, default=1)
    p.add_argument("--idle", type=float, default=3.0)
    p.add_argument("--timeout", type=float, default=300.0)
    args = p.parse_args()
    (run_pub if args.role == "pub" else run_sub)(args)


if __name__ == "__main__":
    main()
