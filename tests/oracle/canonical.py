"""Canonical JSON form of a decoded message, shared by the decode_*.py oracles.

A message becomes a JSON object with its fields in definition order; integers stay exact;
non-finite floats become null; every array (bytes and numpy arrays included) becomes a list;
a ROS 1 time/duration becomes {"secs", "nsecs"}. Works by duck typing on genpy messages
(`_slot_types`), mcap_ros2's dynamic classes (`_full_text`) and rosbags' dataclasses, so it
imports none of those libraries.
"""
import dataclasses
import json
import math
import sys

# rosbags gives a message with no fields the member that rosidl adds to empty IDL structs;
# the .msg definition has no fields, so the canonical form is {} (as mcap_ros2 gives it).
_EMPTY_MARKER = "structure_needs_at_least_one_member"


def _text(s):
    """A str that encodes as UTF-8: lone surrogates (e.g. from surrogateescape) are replaced."""
    try:
        return s.encode("utf-8").decode("utf-8")
    except UnicodeEncodeError:
        try:
            return s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        except UnicodeEncodeError:
            return s.encode("utf-8", "replace").decode("utf-8")


def _classvar(annotation):
    return str(annotation).replace("typing.", "").startswith("ClassVar")


def _fields(value):
    """Field names in definition order if value is a message, else None."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # rosbags declares __msgtype__ and constants as ClassVar, in string annotations that
        # dataclasses does not recognise, so they come back as fields: drop them here.
        names = [f.name for f in dataclasses.fields(value) if not _classvar(f.type)]
        return [] if names == [_EMPTY_MARKER] else names
    cls = type(value)
    if hasattr(cls, "_slot_types") or hasattr(cls, "_full_text"):  # genpy / mcap_ros2
        return list(cls.__slots__)
    return None


def canonical(value):
    """Convert a decoded value (message, array or scalar) to plain JSON-ready Python."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return list(bytes(value))
    if hasattr(value, "dtype") and hasattr(value, "tolist"):  # numpy array or scalar
        return canonical(value.tolist())
    if all(hasattr(value, a) for a in ("secs", "nsecs", "to_nsec")):  # genpy Time/Duration
        return {"secs": int(value.secs), "nsecs": int(value.nsecs)}
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    names = _fields(value)
    if names is not None:
        return {name: canonical(getattr(value, name)) for name in names}
    if isinstance(value, (list, tuple)) or hasattr(value, "__len__") and hasattr(value, "__getitem__"):
        return [canonical(v) for v in value]
    raise TypeError(f"no canonical form for {type(value).__name__}: {value!r}")


def line(topic, log_time, message):
    """One NDJSON line (without newline) for a decoded message."""
    obj = {"topic": topic, "log_time": int(log_time), "message": canonical(message)}
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def emit(topic, log_time, message):
    """Write one line to stdout as UTF-8, whatever the locale."""
    sys.stdout.buffer.write((line(topic, log_time, message) + "\n").encode("utf-8"))
