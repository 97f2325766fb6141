"""What a reader yields for a page: its rows, or the same rows packed as an Arrow table (by a helper
process, `offload.py`), and reading values out of either (`page_stage.py` shows them to the cursor)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.compute as pc

from sources.platform.cursor import Cursor
from sources.platform.fastpath.columnar import column_name

Rows = list[dict[str, Any]]
Batch: TypeAlias = Rows | pa.Table


def values_at(batch: Batch, path: tuple[str, ...]) -> list[Any]:
    """The value at `path` (API keys) of every row, from rows or from their packed table."""
    if isinstance(batch, pa.Table):
        return batch.column(column_name(path)).to_pylist()
    return [_dig(row, path) for row in batch]


def observe_newest(
    cursor: Cursor, batch: Batch, value_path: tuple[str, ...], id_path: tuple[str, ...]
) -> None:
    """Show the cursor the value and id of each row; of a table only the rows within the cursor's
    lookback of its newest value, which leave the cursor as all of them would (it keeps only those)."""
    if isinstance(batch, pa.Table):
        values = batch.column(column_name(value_path))
        bound = cursor.bound()
        if bound is not None and batch.num_rows:
            if getattr(values.type, "tz", "UTC") is None:  # a naive column holds UTC (contracts part 1)
                bound = bound.astimezone(UTC).replace(tzinfo=None)
            late = pc.fill_null(pc.greater(values, pa.scalar(bound, type=values.type)), False)
            if pc.any(late).as_py():  # shown one by one: the cursor reports those in the future
                beyond = batch.filter(late)
                for value, record_id in zip(
                    values_at(beyond, value_path), values_at(beyond, id_path), strict=True
                ):
                    cursor.observe(value, record_id)
                batch = batch.filter(pc.invert(late))
                values = batch.column(column_name(value_path))
        newest = pc.max(values)
        if not newest.is_valid:
            return
        # the rows within the cursor's lookback of the newest: it remembers those (`Cursor.observe`)
        start = pa.scalar(newest.as_py() - cursor.lookback, type=values.type)
        batch = batch.filter(pc.greater_equal(values, start))
    for value, record_id in zip(values_at(batch, value_path), values_at(batch, id_path), strict=True):
        cursor.observe(value, record_id)


def _dig(row: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = row
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value
