"""Payload file of the rosbag2 benchmark: `rosbag2_gen.py OUT SIZE COUNT [SEED]`.

Writes COUNT messages of exactly SIZE bytes back to back: each a valid little-endian CDR
`std_msgs/msg/UInt8MultiArray` (encapsulation header, empty layout, `data` of SIZE - 16
pseudo-random, incompressible bytes). Every writer of the benchmark reads this one file.
"""
import struct
import sys

import numpy as np


def main() -> None:
    out, size, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0x7ba9
    if size < 16:
        raise SystemExit('SIZE must be at least 16')
    # CDR: encapsulation (CDR_LE), layout.dim (empty sequence), layout.data_offset, data length.
    header = np.frombuffer(b'\x00\x01\x00\x00' + struct.pack('<III', 0, 0, size - 16), np.uint8)
    rng = np.random.default_rng(seed)
    batch = max(1, (64 << 20) // size)
    with open(out, 'wb') as f:
        for first in range(0, count, batch):
            k = min(batch, count - first)
            block = rng.integers(0, 256, size=(k, size), dtype=np.uint8)
            block[:, :16] = header
            f.write(block.tobytes())


if __name__ == '__main__':
    main()
