"""ROS 1's ``rosbag`` Python API, over every format rbag reads.

An existing ROS 1 script runs with one import changed::

    from rbag.compat import rosbag          # instead of: import rosbag

    with rosbag.Bag("run.bag") as bag:      # or a rosbag2 directory, a .db3 or an .mcap
        for topic, msg, t in bag.read_messages(topics=["/imu"]):
            print(t.to_sec(), msg.linear_acceleration.x)

Messages look as genpy makes them: attribute access, ``_type`` and ``_md5sum``, ``bytes`` for
``uint8[]``/``char[]``, tuples for other arrays of numbers (as genpy deserializes them, fixed-size
or not), lists for arrays of strings and messages, and ``secs``/``nsecs``
times with ``to_sec()``/``to_nsec()``. Messages of a ROS 2 bag come in their ROS 1 shape, as
``rbag convert`` converts them (``std_msgs/msg/String`` is ``std_msgs/String``, a Header gets
``seq`` 0); topics ROS 1 has no type for (service events) are left out with a warning.
numpy arrays belong to ``rbag.Reader``, not to this layer. Only reading is supported.
"""
from __future__ import annotations

import collections
import functools
import os
from typing import Any, Dict, Iterator, Optional, Sequence, Tuple, Type, Union

import rbag

__all__ = [
    "Bag",
    "BagMessage",
    "Duration",
    "ROSBagException",
    "ROSBagFormatException",
    "ROSBagUnindexedException",
    "Time",
    "TopicTuple",
    "TypesAndTopicsTuple",
]

BagMessage = collections.namedtuple("BagMessage", "topic message timestamp")
TopicTuple = collections.namedtuple("TopicTuple", ["msg_type", "message_count", "connections", "frequency"])
TypesAndTopicsTuple = collections.namedtuple("TypesAndTopicsTuple", ["msg_types", "topics"])

ROSBagException = rbag.Error
ROSBagFormatException = rbag.StorageError
ROSBagUnindexedException = rbag.StorageError


@functools.total_ordering
class Time:
    """A point in time as genpy's ``Time``: ``secs`` and ``nsecs``."""

    __slots__ = ("secs", "nsecs")

    def __init__(self, secs: int = 0, nsecs: int = 0) -> None:
        total = int(secs) * 1_000_000_000 + int(nsecs)
        self.secs, self.nsecs = divmod(total, 1_000_000_000)

    @classmethod
    def from_sec(cls, sec: float) -> "Time":
        secs = int(sec)
        return cls(secs, int(round((sec - secs) * 1e9)))

    @classmethod
    def from_nsec(cls, nsec: int) -> "Time":
        return cls(0, nsec)

    def to_sec(self) -> float:
        return self.secs + self.nsecs / 1e9

    def to_nsec(self) -> int:
        return self.secs * 1_000_000_000 + self.nsecs

    def is_zero(self) -> bool:
        return self.secs == 0 and self.nsecs == 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Time) and self.to_nsec() == other.to_nsec()

    def __lt__(self, other: "Time") -> bool:
        return self.to_nsec() < other.to_nsec()

    def __hash__(self) -> int:
        return hash(self.to_nsec())

    def __str__(self) -> str:
        return str(self.to_nsec())

    def __repr__(self) -> str:
        return f"genpy.{type(self).__name__}[{self.to_nsec()}]"


class Duration(Time):
    """A span of time as genpy's ``Duration``."""

    __slots__ = ()


def _nsec(t: Union[Time, float, int, None]) -> Optional[int]:
    if t is None:
        return None
    if hasattr(t, "to_nsec"):
        return int(t.to_nsec())  # type: ignore[union-attr]
    return int(round(float(t) * 1e9))


class _Message:
    """The base of the genpy-like message classes this module makes, one per type."""

    __slots__: Tuple[str, ...] = ()
    _type = ""
    _md5sum = ""
    _slot_types: Tuple[str, ...] = ()
    _has_header = False

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and all(
            getattr(self, s) == getattr(other, s) for s in self.__slots__
        )

    def __repr__(self) -> str:
        return _yaml(self, 0).rstrip("\n")

    __str__ = __repr__


def _yaml(msg: _Message, indent: int) -> str:
    pad = " " * indent
    out = []
    for name in msg.__slots__:
        v = getattr(msg, name)
        if isinstance(v, _Message):
            out.append(f"{pad}{name}: \n{_yaml(v, indent + 2)}")
        elif isinstance(v, (list, tuple)) and v and isinstance(v[0], _Message):
            items = "".join(f"{pad}  - \n{_yaml(i, indent + 4)}" for i in v)
            out.append(f"{pad}{name}: \n{items}")
        elif isinstance(v, (list, tuple, bytes)):
            out.append(f"{pad}{name}: {list(v)!r}\n")
        else:
            out.append(f"{pad}{name}: {v}\n")
    return "".join(out)


_CLASSES: Dict[Tuple[str, Tuple[str, ...], Tuple[str, ...], str], Type[_Message]] = {}


def _class_for(type_name: str, fields: Tuple[str, ...], slot_types: Tuple[str, ...], md5: str) -> Type[_Message]:
    """The message class of a type, made once per (type, fields, md5)."""
    key = (type_name, fields, slot_types, md5)
    if key not in _CLASSES:
        _CLASSES[key] = _make_class(type_name, fields, slot_types, md5)
    return _CLASSES[key]


def _make_class(type_name: str, fields: Tuple[str, ...], slot_types: Tuple[str, ...], md5: str) -> Type[_Message]:
    name = type_name.replace("/", "__")
    return type(
        name,
        (_Message,),
        {
            "__slots__": fields,
            "_type": type_name,
            "_md5sum": md5,
            "_slot_types": slot_types,
            "_has_header": "header" in fields and slot_types[fields.index("header")] == "std_msgs/Header",
        },
    )


class Bag:
    """A bag opened for reading, as ``rosbag.Bag(path)``: a ROS 1 ``.bag``, a rosbag2
    directory, or a ``.db3``/``.mcap`` file."""

    def __init__(self, f: Union[str, "os.PathLike[str]"], mode: str = "r", **_options: Any) -> None:
        if mode != "r":
            raise ValueError(f"mode {mode!r}: rbag.compat.rosbag reads bags; write with rbag.Writer")
        self._filename = os.fspath(f)
        self._reader: Optional[rbag.Reader] = rbag.Reader(f)

    @property
    def filename(self) -> str:
        return self._filename

    @property
    def mode(self) -> str:
        return "r"

    @property
    def size(self) -> int:
        return int(self._open().info["size_bytes"])

    def _open(self) -> rbag.Reader:
        if self._reader is None:
            raise ValueError("I/O operation on closed bag")
        return self._reader

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def __enter__(self) -> "Bag":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[BagMessage]:
        return self.read_messages()

    def _md5s(self) -> Dict[str, str]:
        return {c.topic: c.metadata.get("md5sum", "") for c in self._open().connections}

    def read_messages(
        self,
        topics: Union[str, Sequence[str], None] = None,
        start_time: Union[Time, float, None] = None,
        end_time: Union[Time, float, None] = None,
        connection_filter: Any = None,
        raw: bool = False,
        return_connection_header: bool = False,
    ) -> Iterator[BagMessage]:
        """Messages in time order as ``(topic, msg, t)``; ``end_time`` is included, as in rosbag."""
        if isinstance(topics, str):
            topics = [topics]
        reader = self._open()
        if topics is not None:
            topics = [t for t in topics if t in reader.topics]
            if not topics:
                return
        start, end = _nsec(start_time), _nsec(end_time)
        end = None if end is None else end + 1
        md5s = self._md5s()
        if raw:
            messages = reader.messages(topics=topics, start=start, end=end, raw=True, dialect="ros1")
        else:
            # Built in Rust as genpy shapes them, with this module's classes.
            messages = reader._genpy_messages(topics, start, end, _class_for, Time, Duration)
        for m in messages:
            t = Time.from_nsec(m.log_time)
            msg: Any
            if raw:
                msg = (m.type, bytes(m.data), md5s.get(m.topic, ""), None, None)
            else:
                msg = m.message
            if return_connection_header:
                yield BagMessage(m.topic, msg, t), {"topic": m.topic, "type": m.type}  # type: ignore[misc]
            else:
                yield BagMessage(m.topic, msg, t)

    def get_message_count(self, topic_filters: Union[str, Sequence[str], None] = None) -> int:
        topics = self._open().topics
        if topic_filters is None:
            return sum(t.count for t in topics.values())
        if isinstance(topic_filters, str):
            topic_filters = [topic_filters]
        return sum(topics[t].count for t in topic_filters if t in topics)

    def get_start_time(self) -> float:
        start = self._open().start
        if start is None:
            raise ROSBagException("Bag contains no message")
        return start / 1e9

    def get_end_time(self) -> float:
        end = self._open().end
        if end is None:
            raise ROSBagException("Bag contains no message")
        return end / 1e9

    def get_type_and_topic_info(self, topic_filters: Union[str, Sequence[str], None] = None) -> TypesAndTopicsTuple:
        reader = self._open()
        if isinstance(topic_filters, str):
            topic_filters = [topic_filters]
        md5s = self._md5s()
        msg_types: Dict[str, str] = {}
        topics: Dict[str, TopicTuple] = {}
        for name, t in reader.topics.items():
            if topic_filters is not None and name not in topic_filters:
                continue
            ros1_type = t.type.replace("/msg/", "/")
            msg_types[ros1_type] = md5s.get(name, "")
            topics[name] = TopicTuple(ros1_type, t.count, t.connections, t.frequency)
        return TypesAndTopicsTuple(msg_types, topics)

    def __str__(self) -> str:
        return str(self._open())
