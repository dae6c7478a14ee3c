"""Raw read with `rosbags` (rosbags.rosbag1.Reader; run with the peers venv python).

Same approach as rosbag_read.py: zlib.adler32 over every payload byte. Prints
`messages=N bytes=B adler32=HEX elapsed=SECONDS checksum=SECONDS` (open + iterate + close,
imports excluded; checksum is the part spent in adler32).
"""
import sys
import time
import zlib
from pathlib import Path

from rosbags.rosbag1 import Reader


def main(path):
    start = time.perf_counter()
    n = total = 0
    ck = 1
    in_ck = 0.0
    clock = time.perf_counter
    with Reader(Path(path)) as reader:
        for _conn, _timestamp, rawdata in reader.messages():
            t = clock()
            ck = zlib.adler32(rawdata, ck)
            in_ck += clock() - t
            n += 1
            total += len(rawdata)
    elapsed = time.perf_counter() - start
    print(f'messages={n} bytes={total} adler32={ck:08x} elapsed={elapsed:.6f} checksum={in_ck:.6f}')


if __name__ == '__main__':
    main(sys.argv[1])
