#!/usr/bin/env python3
"""Decode every message of a rosbag2 bag with rosbags (the oracle), as NDJSON.

usage: .peers/venv/bin/python decode_rosbags.py BAGDIR [--msg-path [PKG=]DIR]...

Prints {"topic", "log_time" (ns), "message" (canonical form, see canonical.py)} per line, in
the order rosbags.rosbag2.Reader yields them (rosbags 0.11.9 yields none for some bags, e.g.
sqlite3/talker: a note goes to stderr and the exit is still 0).
Types: rosbags' ROS2_HUMBLE typestore, plus the definitions the bag's connections carry (msg or
idl), plus every DIR/.../<pkg>/msg/X.msg under each --msg-path, named <pkg>/msg/X; with PKG=DIR
every .../msg/X.msg under DIR is named PKG/msg/X (e.g. test_msgs=/usr/share/test_interface_files).
They are added in that order, and one that clashes with a definition already known is not
used (note to stderr): e.g. sqlite3/talker's stub `uint8 level` for rcl_interfaces/msg/Log.
A topic whose messages rosbags cannot decode is left out from its first failure on, with its
type and the error on stderr, and the exit is 3.
ROS 2 `byte` values are given unsigned (0..255), which rosbags 0.11.9 reads as int8: see below.
"""
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from canonical import canonical, emit  # noqa: E402

from rosbags.interfaces import MessageDefinitionFormat  # noqa: E402
from rosbags.rosbag2 import Reader  # noqa: E402
from rosbags.typesys import Stores, get_types_from_idl, get_types_from_msg, get_typestore  # noqa: E402
from rosbags.typesys.base import Nodetype, TypesysError  # noqa: E402

IDL_SEP = "=" * 80 + "\n"


def note(text):
    print(f"decode_rosbags: {text}", file=sys.stderr)


def register(store, types, origin):
    """Register types, keeping the definitions already known where they clash."""
    try:
        store.register(types)
    except TypesysError as e:
        new = {name: t for name, t in types.items() if name not in store.fielddefs}
        note(f"{origin}: {e} Keeping the known one(s); registering only {sorted(new)}")
        store.register(new)


def unsigned_bytes(value, desc, store):
    """Canonical value with `byte` made 0..255: rosbags 0.11.9 reads ROS 2 `byte` (IDL octet) as
    int8, but rosidl maps it to an unsigned octet, as mcap_ros2 reads it."""
    kind, arg = desc
    if kind == Nodetype.NAME:
        fields = dict(store.fielddefs[arg][1])
        return {name: unsigned_bytes(v, fields[name], store) for name, v in value.items()}
    if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
        return [unsigned_bytes(v, arg[0], store) for v in value]
    return value & 0xFF if arg[0] == "byte" else value


def bag_types(connection):
    fmt, data = connection.msgdef.format, connection.msgdef.data
    if fmt == MessageDefinitionFormat.MSG:
        return get_types_from_msg(data, connection.msgtype)
    if fmt == MessageDefinitionFormat.IDL:  # one IDL, or several each headed "IDL: name"
        types = {}
        for idl in data.split(IDL_SEP)[1:] if data.startswith(IDL_SEP + "IDL: ") else [data]:
            types.update(get_types_from_idl(idl.split("\n", 1)[1] if idl.startswith("IDL: ") else idl))
        return types
    return {}


def msg_path_types(spec):
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9_]*)=(.+)", spec)
    pkg, root = (m.group(1), m.group(2)) if m else (None, spec)
    types = {}
    found = (Path(d, f) for d, _, files in os.walk(root, followlinks=True) for f in files)
    for path in sorted(p for p in found if p.suffix in (".msg", ".srv")):
        package = pkg or path.parent.parent.name
        if path.suffix == ".msg" and path.parent.name == "msg":
            types.update(get_types_from_msg(path.read_text(encoding="utf-8"), f"{package}/msg/{path.stem}"))
        elif path.suffix == ".srv" and path.parent.name == "srv":
            types.update(service_types(path.read_text(encoding="utf-8"), f"{package}/srv/{path.stem}"))
    if not types:
        note(f"--msg-path {spec}: no .../msg/*.msg found")
    return types


def service_types(text, name):
    """A .srv's request and response, and the service event type rosidl derives from them
    (ServiceEventInfo info, Request[<=1] request, Response[<=1] response)."""
    request, response = re.split(r"^---[ \t]*$", text, maxsplit=1, flags=re.M)
    types = get_types_from_msg(request, f"{name}_Request")
    types.update(get_types_from_msg(response, f"{name}_Response"))
    event = f"service_msgs/msg/ServiceEventInfo info\n{name}_Request[<=1] request\n{name}_Response[<=1] response\n"
    types.update(get_types_from_msg(event, f"{name}_Event"))
    return {k.replace("/srv/msg/", "/srv/"): unmangle(v) for k, v in types.items()}


def unmangle(value):
    """rosbags names every parsed type pkg/.../msg/X; services' types are pkg/srv/X_*."""
    if isinstance(value, str):
        return value.replace("/srv/msg/", "/srv/")
    if isinstance(value, (tuple, list)):
        return type(value)(unmangle(v) for v in value)
    return value


def main(argv):
    args, msg_paths = [], []
    while argv:
        a = argv.pop(0)
        if a == "--msg-path" and argv:
            msg_paths.append(argv.pop(0))
        elif a.startswith("--msg-path="):
            msg_paths.append(a.split("=", 1)[1])
        else:
            args.append(a)
    if len(args) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    store = get_typestore(Stores.ROS2_HUMBLE)
    # Service events (iron and later) need service_msgs, which humble lacks.
    jazzy = get_typestore(Stores.ROS2_JAZZY)
    store.register({n: jazzy.fielddefs[n] for n in jazzy.fielddefs if n.startswith("service_msgs/")})
    failed = {}
    with Reader(Path(args[0])) as reader:
        for c in reader.connections:
            try:
                types = bag_types(c)
            except TypesysError as e:  # left unknown: its messages fail below, and are reported
                note(f"definition of {c.msgtype} on {c.topic} not parsed: {str(e).splitlines()[0]}")
                continue
            if types:
                register(store, types, f"definition of {c.msgtype} on {c.topic}")
        for spec in msg_paths:
            register(store, msg_path_types(spec), f"--msg-path {spec}")
        count = 0
        for c, timestamp, raw in reader.messages():
            if c.id in failed:
                continue
            try:
                msg = store.deserialize_cdr(raw, c.msgtype)
            except Exception as e:  # noqa: BLE001 - whatever the oracle raises is reported
                failed[c.id] = f"topic {c.topic!r} ({c.msgtype}): {type(e).__name__}: {e}"
                note(failed[c.id])
                continue
            emit(c.topic, timestamp, unsigned_bytes(canonical(msg), (Nodetype.NAME, c.msgtype), store))
            count += 1
        if not failed and count != reader.message_count:
            note(f"rosbags yielded {count} messages, the bag's metadata says {reader.message_count}")
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
