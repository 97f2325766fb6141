"""The departures `forget` finds by record (issue 49: departures as the tables are).

`_platform_departures` keeps, per resource and field path, the original values that did not fit their
field (`_platform_departures__values`, each with the `record_id` of its record). `forget.py` blanks those
values that are the person's value or pseudonym; this module adds the values of a personal field (the field
at the departure's path in its resource's model, `fields.group_at_path`: `producer.name` is, `product.name`
is not) in a record where the person was found, so that a name or a phone that departed from its type goes
with the person as the table's own columns do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pipelines.sync.sql_text import ident, literal
from sources.platform.departures import DEPARTURES_TABLE
from sources.platform.fastpath.columnar import column_name
from sources.platform.privacy.fields import group_at_path, plan_for
from sources.platform.records import key_paths
from sources.platform.resources import STREAMS

VALUES_TABLE = f"{DEPARTURES_TABLE}__values"


def record_key_columns() -> dict[str, str]:
    """Each resource's table -> the column holding the record id its departures name (`records.key_paths`:
    the key the API sends, one path for every resource)."""
    return {name: column_name(key_paths(stream)[0]) for name, stream in STREAMS.items()}


def record_ids(client: Any, table: str, key_column: str, where: str) -> set[str]:
    """The record ids of the rows of `table` (qualified) where `where` holds."""
    rows = client.execute_sql(
        f"select distinct cast({ident(key_column)} as varchar) from {table} where {where}"
    )
    return {str(row[0]) for row in rows or [] if row[0] is not None}


def of_records(
    client: Any, schema: str, tables: Mapping[str, set[str]], records: Mapping[str, set[str]]
) -> str | None:
    """SQL true on the rows of `_platform_departures__values` (in `schema`) that are original values of a
    personal field of one of `records` (resource -> record ids); None when there are none."""
    if not any(records.values()):
        return None
    if not {"record_id", "_dlt_parent_id"} <= tables.get(VALUES_TABLE, set()):
        return None
    if not {"resource", "field_path", "_dlt_id"} <= tables.get(DEPARTURES_TABLE, set()):
        return None
    departures = f"{ident(schema)}.{ident(DEPARTURES_TABLE)}"
    seen = client.execute_sql(f"select distinct resource, field_path from {departures}") or []
    conditions = []
    for resource, ids in sorted(records.items()):
        stream = STREAMS.get(resource)
        if stream is None or not ids:
            continue
        plan = plan_for(stream.model)
        paths = sorted(str(p) for r, p in seen if r == resource and group_at_path(plan, str(p)) is not None)
        if not paths:
            continue
        listed_ids = ", ".join(literal(i) for i in sorted(ids))
        listed_paths = ", ".join(literal(p) for p in paths)
        conditions.append(
            f"(cast(record_id as varchar) in ({listed_ids}) and _dlt_parent_id in (select _dlt_id from "
            f"{departures} where resource = {literal(resource)} and field_path in ({listed_paths})))"
        )
    return " or ".join(conditions) or None
