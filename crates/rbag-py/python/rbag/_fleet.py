"""Partition plans over many bags: the planner and the reading of one partition.

``rbag.plan`` cuts the reading of topics over many bags (paths or URLs) into partitions of
about ``target_bytes``; each is one bag, one topic and a slice of log time. A distributed
engine runs one task per partition, and the task opens its bag by path or URL itself with
``rbag.read_partition``: nothing is shipped to workers but the plan. ``rbag.dask`` and
``rbag.ray`` are thin layers over these two functions.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Union

from rbag._rbag import Reader, _plan

_PathOrPaths = Union[str, Sequence[str]]


@dataclass(frozen=True)
class Partition:
    """One task's share: messages of ``topic`` in ``bag`` with ``start <= log_time < end``.

    ``messages`` and ``bytes`` are estimates from the bag's summary (the topic's share of the
    bag, spread evenly over its time span); ``index`` is the partition's place in the plan.
    """

    bag: str
    topic: str
    start: int
    end: int
    messages: int
    bytes: int
    index: int


def plan(
    paths: _PathOrPaths,
    topics: Union[str, Sequence[str], None] = None,
    start: Optional[int] = None,
    end: Optional[int] = None,
    target_bytes: int = 64 << 20,
) -> List[Partition]:
    """Partitions of about ``target_bytes`` for reading ``topics`` (all when ``None``) from
    ``paths`` (bag paths or URLs) between ``start`` and ``end`` (ns, end exclusive).

    Only each bag's summary is read. Partitions come in the order of ``paths``, then by topic,
    then by time; within one topic of one bag they do not overlap and leave no gaps.
    """
    bags = [paths] if isinstance(paths, str) else list(paths)
    wanted = [topics] if isinstance(topics, str) else (list(topics) if topics is not None else None)
    return [Partition(**p) for p in _plan(bags, wanted, start, end, target_bytes)]


def _topic_plan(
    paths: _PathOrPaths, topic: str, start: Optional[int], end: Optional[int], target_bytes: int
) -> List[Partition]:
    """The plan of one topic, refused when it holds nothing (an engine needs a schema)."""
    parts = plan(paths, [topic], start=start, end=end, target_bytes=target_bytes)
    if not parts:
        raise ValueError(f"topic {topic}: no messages in the given bags and time window")
    return parts


# Readers a worker keeps open, by bag: a worker that reads several partitions of one bag opens
# (and for a URL, fetches the summary of) that bag once.
_OPEN: "OrderedDict[str, Reader]" = OrderedDict()
_OPEN_MAX = 8
_OPEN_LOCK = threading.Lock()


def _reader(bag: str) -> Reader:
    with _OPEN_LOCK:
        r = _OPEN.pop(bag, None)
        if r is None:
            r = Reader(bag)
        _OPEN[bag] = r
        while len(_OPEN) > _OPEN_MAX:
            _OPEN.popitem(last=False)[1].close()
        return r


def read_partition(partition: Partition, columns: Optional[Sequence[str]] = None) -> Any:
    """The partition's messages as a ``pyarrow.Table`` (``Reader.to_arrow`` of its slice)."""
    return _reader(partition.bag).to_arrow(
        partition.topic, columns, start=partition.start, end=partition.end
    )
