"""Raw write with Debian's ROS 1 `rosbag` (run with /usr/bin/python3).

Loads every message of IN into memory first (topic, raw tuple, genpy.Time), then times only
`rosbag.Bag(OUT, 'w')` + `bag.write(topic, (datatype, data, md5sum, pytype), t, raw=True)` for
each message + `bag.close()` (no fsync). Defaults match bench_write: uncompressed, 768 KiB chunks.
Prints `messages=N bytes=B elapsed=SECONDS` per run; OUT is removed before each run.
"""
import os
import sys
import time

import rosbag


def pytype_for(conn):
    # Bag.write(raw=True) needs a class with _type, _md5sum and _full_text for the connection
    # record; a plain class avoids generating message classes.
    return type('Raw', (), {
        '_type': conn.datatype,
        '_md5sum': conn.md5sum,
        '_full_text': conn.msg_def,
    })


def main(src, out, runs=1):
    with rosbag.Bag(src) as bag:
        pytypes = {}
        for conn in bag._connections.values():
            pytypes.setdefault(conn.topic, pytype_for(conn))
        messages = []
        for topic, raw, t in bag.read_messages(raw=True):
            datatype, data, md5sum = raw[0], raw[1], raw[2]
            messages.append((topic, (datatype, data, md5sum, pytypes[topic]), t))
    total = sum(len(m[1][1]) for m in messages)

    for _ in range(runs):
        if os.path.exists(out):
            os.remove(out)
        start = time.perf_counter()
        bag = rosbag.Bag(out, 'w')
        for topic, raw, t in messages:
            bag.write(topic, raw, t, raw=True)
        bag.close()
        elapsed = time.perf_counter() - start
        print(f'messages={len(messages)} bytes={total} elapsed={elapsed:.6f}', flush=True)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
