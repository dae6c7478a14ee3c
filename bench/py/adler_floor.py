"""Checksum floor of the Python readers in the rosbag2 benchmark:
`adler_floor.py PAYLOADS SIZE`: `zlib.adler32` over every SIZE-byte slice of the (mapped)
payload file, as the Python readers checksum every payload. Prints `messages=N bytes=B
adler32=HEX elapsed=S`; the adler32 must equal the Python readers'.
"""
import mmap
import sys
import time
import zlib


def main() -> None:
    path, size = sys.argv[1], int(sys.argv[2])
    with open(path, 'rb') as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mm)
    start = time.perf_counter()
    n = 0
    ck = 1
    for off in range(0, len(view), size):
        ck = zlib.adler32(view[off:off + size], ck)
        n += 1
    elapsed = time.perf_counter() - start
    print(f'messages={n} bytes={len(view)} adler32={ck:08x} elapsed={elapsed:.6f}')
    view.release()
    mm.close()


if __name__ == '__main__':
    main()
