"""Debian rosbag's side of bench/python.sh's compat row (run with /usr/bin/python3): the same
loop as `rbag_python.py compat`, every message decoded by genpy.

usage: rosbag_decode_all.py BAG   →   messages= elapsed=
"""
import sys
import time

import rosbag


def main(path):
    start = time.perf_counter()
    n = 0
    with rosbag.Bag(path) as bag:
        for _topic, _msg, _t in bag.read_messages():
            n += 1
    print(f"messages={n} elapsed={time.perf_counter() - start:.6f}")


if __name__ == "__main__":
    main(sys.argv[1])
