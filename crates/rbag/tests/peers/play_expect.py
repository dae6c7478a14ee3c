"""What Debian's rosbag reads from a ROS 1 BAG, for play_ros1.rs (Debian's /usr/bin/python3).

usage: play_expect.py BAG
Prints JSON: {"start": ns, "end": ns, "topics": {topic: {"type", "md5sum", "latching",
"times": [log time ns...], "digests": [FNV-1a 64 + length of the raw bytes...]}}}, messages
in the bag's time order (rosbag's read_messages(raw=True)).
"""
import json
import sys

import rosbag


def digest(data):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x%08x" % (h, len(data))


topics = {}
with rosbag.Bag(sys.argv[1]) as bag:
    for c in bag._connections.values():
        t = topics.setdefault(c.topic, {"type": c.datatype, "md5sum": c.md5sum, "latching": "0", "times": [], "digests": []})
        if c.header.get("latching") in ("1", b"1"):
            t["latching"] = "1"
    for topic, raw, stamp in bag.read_messages(raw=True):
        topics[topic]["times"].append(stamp.to_nsec())
        topics[topic]["digests"].append(digest(raw[1]))
times = [t for v in topics.values() for t in v["times"]]
start, end = min(times), max(times)
print(json.dumps({"start": start, "end": end, "topics": topics}))
