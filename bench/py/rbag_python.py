"""The rbag Python package's side of bench/python.sh (run with the peers venv python, where the
release wheel is installed). Each mode prints `key=value` fields that python.sh reads.

  rbag_python.py raw BAG               messages= bytes= adler32= elapsed= (as rosbags_read.py)
  rbag_python.py decode BAG REPEAT     decode every /imu and /tf message, REPEAT times: msgs= ns_per_msg=
  rbag_python.py compat BAG            rbag.compat.rosbag read_messages(), decoded: messages= elapsed=
  rbag_python.py topics BAG            rbag.Reader(BAG).topics, median of 7 fresh readers: ms=
"""
import statistics
import sys
import time
import zlib

import bench_common
import rbag


def raw(path, with_checksum):
    start = time.perf_counter()
    n = total = 0
    ck = 1
    with rbag.Reader(path) as bag:
        for m in bag.messages(raw=True):
            data = m.data
            if with_checksum:
                ck = zlib.adler32(data, ck)
            n += 1
            total += len(data)
    return n, total, ck, time.perf_counter() - start


def decode(path, repeat):
    n = 0
    start = time.perf_counter()
    for _ in range(repeat):
        with rbag.Reader(path) as bag:
            for m in bag.messages(topics=["/imu", "/tf"]):
                assert m.message is not None
                n += 1
    elapsed = time.perf_counter() - start
    print(f"msgs={n} ns_per_msg={elapsed / n * 1e9:.0f}")


def compat(path):
    from rbag.compat import rosbag

    start = time.perf_counter()
    n = 0
    with rosbag.Bag(path) as bag:
        for _topic, _msg, _t in bag.read_messages():
            n += 1
    print(f"messages={n} elapsed={time.perf_counter() - start:.6f}")


def topics(path):
    times = []
    for _ in range(7):
        start = time.perf_counter()
        with rbag.Reader(path) as bag:
            count = len(bag.topics)
        times.append(time.perf_counter() - start)
    print(f"topics={count} ms={statistics.median(times) * 1000:.2f}")


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "raw":
        bench_common.main(raw, args)
    elif mode == "decode":
        decode(args[0], int(args[1]))
    elif mode == "compat":
        compat(args[0])
    elif mode == "topics":
        topics(args[0])
    else:
        sys.exit(__doc__)
