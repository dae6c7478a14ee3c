"""Raw read with Debian's ROS 1 `rosbag` (run with /usr/bin/python3).

Touches every payload byte with zlib.adler32 (C, fast) so the checksum is not the bottleneck.
Prints `messages=N bytes=B adler32=HEX elapsed=SECONDS checksum=SECONDS`; elapsed covers open +
iterate + close (not the interpreter start or the imports), checksum the part spent in adler32.
"""
import sys
import time
import zlib

import rosbag


def main(path):
    start = time.perf_counter()
    n = total = 0
    ck = 1
    in_ck = 0.0
    clock = time.perf_counter
    bag = rosbag.Bag(path)
    for _topic, msg, _t in bag.read_messages(raw=True):
        data = msg[1]  # (datatype, data, md5sum, position, pytype)
        t = clock()
        ck = zlib.adler32(data, ck)
        in_ck += clock() - t
        n += 1
        total += len(data)
    bag.close()
    elapsed = time.perf_counter() - start
    print(f'messages={n} bytes={total} adler32={ck:08x} elapsed={elapsed:.6f} checksum={in_ck:.6f}')


if __name__ == '__main__':
    main(sys.argv[1])
