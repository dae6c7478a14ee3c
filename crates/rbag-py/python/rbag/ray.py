"""Many bags as one Ray Dataset, over ``rbag.plan``: a ``ray.data`` Datasource whose read
tasks are the plan's partitions. Workers open the bags by path or URL themselves."""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

from rbag._fleet import Partition, _PathOrPaths, _topic_plan, read_partition


def _datasource(parts: List[Partition], columns: Optional[Sequence[str]]) -> Any:
    from ray.data.block import BlockMetadata
    from ray.data.datasource import Datasource, ReadTask

    class RbagDatasource(Datasource):  # type: ignore[misc]
        """The partitions of an ``rbag.plan``, one read task each."""

        def estimate_inmemory_data_size(self) -> Optional[int]:
            return sum(p.bytes for p in parts)

        def get_read_tasks(
            self,
            parallelism: int,
            per_task_row_limit: Optional[int] = None,
            data_context: Optional[Any] = None,
        ) -> List[ReadTask]:
            # One task per partition: the plan already sized them (``parallelism`` is Ray's
            # suggestion, and ``override_num_blocks`` set it to the plan's length).
            return [_task(p) for p in parts]

    def _task(p: Partition) -> ReadTask:
        def read() -> List[Any]:
            return [read_partition(p, columns)]

        meta = BlockMetadata(num_rows=p.messages, size_bytes=p.bytes, input_files=(p.bag,), exec_stats=None)
        return ReadTask(read, meta)

    return RbagDatasource()


def read_topic(
    paths: _PathOrPaths,
    topic: str,
    columns: Optional[Sequence[str]] = None,
    *,
    start: Optional[int] = None,
    end: Optional[int] = None,
    target_bytes: int = 64 << 20,
) -> Any:
    """``topic`` of every bag in ``paths`` as a ``ray.data.Dataset`` of Arrow blocks, one per
    ``rbag.plan`` partition, in the order of ``paths`` (with ``preserve_order`` set in the
    data context, as Ray needs for any ordered read)."""
    import ray.data

    parts = _topic_plan(paths, topic, start, end, target_bytes)
    return ray.data.read_datasource(_datasource(parts, columns), override_num_blocks=len(parts))
