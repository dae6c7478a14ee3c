#!/usr/bin/python3
"""Decode every message of a ROS 1 bag with Debian's rosbag + genpy (the oracle), as NDJSON.

usage: /usr/bin/python3 decode_ros1.py [--file-order] BAG

Prints {"topic", "log_time" (ns), "message" (canonical form, see canonical.py)} per line.
genpy builds the message classes from the definitions stored in the bag's connections.
Order: rosbag's read_messages order (time order, ties by connection), or with --file-order
the order the records sit in the file (chunk position, then offset in the chunk).
An unindexed bag (e.g. a recorder's .bag.active) is an error, exit 3: rosbag cannot read it
without `rosbag reindex`. Other failures exit 1.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from canonical import emit  # noqa: E402


def messages(bag, file_order):
    if not file_order:
        yield from bag.read_messages(raw=False)
        return
    # rosbag's own read path, without the time-ordered merge of the per-connection indexes.
    entries = sorted(bag._get_entries(bag._get_connections()), key=lambda e: (e.chunk_pos, e.offset))
    for e in entries:
        yield bag._reader.seek_and_read_message_data_record((e.chunk_pos, e.offset), False)


def main(argv):
    file_order = "--file-order" in argv
    args = [a for a in argv if a != "--file-order"]
    if len(args) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    import rosbag
    try:
        bag = rosbag.Bag(args[0], "r")
    except rosbag.ROSBagUnindexedException as e:
        print(f"decode_ros1: {args[0]}: rosbag cannot read it: {e}", file=sys.stderr)
        return 3
    with bag:
        for topic, msg, t in messages(bag, file_order):
            emit(topic, t.to_nsec(), msg)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
