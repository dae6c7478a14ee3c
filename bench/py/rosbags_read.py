"""Raw read with `rosbags` (rosbags.rosbag1.Reader; run with the peers venv python).

Same approach as rosbag_read.py: zlib.adler32 over every payload byte, one timer around the
whole read, and `--net` for a first pass without the checksum.
"""
import sys
import time
import zlib
from pathlib import Path

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


def main(args):
    net = '--net' in args
    path = [a for a in args if a != '--net'][0]
    plain = read(path, False)[3] if net else None
    n, total, ck, elapsed = read(path, True)
    extra = f' checksum={elapsed - plain:.6f}' if net else ''
    print(f'messages={n} bytes={total} adler32={ck:08x} elapsed={elapsed:.6f}{extra}')


if __name__ == '__main__':
    main(sys.argv[1:])
