"""The companion tables rewritten in place when the privacy settings change, so that raw and pseudonymised
values never mix in one warehouse.

`webhook_events` (the webhook loader) and `attendee_imports` (the attendee import) are written by
pipelines of their own: `sync --full-refresh` drops and reloads the source's tables, not these. Each of
them has a record of the settings its values were written with, `_platform_privacy_tables` (one row per
table: `table_name`, `modes`, `key_id`, `recorded_at`), written by SQL in the same transaction as a
rewrite, and after each load of the table; a table without a row was written under the settings recorded
with the source's data (its state), the best guess for a warehouse loaded before the record existed.

- `rewrite_companions` (run by `sync --full-refresh`, before the source's tables are dropped): applies
  the same keyed hash as the writers (`Scrubber.json`: same keys, same normalisation, same pseudonyms) to
  each companion table whose record differs from the settings, one transaction per table with its
  record; dlt's staging copy (`<dataset>_staging`) alike. A value kept raw can be hashed or blocked and a
  pseudonym blocked; a pseudonym cannot be turned back into its value nor into another key's: that stops
  with one line (exit status 2) before anything is changed.
- `check_companions` (every sync, the webhook loader, the attendee import): refuses to add values under
  settings other than those a companion table holds, saying to run `sync --full-refresh`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dlt
from dlt.destinations.exceptions import DestinationConnectionError

from pipelines.sync.privacy_record import PrivacySettingsChanged, describe_change, recorded_settings
from pipelines.sync.sql_text import ident, literal, qualified, table_columns
from sources.platform.privacy import BLOCK, GROUPS, HASH, KEEP, PrivacySettings, Scrubber
from sources.platform.privacy.fields import group_of_key

RECORD_TABLE = "_platform_privacy_tables"
Fallback = Callable[[], Mapping[str, Any]]  # the source's record, read only where a table has none
DOCS = "docs/contracts.md, section 7"


@dataclass(frozen=True)
class Companion:
    """A table written outside the source: its row key, and its free JSON column if it has one (personal
    keys found by name there, as the writer does); every other column named as a personal key is one."""

    table: str
    keys: tuple[str, ...]
    json_column: str | None = None


# the names `pipelines/webhooks/loader.py` and `pipelines/commands/attendees_import.py` write
COMPANIONS = (
    Companion("webhook_events", ("id",), "data"),
    Companion("attendee_imports", ("import_id", "line")),
)


def companion(table: str) -> Companion:
    return next(c for c in COMPANIONS if c.table == table)


def rewriting(recorded: Mapping[str, Any], settings: PrivacySettings) -> tuple[PrivacySettings, list[str]]:
    """The settings that turn values written under `recorded` into values as `settings` writes them (a
    group kept before is hashed or blocked now, a hashed one blocked; the rest left as they are: a blocked
    value is null either way), and the changes no rewrite can make (a pseudonym turned back into its value,
    or into another key's)."""
    before = recorded.get("modes", {})
    other_key = recorded.get("key_id") != settings.key_id()
    modes: dict[str, str] = {}
    impossible: list[str] = []
    for group in GROUPS:
        old, new = before.get(group, KEEP), settings.mode(group)
        modes[group] = KEEP
        if old == new and not (old == HASH and other_key):
            continue
        if old == BLOCK:
            continue
        if new == BLOCK:
            modes[group] = BLOCK
        elif old == KEEP and new == HASH:
            modes[group] = HASH
        else:
            impossible.append(f"{group} {old} -> {new}" if old != new else f"{group} under another key")
    return PrivacySettings(modes, settings.key), impossible


def rewrite_companions(
    pipeline: dlt.Pipeline, settings: PrivacySettings, fallback: Fallback
) -> dict[str, int]:
    """Rewrite every companion table written under other settings; returns `schema.table -> rows changed`
    (tables already under these settings are left alone: a rerun after a failure continues)."""
    current = settings.record()
    changed: dict[str, int] = {}
    with pipeline.sql_client() as client:
        if not client.has_dataset():
            return changed
        dataset = pipeline.dataset_name
        tables = table_columns(client, dataset)
        staging = table_columns(client, f"{dataset}_staging")
        records = _records(client, dataset, tables)
        due = []
        refused = []
        for table in COMPANIONS:
            if table.table not in tables or not _holds_rows(client, qualified(dataset, table.table)):
                continue  # an empty table: its first load records its settings
            recorded = records.get(table.table) or dict(fallback())
            if recorded == current:
                continue
            rewrite, impossible = rewriting(recorded, settings)
            if impossible:
                refused.append((f"{dataset}.{table.table}", ", ".join(impossible)))
            due.append((table, rewrite))
        if refused:
            named = " and ".join(f"{name} ({changes})" for name, changes in refused)
            drops = "; ".join(f"drop table {name}" for name, _ in refused)
            raise PrivacySettingsChanged(
                f"the privacy settings changed, and {named} holds pseudonyms that cannot be turned back into "
                "values nor into another key's: nothing was synced. Put the earlier settings back, or drop "
                f"what cannot be rewritten (`{drops}`: those rows are not loaded again) and run "
                f"`platform-sync sync --full-refresh` again ({DOCS})"
            )
        for table, rewrite in due:
            scrubber = Scrubber(rewrite)
            with client.begin_transaction():
                for schema, present in ((dataset, tables), (f"{dataset}_staging", staging)):
                    if table.table in present:
                        count = _rewrite(client, schema, table, present[table.table], scrubber)
                        if count:
                            changed[f"{schema}.{table.table}"] = count
                _write_record(client, dataset, table.table, current)
    return changed


def check_companions(
    pipeline: dlt.Pipeline,
    settings: PrivacySettings,
    fallback: Fallback,
    tables: Sequence[str] | None = None,
    nothing: str = "nothing was synced",
) -> None:
    """Refuse to write under `settings` while a companion table holds rows written under others."""
    current = settings.record()
    try:
        with pipeline.sql_client() as client:
            _check_companions(client, pipeline.dataset_name, current, fallback, tables, nothing)
    except DestinationConnectionError:
        # The warehouse cannot be opened (a DuckDB file another program holds, a server down): nothing
        # can be written to mix, and the run says why in one line when it opens it, before any request.
        return


def _check_companions(
    client: Any,
    dataset: str,
    current: dict[str, Any],
    fallback: Fallback,
    tables: Sequence[str] | None,
    nothing: str,
) -> None:
    if not client.has_dataset():
        return
    present = table_columns(client, dataset)
    records = _records(client, dataset, present)
    for table in COMPANIONS:
        if table.table not in present or (tables is not None and table.table not in tables):
            continue
        if not _holds_rows(client, qualified(dataset, table.table)):
            continue
        recorded = records.get(table.table) or dict(fallback())
        if recorded == current:
            continue
        raise PrivacySettingsChanged(
            f"the privacy settings changed ({describe_change(recorded, current)}) but "
            f"{dataset}.{table.table} holds values written under the earlier ones, and the two would "
            f"mix: {nothing}. Run `platform-sync sync --full-refresh` (it rewrites {table.table} in "
            f"place under the new settings), or put the earlier settings back ({DOCS})"
        )


def note_written(pipeline: dlt.Pipeline, table: str, settings: PrivacySettings, fallback: Fallback) -> None:
    """After a load into a companion table: its record says these settings (written only where a record
    is needed: something is changed, the source's record says otherwise, or a record exists)."""
    current = settings.record()
    with pipeline.sql_client() as client:
        dataset = pipeline.dataset_name
        present = table_columns(client, dataset)
        if table not in present:
            return
        recorded = _records(client, dataset, present).get(table)
        if recorded == current or (recorded is None and not settings.active and dict(fallback()) == current):
            return
        with client.begin_transaction():
            _write_record(client, dataset, table, current)


def companion_record(pipeline: dlt.Pipeline, table: str) -> dict[str, Any] | None:
    """The table's record (`modes`, `key_id`, `recorded_at`), None where it has none."""
    with pipeline.sql_client() as client:
        if not client.has_dataset():
            return None
        dataset = pipeline.dataset_name
        if RECORD_TABLE not in table_columns(client, dataset):
            return None
        rows = client.execute_sql(
            f"select modes, key_id, cast(recorded_at as varchar) from {qualified(dataset, RECORD_TABLE)} "
            f"where table_name = {literal(table)}"
        )
    if not rows:
        return None
    modes, key_id, recorded_at = rows[0]
    return {"modes": json.loads(modes), "key_id": key_id, "recorded_at": recorded_at}


def source_fallback(sync_pipeline: dlt.Pipeline) -> dict[str, Any]:
    """The settings recorded with the source's data (its state; restored from the destination when the
    working folder has none)."""
    if not sync_pipeline.default_schema_name:
        sync_pipeline.sync_destination()
    return recorded_settings(sync_pipeline)


# --- SQL ---


def _rewrite(client: Any, schema: str, table: Companion, columns: set[str], scrubber: Scrubber) -> int:
    personal = sorted(c for c in columns if group_of_key(c) is not None and c not in table.keys)
    if table.json_column in columns:
        personal.append(str(table.json_column))
    if not personal or not all(k in columns for k in table.keys):
        return 0
    selected = ", ".join(f"cast({ident(c)} as varchar)" if c == table.json_column else ident(c)
                         for c in (*table.keys, *personal))  # fmt: skip
    target = qualified(schema, table.table)
    changed = 0
    for row in client.execute_sql(f"select {selected} from {target}") or []:
        keys, values = row[: len(table.keys)], dict(zip(personal, row[len(table.keys) :], strict=True))
        new = {}
        for column, value in values.items():
            if value is None:
                continue
            if column == table.json_column:
                text = json.dumps(scrubber.json(json.loads(value)), ensure_ascii=False)
                if json.loads(text) != json.loads(value):
                    new[column] = text
            else:
                rewritten = scrubber.json({column: value})[column]
                if rewritten != value:
                    new[column] = rewritten
        if not new:
            continue
        assignments = ", ".join(f"{ident(c)} = {literal(v)}" for c, v in new.items())
        where = " and ".join(f"{ident(k)} = {literal(v)}" for k, v in zip(table.keys, keys, strict=True))
        client.execute_sql(f"update {target} set {assignments} where {where}")
        changed += 1
    return changed


def _write_record(client: Any, dataset: str, table: str, record: Mapping[str, Any]) -> None:
    target = qualified(dataset, RECORD_TABLE)
    client.execute_sql(
        f"create table if not exists {target} (table_name varchar, modes varchar, key_id varchar, "
        "recorded_at timestamp with time zone)"
    )
    client.execute_sql(f"delete from {target} where table_name = {literal(table)}")
    key_id = "null" if record.get("key_id") is None else literal(record["key_id"])
    client.execute_sql(
        f"insert into {target} values ({literal(table)}, {literal(json.dumps(record['modes']))}, "
        f"{key_id}, current_timestamp)"
    )


def _records(client: Any, dataset: str, present: Mapping[str, set[str]]) -> dict[str, dict[str, Any]]:
    if RECORD_TABLE not in present:
        return {}
    rows = client.execute_sql(f"select table_name, modes, key_id from {qualified(dataset, RECORD_TABLE)}")
    return {str(t): {"modes": json.loads(m), "key_id": k} for t, m, k in rows or []}


def _holds_rows(client: Any, table: str) -> bool:
    return bool(client.execute_sql(f"select 1 from {table} limit 1"))
