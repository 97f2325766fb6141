"""The records a forgotten person is linked to by the API, blanked on the way in (`fields.Linked`).

A lesson comment carries only its author's name; `forget --email` asks the API for the person's comments
and keeps their ids on the forgotten list (group = the table), so that a later sync that reads them again
blanks them again: their `blanked` fields null, the row kept (issue 49).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from sources.platform.privacy.fields import Linked


def blank_linked(item: Any, linked: Linked, ids: frozenset[str]) -> tuple[Any, int]:
    """`item` (a row, a list of rows or an Arrow table) with the records whose `linked.key` is in `ids`
    blanked, and how many were."""
    if isinstance(item, pa.Table):
        return _blank_table(item, linked, ids)
    hits = 0
    for row in item if isinstance(item, list) else [item]:
        if isinstance(row, dict) and row.get(linked.key) is not None and str(row[linked.key]) in ids:
            hits += 1
            for name in linked.blanked:
                if name in row:
                    row[name] = None
    return item, hits


def _blank_table(table: pa.Table, linked: Linked, ids: frozenset[str]) -> tuple[pa.Table, int]:
    if linked.key not in table.column_names:
        return table, 0
    keys = table.column(linked.key)
    text = (keys.cast(pa.string()) if keys.type != pa.string() else keys).combine_chunks()
    mask = pc.fill_null(pc.is_in(text, value_set=pa.array(sorted(ids), pa.string())), False)
    hits = int(pc.sum(mask).as_py() or 0)
    if not hits:
        return table, 0
    for name in linked.blanked:
        if name in table.column_names:
            column = table.column(name).combine_chunks()
            blank = pc.if_else(mask, pa.nulls(len(column), column.type), column)
            table = table.set_column(table.column_names.index(name), table.field(name), blank)
    return table, hits
