"""Raw read with `rosbags` (rosbags.rosbag1.Reader; run with the peers venv python).

Same approach as rosbag_read.py: zlib.adler32 over every payload byte, one timer around the
whole read, and `--net` for a first pass without the checksum.
"""
import time
import zlib
from pathlib import Path

import bench_common
from rosbags.rosbag1 import Reader


def read(path, with_checksum):
    start = time.perf_counter()
    n = total = 0
    ck = 1
    with Reader(Path(path)) as reader:
        for _conn, _timestamp, rawdata in reader.messages():
            if with_checksum:
                ck = zlib.adler32(rawdata, ck)
            n += 1
            total += len(rawdata)
    return n, total, ck, time.perf_counter() - start


if __name__ == '__main__':
    bench_common.main(read)
