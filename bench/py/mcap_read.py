"""The mcap library's reader in the rosbag2 benchmark: `mcap_read.py [--net] FILE.mcap`.

Iterates every message of one MCAP file with `make_reader(f).iter_messages()` (log-time
order, through the summary's chunk indexes; raw payloads, no decoding) and touches every payload
byte with `zlib.adler32`.
"""
import time
import zlib

from mcap.reader import make_reader

from bench_common import main


def read(path, with_checksum):
    start = time.perf_counter()
    n = total = 0
    ck = 1
    with open(path, 'rb') as f:
        reader = make_reader(f)
        if with_checksum:
            for _, _, message in reader.iter_messages():
                data = message.data
                ck = zlib.adler32(data, ck)
                total += len(data)
                n += 1
        else:
            for _, _, message in reader.iter_messages():
                total += len(message.data)
                n += 1
    return n, total, ck, time.perf_counter() - start


if __name__ == '__main__':
    main(read)
