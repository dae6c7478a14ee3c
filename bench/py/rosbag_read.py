"""Raw read with Debian's ROS 1 `rosbag` (run with /usr/bin/python3).

Touches every payload byte with zlib.adler32 (C, fast) so the checksum is not the bottleneck.
Prints `messages=N bytes=B adler32=HEX elapsed=SECONDS`; elapsed covers open + iterate + close,
not the interpreter start or the imports.
"""
import sys
import time
import zlib

import rosbag


def main(path):
    start = time.perf_counter()
    n = total = 0
    ck = 1
    bag = rosbag.Bag(path)
    for _topic, msg, _t in bag.read_messages(raw=True):
        data = msg[1]  # (datatype, data, md5sum, position, pytype)
        ck = zlib.adler32(data, ck)
        n += 1
        total += len(data)
    bag.close()
    elapsed = time.perf_counter() - start
    print(f'messages={n} bytes={total} adler32={ck:08x} elapsed={elapsed:.6f}')


if __name__ == '__main__':
    main(sys.argv[1])
