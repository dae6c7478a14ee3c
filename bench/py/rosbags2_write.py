"""rosbags' rosbag2 writer in the rosbag2 benchmark:
`rosbags2_write.py sqlite3|mcap PAYLOADS SIZE OUT`.

Writes every SIZE-byte slice of PAYLOADS (mapped, handed over as zero-copy memoryviews) as one
`std_msgs/msg/UInt8MultiArray` message, 1 ms apart, with `rosbags.rosbag2.Writer` (version 9,
default settings), then fsyncs every file of the bag, the bag directory and its parent, as
bench_rosbag2_write does. Prints `messages=N bytes=B write=S sync=S elapsed=S`.
"""
import mmap
import os
import sys
import time
from pathlib import Path

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

T0 = 1_700_000_000_000_000_000
PERIOD = 1_000_000


def fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def main() -> None:
    storage, payloads, size, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
    plugin = {'sqlite3': StoragePlugin.SQLITE3, 'mcap': StoragePlugin.MCAP}[storage]
    typestore = get_typestore(Stores.LATEST)
    with open(payloads, 'rb') as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mm)
    total = len(view)
    if total % size:
        raise SystemExit(f'{payloads}: {total} bytes is not a multiple of {size}')

    start = time.perf_counter()
    n = 0
    with Writer(out, version=9, storage_plugin=plugin) as writer:
        conn = writer.add_connection('/bench/data', 'std_msgs/msg/UInt8MultiArray', typestore=typestore)
        write = writer.write
        for off in range(0, total, size):
            write(conn, T0 + n * PERIOD, view[off:off + size])
            n += 1
    written = time.perf_counter()
    for p in out.iterdir():
        if p.is_file():
            fsync_path(p)
    fsync_path(out)
    fsync_path(out.parent)
    end = time.perf_counter()
    print(f'messages={n} bytes={total} write={written - start:.6f} sync={end - written:.6f} elapsed={end - start:.6f}')
    view.release()
    mm.close()


if __name__ == '__main__':
    main()
