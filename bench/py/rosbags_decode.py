"""rosbags' side of bench/python.sh's decode row: read a ROS 1 bag with rosbags.highlevel's
AnyReader and deserialize every /imu and /tf message to objects, REPEAT times.

usage: rosbags_decode.py BAG REPEAT   →   msgs= ns_per_msg=
"""
import sys
import time
from pathlib import Path

from rosbags.highlevel import AnyReader


def main(path, repeat):
    n = 0
    start = time.perf_counter()
    for _ in range(repeat):
        with AnyReader([Path(path)]) as reader:
            conns = [c for c in reader.connections if c.topic in ("/imu", "/tf")]
            for conn, _t, raw in reader.messages(connections=conns):
                msg = reader.deserialize(raw, conn.msgtype)
                assert msg is not None
                n += 1
    elapsed = time.perf_counter() - start
    print(f"msgs={n} ns_per_msg={elapsed / n * 1e9:.0f}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
