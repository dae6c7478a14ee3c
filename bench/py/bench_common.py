"""Shared command line of the Python raw-read benchmarks: `SCRIPT [--net] BAG`.

`read(path, with_checksum)` returns (messages, bytes, adler32, seconds). With `--net` a first
pass runs without the checksum, and `checksum=SECONDS` (the checksummed pass minus it) is
printed too.
"""
import sys


def main(read, args=None):
    args = sys.argv[1:] if args is None else args
    net = '--net' in args
    path = [a for a in args if a != '--net'][0]
    plain = read(path, False)[3] if net else None
    n, total, ck, elapsed = read(path, True)
    extra = f' checksum={elapsed - plain:.6f}' if net else ''
    print(f'messages={n} bytes={total} adler32={ck:08x} elapsed={elapsed:.6f}{extra}')
