"""Writes a bag for bench/ros1_live.sh with Debian's ROS 1 `rosbag` (run with /usr/bin/python3).

    ros1_live_gen.py OUT.bag string|image COUNT SIZE RATE [TOPIC]

COUNT messages on TOPIC (default /bench), log times 1/RATE s apart from 1700000000 s:
- string: std_msgs/String of SIZE bytes serialized, whose data is the log time in decimal
  nanoseconds (19 digits), a space, then 'x' padding;
- image: sensor_msgs/Image, mono8, SIZE pixels (1024 wide when SIZE is a multiple of 1024, one
  row otherwise; the same pseudo-random pixels in every message), header.stamp the log time,
  header.seq the index; serialized it is SIZE + 45 bytes.

Definitions and md5sums are the real ones (the generated classes'), so any ROS 1 tool can
deserialize the messages. Writes raw (already serialized) messages, uncompressed, 768 KiB chunks.
"""
import os
import struct
import sys

import genpy
import rosbag
from sensor_msgs.msg import Image
from std_msgs.msg import String

T0 = 1_700_000_000 * 10**9


def raw_type(cls):
    return type('Raw', (), {'_type': cls._type, '_md5sum': cls._md5sum, '_full_text': cls._full_text})


def string_payload(t, size):
    text = b'%019d ' % t
    text = text + b'x' * max(0, size - 4 - len(text))
    return struct.pack('<I', len(text)) + text


def image_maker(size):
    frame = b'cam'
    enc = b'mono8'
    pixels = max(1, size)
    width = 1024 if pixels % 1024 == 0 else pixels
    height = pixels // width
    data = os.urandom(pixels)
    tail = (struct.pack('<II', height, width) + struct.pack('<I', len(enc)) + enc
            + struct.pack('<BII', 0, width, pixels) + data)

    def make(i, t):
        return struct.pack('<III', i, t // 10**9, t % 10**9) + struct.pack('<I', len(frame)) + frame + tail
    return make


def main(out, kind, count, size, rate, topic='/bench'):
    count, size, rate = int(count), int(size), float(rate)
    if kind == 'string':
        cls, make = String, (lambda i, t: string_payload(t, size))
    elif kind == 'image':
        cls, make = Image, image_maker(size)
    else:
        sys.exit(f'unknown kind {kind}')
    pytype = raw_type(cls)
    step = 10**9 / rate
    with rosbag.Bag(out, 'w') as bag:
        for i in range(count):
            t = T0 + int(round(i * step))
            data = make(i, t)
            bag.write(topic, (cls._type, data, cls._md5sum, pytype), genpy.Time(t // 10**9, t % 10**9), raw=True)
    print(f'{out}: {count} x {len(data)} B {cls._type} at {rate:g} Hz on {topic}', file=sys.stderr)


if __name__ == '__main__':
    main(*sys.argv[1:])
