"""Reads a rosbag2 bag with third-party readers and prints JSON, for record_ros2.rs.

    ros2_read.py rosbags DIR    rosbags.rosbag2.Reader over the bag directory
    ros2_read.py mcap FILE      the `mcap` library's reader over one .mcap file
    ros2_read.py mcap-stream FILE   the `mcap` library's record stream, from the start up to
                                the end or to the first error (a recorder killed mid-file)

rosbags: {"error": str|null, "message_count": int, "compression_mode": str|null,
          "topics": {topic: {"type", "count", "msgdef_format", "msgdef", "qos": [{"reliability",
                     "durability"}, ...]}},
          "messages": [[topic, timestamp, hex], ...]}   (the reader's order)
mcap:    {"error": str|null, "profile", "library", "schemas": {name: {"encoding", "data"}},
          "channels": {topic: {"schema", "message_encoding"}},
          "messages": [[topic, log_time, hex], ...]}   (file order)

Payloads longer than 64 KiB are printed as "len:<n>" instead of hex.
"""
import json
import sys
from pathlib import Path

BIG = 64 * 1024


def hexof(raw):
    raw = bytes(raw)
    return raw.hex() if len(raw) <= BIG else f"len:{len(raw)}"


def qos_of(q):
    def name(v):
        v = getattr(v, "name", v)
        return str(v).lower()

    return {"reliability": name(q.reliability), "durability": name(q.durability)}


def with_rosbags(path):
    from rosbags.rosbag2 import Reader

    out = {"error": None, "message_count": None, "compression_mode": None, "topics": {}, "messages": []}
    try:
        with Reader(Path(path)) as reader:
            out["message_count"] = reader.message_count
            out["compression_mode"] = reader.compression_mode
            for c in reader.connections:
                t = out["topics"].setdefault(c.topic, {"type": c.msgtype, "count": 0, "msgdef_format": None, "msgdef": None, "qos": []})
                t["count"] += c.msgcount
                if c.msgdef is not None:
                    t["msgdef_format"] = getattr(c.msgdef.format, "name", str(c.msgdef.format))
                    t["msgdef"] = c.msgdef.data
                qos = getattr(c.ext, "offered_qos_profiles", None) or []
                t["qos"].extend(qos_of(q) for q in qos)
            for c, ts, raw in reader.messages():
                out["messages"].append([c.topic, ts, hexof(raw)])
    except Exception as exc:  # the test wants the reason, not a traceback
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def with_mcap(path):
    from mcap.reader import make_reader

    out = {"error": None, "profile": None, "library": None, "schemas": {}, "channels": {}, "messages": []}
    try:
        with open(path, "rb") as f:
            reader = make_reader(f)
            header = reader.get_header()
            out["profile"], out["library"] = header.profile, header.library
            for schema, channel, message in reader.iter_messages(log_time_order=False):
                if schema is not None:
                    out["schemas"].setdefault(schema.name, {"encoding": schema.encoding, "data": schema.data.decode("utf-8", "replace")})
                out["channels"].setdefault(channel.topic, {"schema": schema.name if schema is not None else None, "message_encoding": channel.message_encoding})
                out["messages"].append([channel.topic, message.log_time, hexof(message.data)])
            summary = reader.get_summary()
            if summary is not None:
                for s in summary.schemas.values():
                    out["schemas"].setdefault(s.name, {"encoding": s.encoding, "data": s.data.decode("utf-8", "replace")})
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def with_mcap_stream(path):
    from mcap.records import Channel, Message, Schema
    from mcap.stream_reader import StreamReader

    out = {"error": None, "profile": None, "library": None, "schemas": {}, "channels": {}, "messages": []}
    schemas, channels = {}, {}
    try:
        with open(path, "rb") as f:
            for rec in StreamReader(f, skip_magic=False).records:
                if isinstance(rec, Schema):
                    schemas[rec.id] = rec
                    out["schemas"].setdefault(rec.name, {"encoding": rec.encoding, "data": rec.data.decode("utf-8", "replace")})
                elif isinstance(rec, Channel):
                    channels[rec.id] = rec
                    s = schemas.get(rec.schema_id)
                    out["channels"].setdefault(rec.topic, {"schema": s.name if s is not None else None, "message_encoding": rec.message_encoding})
                elif isinstance(rec, Message):
                    out["messages"].append([channels[rec.channel_id].topic, rec.log_time, hexof(rec.data)])
                elif type(rec).__name__ == "Header":
                    out["profile"], out["library"] = rec.profile, rec.library
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def main():
    mode, path = sys.argv[1], sys.argv[2]
    json.dump({"rosbags": with_rosbags, "mcap": with_mcap, "mcap-stream": with_mcap_stream}[mode](path), sys.stdout)


if __name__ == "__main__":
    main()
