"""Raw read with Debian's ROS 1 `rosbag` (run with /usr/bin/python3).

Touches every payload byte with zlib.adler32 (C, fast) so the checksum is not the bottleneck.
Prints `messages=N bytes=B adler32=HEX elapsed=SECONDS`; elapsed covers open + iterate + close
(not the interpreter start or the imports). With `--net`, a first pass iterates without the
checksum and `checksum=SECONDS` (the checksummed pass minus that one) is added. No message is
timed on its own, as in bench_read.
"""
import time
import zlib

import bench_common
import rosbag


def read(path, with_checksum):
    start = time.perf_counter()
    n = total = 0
    ck = 1
    bag = rosbag.Bag(path)
    for _topic, msg, _t in bag.read_messages(raw=True):
        data = msg[1]  # (datatype, data, md5sum, position, pytype)
        if with_checksum:
            ck = zlib.adler32(data, ck)
        n += 1
        total += len(data)
    bag.close()
    return n, total, ck, time.perf_counter() - start


if __name__ == '__main__':
    bench_common.main(read)
