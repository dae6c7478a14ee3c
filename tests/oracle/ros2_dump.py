#!/usr/bin/env python3
"""Dump a ROS 2 bag with a reference reader, as JSON, for rbag's conformance tests.

usage: ros2_dump.py sqlite|mcap|rosbags PATH

sqlite PATH (a .db3 file, read with the stdlib sqlite3, immutable so no -wal/-shm is made):
    {"schema_version": int|null, "topics": {name: {type, serialization_format,
    offered_qos_profiles, type_description_hash, message_count}}, "definitions": {topic_type:
    {encoding, text, type_description_hash}}, "metadata": yaml text|null, "start_ns", "end_ns",
    "messages": [[topic, timestamp, digest], ...]} with messages ordered by (timestamp, id).
    Columns and tables that a schema version lacks come out as null (or {} for definitions).

mcap PATH (a .mcap file, read with the `mcap` library, payloads not decoded):
    {"profile", "library", "schemas": {name: {encoding, data}}, "channels": {topic:
    {message_encoding, schema, metadata, message_count}}, "metadata": {name: {k: v}},
    "start_ns", "end_ns", "messages": [[topic, log_time, publish_time, digest], ...],
    "summary": bool} with messages in log-time order; a topic's message_count sums its channels.

rosbags PATH (a rosbag2 directory, or a single .db3/.mcap file, read with rosbags.rosbag2):
    {"topics": {name: {type, serialization_format, message_count}}, "start_ns", "end_ns",
    "messages": [[topic, timestamp, digest], ...], "error": str|null} with messages in the
    reader's order; then every definition the bag carries (msg or idl) is parsed with
    rosbags.typesys, as a deserialising reader must. message_count and start/end are what
    rosbags reports (from metadata.yaml for a directory); end_ns is the last timestamp (rosbags'
    end_time is one past it). If rosbags raises, str(exception) goes in "error" with whatever
    was collected, and the exit is still 0.

metadata PATH (a metadata.yaml): the YAML as JSON, parsed by ruamel.yaml.

`digest` is FNV-1a 64 of the raw bytes plus their length, as rbag-testkit computes it.
"""
import json
import sys


from common import digest


def _text(value):
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode("utf-8", errors="replace")
    return value


def with_sqlite(path):
    import sqlite3
    db = sqlite3.connect(f"file:{path}?immutable=1", uri=True)
    try:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}

        def columns(table):
            return {row[1] for row in db.execute(f"PRAGMA table_info({table})")} if table in tables else set()

        schema_version = None
        if "schema" in tables:
            row = db.execute("SELECT schema_version FROM schema ORDER BY schema_version DESC LIMIT 1").fetchone()
            schema_version = row[0] if row else None

        tcols = columns("topics")
        opt = [c for c in ("offered_qos_profiles", "type_description_hash") if c in tcols]
        names = {}
        topics = {}
        for row in db.execute("SELECT id, name, type, serialization_format%s FROM topics ORDER BY id"
                              % "".join(", " + c for c in opt)):
            tid, name, typ, fmt = row[:4]
            extra = dict(zip(opt, row[4:]))
            names[tid] = name
            topics.setdefault(name, {
                "type": typ,
                "serialization_format": fmt,
                "offered_qos_profiles": _text(extra.get("offered_qos_profiles")),
                "type_description_hash": _text(extra.get("type_description_hash")),
                "message_count": 0,
            })

        definitions = {}
        if "message_definitions" in tables:
            for typ, enc, text, tdh in db.execute(
                    "SELECT topic_type, encoding, encoded_message_definition, type_description_hash "
                    "FROM message_definitions ORDER BY id"):
                definitions[typ] = {"encoding": enc, "text": _text(text), "type_description_hash": _text(tdh)}

        metadata = None
        if "metadata" in tables:
            row = db.execute("SELECT metadata FROM metadata ORDER BY id DESC LIMIT 1").fetchone()
            metadata = _text(row[0]) if row else None

        msgs = []
        for tid, ts, data in db.execute("SELECT topic_id, timestamp, data FROM messages ORDER BY timestamp, id"):
            name = names.get(tid)
            if name is not None:
                topics[name]["message_count"] += 1
            msgs.append([name, ts, digest(bytes(data))])
        start = msgs[0][1] if msgs else None
        end = max(m[1] for m in msgs) if msgs else None
    finally:
        db.close()
    return {"schema_version": schema_version, "topics": topics, "definitions": definitions,
            "metadata": metadata, "start_ns": start, "end_ns": end, "messages": msgs}


def with_mcap(path):
    from mcap.reader import make_reader
    from mcap.records import Channel, Schema
    from mcap.stream_reader import StreamReader
    with open(path, "rb") as f:
        reader = make_reader(f)
        header = reader.get_header()
        summary = reader.get_summary()
        if summary is not None:
            schema_recs, channel_recs = summary.schemas, summary.channels
        else:
            # No summary: take schemas and channels from a linear pass over the data section.
            schema_recs, channel_recs = {}, {}
            f.seek(0)
            for rec in StreamReader(f).records:
                if isinstance(rec, Schema):
                    schema_recs.setdefault(rec.id, rec)
                elif isinstance(rec, Channel):
                    channel_recs.setdefault(rec.id, rec)
        schemas = {}
        for sid in sorted(schema_recs):
            s = schema_recs[sid]
            schemas.setdefault(s.name, {"encoding": s.encoding, "data": _text(s.data)})
        channels = {}
        for cid in sorted(channel_recs):
            c = channel_recs[cid]
            s = schema_recs.get(c.schema_id)
            channels.setdefault(c.topic, {"message_encoding": c.message_encoding,
                                          "schema": s.name if s is not None else None,
                                          "metadata": dict(c.metadata), "message_count": 0})
        metadata = {m.name: dict(m.metadata) for m in reader.iter_metadata()}
        msgs = []
        for schema, channel, message in reader.iter_messages(log_time_order=True):
            ch = channels.setdefault(channel.topic, {
                "message_encoding": channel.message_encoding,
                "schema": schema.name if schema is not None else None,
                "metadata": dict(channel.metadata), "message_count": 0})
            ch["message_count"] += 1
            msgs.append([channel.topic, message.log_time, message.publish_time, digest(message.data)])
    return {"profile": header.profile, "library": header.library, "schemas": schemas,
            "channels": channels, "metadata": metadata,
            "start_ns": min(m[1] for m in msgs) if msgs else None,
            "end_ns": max(m[1] for m in msgs) if msgs else None,
            "messages": msgs, "summary": summary is not None}


def with_rosbags(path):
    from pathlib import Path
    from rosbags.interfaces import MessageDefinitionFormat
    from rosbags.rosbag2 import Reader
    from rosbags.typesys import get_types_from_idl, get_types_from_msg
    out = {"topics": {}, "start_ns": None, "end_ns": None, "messages": [], "error": None}
    try:
        with Reader(Path(path)) as reader:
            for c in reader.connections:
                t = out["topics"].setdefault(c.topic, {"type": c.msgtype,
                                                       "serialization_format": c.ext.serialization_format,
                                                       "message_count": 0})
                t["message_count"] += c.msgcount
            if reader.message_count:
                out["start_ns"] = reader.start_time
                out["end_ns"] = reader.end_time - 1
            for c, ts, raw in reader.messages():
                out["messages"].append([c.topic, ts, digest(raw)])
            # Parse every definition the bag carries, as a deserialising reader must.
            for c in reader.connections:
                if c.msgdef.format == MessageDefinitionFormat.MSG:
                    get_types_from_msg(c.msgdef.data, c.msgtype)
                elif c.msgdef.format == MessageDefinitionFormat.IDL:
                    get_types_from_idl(c.msgdef.data)
    except Exception as exc:  # the tests want to see rosbags' failures, not a traceback
        out["error"] = str(exc) or type(exc).__name__
    return out


def with_metadata(path):
    """metadata.yaml as plain JSON, parsed by ruamel.yaml (safe loader), not by rbag."""
    from ruamel.yaml import YAML
    with open(path) as f:
        return YAML(typ="safe").load(f)


def main():
    lib, path = sys.argv[1], sys.argv[2]
    dump = {"sqlite": with_sqlite, "mcap": with_mcap, "rosbags": with_rosbags, "metadata": with_metadata}[lib](path)
    json.dump(dump, sys.stdout)


if __name__ == "__main__":
    main()
