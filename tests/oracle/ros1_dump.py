#!/usr/bin/env python3
"""Dump a ROS 1 bag with a reference library, as JSON, for rbag's conformance tests.

usage: ros1_dump.py rosbag|rosbags BAG

Prints {"topics": {name: {type, md5sum, message_count, connections}}, "start_ns", "end_ns",
"messages": [[topic, time_ns, digest], ...], "decoded": N}; `decoded` counts the messages
Debian's rosbag deserialised (null for rosbags) with messages in the library's read order.
`digest` is FNV-1a 64 of the raw bytes plus their length, as rbag-testkit computes it.
"""
import json
import sys


from common import digest


def with_rosbag(path):
    import rosbag
    bag = rosbag.Bag(path, "r")
    topics = {}
    for c in bag._connections.values():
        t = topics.setdefault(c.topic, {"type": c.datatype, "md5sum": c.md5sum, "message_count": 0, "connections": 0})
        t["connections"] += 1
    for t in topics:
        topics[t]["message_count"] = bag.get_message_count(t)
    start = min(ci.start_time for ci in bag._chunks).to_nsec() if bag._chunks else None
    end = max(ci.end_time for ci in bag._chunks).to_nsec() if bag._chunks else None
    msgs = [[topic, t.to_nsec(), digest(raw[1])] for topic, raw, t in bag.read_messages(raw=True)]
    # Deserialise every message with the definitions the bag carries: payloads must be intact.
    decoded = sum(1 for _ in bag.read_messages(raw=False))
    bag.close()
    return topics, start, end, msgs, decoded


def with_rosbags(path):
    from pathlib import Path
    from rosbags.rosbag1 import Reader
    with Reader(Path(path)) as reader:
        topics = {}
        for c in reader.connections:
            t = topics.setdefault(c.topic, {"type": c.msgtype, "md5sum": c.digest, "message_count": 0, "connections": 0})
            t["connections"] += 1
            t["message_count"] += c.msgcount
        msgs = [[c.topic, ts, digest(raw)] for c, ts, raw in reader.messages()]
        start = reader.start_time if msgs else None
        end = reader.end_time if msgs else None
    return topics, start, end, msgs, None


def main():
    lib, path = sys.argv[1], sys.argv[2]
    topics, start, end, msgs, decoded = (with_rosbag if lib == "rosbag" else with_rosbags)(path)
    json.dump({"topics": topics, "start_ns": start, "end_ns": end, "messages": msgs, "decoded": decoded}, sys.stdout)


if __name__ == "__main__":
    main()
