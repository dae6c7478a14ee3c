"""Reads a ROS 1 bag with Debian's rosbag Python API and prints JSON (run with /usr/bin/python3).

usage: record_read.py BAG

{"conns": [{"topic": T, "header": {key: value}}],   every connection record's header
 "msgs": {topic: [hex of each message's bytes, in bag order]},
 "decoded": N,          messages genpy deserialised (read_messages() without raw)
 "roundtrip_errors": [...]}   messages whose genpy re-serialisation differs from the bytes
Exits non-zero when rosbag cannot open or read the bag.
"""
import io
import json
import sys

import rosbag

out = {"conns": [], "msgs": {}, "decoded": 0, "roundtrip_errors": []}
with rosbag.Bag(sys.argv[1]) as bag:
    for c in bag._connections.values():
        h = {}
        for k, v in c.header.items():
            h[k] = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
        out["conns"].append({"topic": c.topic, "header": h})
    raws = []
    for topic, raw, _t in bag.read_messages(raw=True):
        out["msgs"].setdefault(topic, []).append(raw[1].hex())
        raws.append((topic, raw[1]))
    for i, (topic, msg, _t) in enumerate(bag.read_messages()):
        out["decoded"] += 1
        b = io.BytesIO()
        msg.serialize(b)
        if i >= len(raws) or raws[i] != (topic, b.getvalue()):
            out["roundtrip_errors"].append("%d %s" % (i, topic))
print(json.dumps(out))
