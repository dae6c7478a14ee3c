"""Prints what Debian's rosbag reads from BAG: each connection header as `H <topic> <key>
<hex(value)>` lines, then each message's raw bytes as `M <topic> <hex>`.

usage: tcpros_read_bag.py BAG   (Debian's /usr/bin/python3, python3-rosbag)
"""
import sys

import rosbag

with rosbag.Bag(sys.argv[1]) as bag:
    for c in bag._connections.values():
        for k, v in sorted(c.header.items()):
            v = v if isinstance(v, bytes) else v.encode()
            print("H", c.topic, k, v.hex())
    for topic, raw, _t in bag.read_messages(raw=True):
        print("M", topic, raw[1].hex())
