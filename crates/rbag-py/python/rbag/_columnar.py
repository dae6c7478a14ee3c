"""pandas and numpy views of the tables ``Reader.to_arrow`` builds."""

from __future__ import annotations

from typing import Any


def to_pandas(table: Any) -> Any:
    """The table as a DataFrame indexed by ``log_time``."""
    return table.to_pandas().set_index("log_time")


def to_numpy(table: Any, topic: str, field: str) -> Any:
    """The table's columns (one field, or the numbers of one message) as one numpy array."""
    import numpy as np
    import pyarrow as pa  # type: ignore[import-untyped]

    arrays = []
    for name in table.column_names:
        if name == "log_time":
            continue
        column = table.column(name).combine_chunks()
        kind = column.type
        if pa.types.is_fixed_size_list(kind) and _is_number(kind.value_type):
            values = column.flatten().to_numpy(zero_copy_only=False)
            arrays.append(values.reshape(len(column), kind.list_size))
        elif _is_number(kind):
            arrays.append(column.to_numpy(zero_copy_only=False))
        else:
            raise TypeError(
                f"topic {topic}: column {name} is {kind}, not numbers; use to_arrow() for it"
            )
    if len(arrays) == 1:
        return arrays[0]
    if all(a.ndim == 1 for a in arrays):
        return np.column_stack(arrays)
    raise TypeError(
        f"topic {topic}: {field} holds arrays as well as numbers; ask for one of its fields"
    )


def _is_number(kind: Any) -> bool:
    import pyarrow as pa  # type: ignore[import-untyped]

    return bool(pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind))
