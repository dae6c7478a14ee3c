#!/usr/bin/env python3
"""Write a rosbag2 bag with rosbags' writer, for rbag's reading tests.

usage: rosbags_write.py DIR sqlite3|mcap none|file|message

Writes 300 std_msgs/msg/String messages on /chatter and /other (CDR, rosbags' own type store)
and prints [[topic, timestamp, digest], ...] of what it wrote, in write order, as JSON.
`digest` is FNV-1a 64 of the bytes plus their length, as rbag-testkit computes it.
"""
import json
import sys
from pathlib import Path


from common import digest


def main():
    from rosbags.rosbag2 import Writer
    from rosbags.rosbag2.enums import CompressionFormat, CompressionMode
    from rosbags.rosbag2.writer import StoragePlugin
    from rosbags.typesys import Stores, get_typestore

    out, storage, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    store = get_typestore(Stores.LATEST)
    String = store.types["std_msgs/msg/String"]
    plugin = StoragePlugin.SQLITE3 if storage == "sqlite3" else StoragePlugin.MCAP
    writer = Writer(out, version=9, storage_plugin=plugin)
    if mode != "none":
        writer.set_compression({"file": CompressionMode.FILE, "message": CompressionMode.MESSAGE}[mode], CompressionFormat.ZSTD)
    written = []
    with writer:
        conns = {t: writer.add_connection(t, "std_msgs/msg/String", typestore=store) for t in ("/chatter", "/other")}
        for i in range(300):
            topic = "/chatter" if i % 3 else "/other"
            data = store.serialize_cdr(String(data=f"message {i}"), "std_msgs/msg/String")
            ts = 1_700_000_000_000_000_000 + i * 1_000_000
            writer.write(conns[topic], ts, data)
            written.append([topic, ts, digest(bytes(data))])
    json.dump(written, sys.stdout)


if __name__ == "__main__":
    main()
