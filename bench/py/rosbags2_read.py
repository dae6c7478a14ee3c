"""rosbags' rosbag2 reader in the rosbag2 benchmark: `rosbags2_read.py [--net] BAG`.

Iterates every message of the bag directory with `rosbags.rosbag2.Reader.messages()` (raw
payloads, no deserialisation) and touches every payload byte with `zlib.adler32`.
"""
import time
import zlib
from pathlib import Path

from rosbags.rosbag2 import Reader

from bench_common import main


def read(path, with_checksum):
    start = time.perf_counter()
    n = total = 0
    ck = 1
    with Reader(Path(path)) as reader:
        if with_checksum:
            for _, _, data in reader.messages():
                ck = zlib.adler32(data, ck)
                total += len(data)
                n += 1
        else:
            for _, _, data in reader.messages():
                total += len(data)
                n += 1
    return n, total, ck, time.perf_counter() - start


if __name__ == '__main__':
    main(read)
