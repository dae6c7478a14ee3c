"""Writes the MCAP file bench/serve.sh serves: N small CDR messages (std_msgs/msg/String) on
TOPICS topics, round robin, 1 ms apart, with the mcap library (not rbag).

usage: serve_gen.py OUT N SIZE TOPICS
"""
import struct
import sys

from mcap.writer import CompressionType, Writer


def main():
    out, n, size, topics = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    t0 = 1_700_000_000_000_000_000
    with open(out, "wb") as f:
        w = Writer(f, compression=CompressionType.ZSTD)
        w.start(profile="ros2", library="rbag bench/serve_gen.py")
        schema = w.register_schema(name="std_msgs/msg/String", encoding="ros2msg", data=b"string data\n")
        channels = [w.register_channel(topic=f"/bench/t{i}", message_encoding="cdr", schema_id=schema) for i in range(topics)]
        for i in range(n):
            text = (b"%08d" % i) * (size // 8 + 1)
            text = text[: max(size - 9, 1)]
            # CDR: little-endian encapsulation header, string length (with its NUL), text, NUL.
            data = b"\x00\x01\x00\x00" + struct.pack("<I", len(text) + 1) + text + b"\x00"
            t = t0 + i * 1_000_000
            w.add_message(channel_id=channels[i % topics], log_time=t, publish_time=t, data=data, sequence=i)
        w.finish()


if __name__ == "__main__":
    main()
