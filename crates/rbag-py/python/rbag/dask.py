"""Many bags as one Dask collection, over ``rbag.plan``.

``read_topic`` gives a ``dask.dataframe`` indexed by ``log_time``, with known divisions when
the bags do not overlap in time; ``map_messages`` gives a ``dask.bag`` of what a function
returns for each decoded message. Workers open the bags by path or URL themselves: only the
plan travels. With a cluster, the same code runs with ``distributed.Client(address)``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Iterator, List, Optional, Sequence, Tuple, Union

from rbag._fleet import Partition, _PathOrPaths, _reader, _topic_plan, plan, read_partition


def _frame(partition: Partition, columns: Optional[Sequence[str]]) -> Any:
    return read_partition(partition, columns).to_pandas().set_index("log_time")


def _divisions(parts: List[Partition]) -> Optional[Tuple[int, ...]]:
    """Dask's divisions when partitions follow each other in time, else ``None`` (unknown)."""
    for a, b in zip(parts, parts[1:]):
        if a.end > b.start:
            return None
    return tuple(p.start for p in parts) + (parts[-1].end - 1,)


def read_topic(
    paths: _PathOrPaths,
    topic: str,
    columns: Optional[Sequence[str]] = None,
    *,
    start: Optional[int] = None,
    end: Optional[int] = None,
    target_bytes: int = 64 << 20,
) -> Any:
    """``topic`` of every bag in ``paths`` as a ``dask.dataframe.DataFrame`` indexed by
    ``log_time``, one partition per ``rbag.plan`` partition, in the order of ``paths``."""
    import dask.dataframe as dd

    parts = _topic_plan(paths, topic, start, end, target_bytes)
    meta = _frame(parts[0], columns).iloc[:0]
    return dd.from_map(
        functools.partial(_frame, columns=columns),
        parts,
        meta=meta,
        divisions=_divisions(parts),
        enforce_metadata=False,
    )


def _apply(parts: List[Partition], fn: Callable[[Any], Any]) -> Iterator[Any]:
    for p in parts:
        bag = _reader(p.bag)
        for m in bag.messages(topics=[p.topic], start=p.start, end=p.end):
            yield fn(m)


def map_messages(
    paths: _PathOrPaths,
    fn: Callable[[Any], Any],
    topics: Union[str, Sequence[str], None] = None,
    *,
    start: Optional[int] = None,
    end: Optional[int] = None,
    target_bytes: int = 64 << 20,
) -> Any:
    """A ``dask.bag.Bag`` of ``fn(message)`` for each message (an ``rbag.Message``, decoded
    on access) of ``topics`` in ``paths``, one Dask partition per ``rbag.plan`` partition."""
    import dask.bag as db

    parts = plan(paths, topics, start=start, end=end, target_bytes=target_bytes)
    return db.from_sequence(parts, npartitions=max(1, len(parts))).map_partitions(
        lambda ps: list(_apply(list(ps), fn))
    )
