"""rosbags-dataframe's ``get_dataframe`` over rbag: one topic's fields as a pandas DataFrame.

    from rbag.compat.dataframe import get_dataframe

    with rbag.Reader("run.bag") as reader:      # any format rbag reads
        df = get_dataframe(reader, "/imu", ["linear_acceleration.x", "header.frame_id"])

The index is the log time (``datetime64[ns]``), one column per key; keys are field names with
dots for nested messages, as in rosbags-dataframe. Needs pandas.
"""
from __future__ import annotations

from typing import Any, Callable, List, Sequence

import rbag

__all__ = ["DataframeError", "get_dataframe"]


class DataframeError(rbag.Error):
    """An unknown topic or field."""


def _getter(key: str) -> Callable[[Any], Any]:
    parts = key.split(".")

    def get(msg: Any) -> Any:
        for p in parts:
            msg = getattr(msg, p)
        return msg

    return get


def get_dataframe(reader: rbag.Reader, topicname: str, keys: Sequence[str]) -> Any:
    """Reads every message of ``topicname`` and returns ``keys`` of each as a
    ``pandas.DataFrame`` indexed by log time."""
    import pandas as pd  # type: ignore[import-untyped]

    if topicname not in reader.topics:
        raise DataframeError(f"Requested unknown topic {topicname!r}.")
    getters = [_getter(k) for k in keys]
    times: List[int] = []
    rows: List[List[Any]] = []
    for m in reader.messages(topics=topicname):
        try:
            rows.append([g(m.message) for g in getters])
        except AttributeError as e:
            raise DataframeError(f"{topicname}: {e}") from None
        times.append(m.log_time)
    return pd.DataFrame(rows, columns=tuple(keys), index=pd.to_datetime(times))
