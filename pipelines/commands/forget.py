"""`platform-sync forget --email ... | --document ...`: a person's data out of the warehouse (LGPD art. 18).

What it does, under the run lock as the writer:
1. Finds the person in every table the sync, the webhook loader and the attendee import write (raw
   tables, their child tables, dlt's staging copies, departures, quarantine, `webhook_events`,
   `attendee_imports`), by the normalised value or, where it was pseudonymised, by its pseudonym.
2. Blanks that person's personal fields (all groups, the address too) in the rows found; the rows stay,
   so every amount stays where it was. Free JSON (a delivery's data, a quarantined record) is blanked at
   the object that names the person. The webhook store (SQLite) is rewritten alike. The records the
   API linked to the person (their lesson comments, asked by email in `forget_links.py`) lose their
   linked fields (`fields.LINKED`), by key.
3. Keeps a record of the request (`_platform_forget_requests`: when, which tables, how many rows; never
   the value) and, with a `privacy_key`, the person's keyed ids and linked keys (`_platform_forgotten`),
   which every later sync applies on the way in: a person the platform sends again is blanked again.
   Without a key nothing can recognise them later, and the command says so.
Then the marts are rebuilt and the freed space reclaimed (`reclaim.py`); the command itself (arguments,
the API lookup, what is printed, exit statuses) is `forget_command.py`.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import dlt

from pipelines.commands.forget_departures import VALUES_TABLE, of_records, record_ids, record_key_columns
from pipelines.commands.reclaim import leave_no_bytes
from pipelines.sync.companion import companion_pipeline, run_companion
from pipelines.sync.lock import run_lock
from pipelines.sync.sql_text import ident, literal, table_columns
from pipelines.webhooks.loader import WEBHOOK_TABLE
from pipelines.webhooks.store import DeliveryStore
from sources.platform.departures import QUARANTINE_TABLE
from sources.platform.privacy import IDENTIFYING, PrivacySettings, normalise
from sources.platform.privacy.fields import (
    DOCUMENTS,
    EMAILS,
    LINKED_BY_TABLE,
    NAMES,
    PersonColumns,
    RecordPlan,
    personal_columns,
    plan_for,
)
from sources.platform.privacy.forgotten import FORGOTTEN_TABLE, REQUESTS_TABLE
from sources.platform.privacy.free_json import walk_json
from sources.platform.resources import stream_models
from sources.platform_client.errors import ConfigurationError

FORGET_PIPELINE = "platform_sync_privacy"
IMPORTS_TABLE = "attendee_imports"
_JSON_COLUMNS = {WEBHOOK_TABLE: ("id", "data"), QUARANTINE_TABLE: ("_dlt_id", "raw_json")}


@dataclass(frozen=True)
class Wanted:
    """The person asked for: the group of the given value, its normalised form and its pseudonym."""

    group: str
    normalised: str
    pseudonym: str | None

    def matches(self, value: Any) -> bool:
        if not isinstance(value, str | int) or isinstance(value, bool):
            return False
        text = str(value)
        return text == self.pseudonym or normalise(self.group, text) == self.normalised


@dataclass
class ForgetResult:
    request_id: str
    rows: dict[str, int] = field(default_factory=dict)  # qualified table -> rows blanked
    # qualified table -> places the person was found (a row naming them as buyer and as recipient is one
    # row, two places: issue 49, the rows were counted once per place)
    places: dict[str, int] = field(default_factory=dict)
    deliveries: int = 0  # webhook store rows rewritten
    kept: bool = False  # the keyed ids are on the forgotten list
    reclaimed: str | None = None  # what `reclaim.leave_no_bytes` did, in one line

    @property
    def total(self) -> int:
        return sum(self.rows.values()) + self.deliveries


def wanted(settings: PrivacySettings, email: str | None, document: str | None) -> Wanted:
    if bool(email) == bool(document):
        raise ConfigurationError("forget needs exactly one of --email or --document")
    group, value = (EMAILS, str(email)) if email else (DOCUMENTS, str(document))
    normalised = normalise(group, value)
    if not normalised:
        raise ConfigurationError(f"the {group[:-1]} given to forget is empty once normalised")
    pseudonym = settings.pseudonym(group, value) if settings.key is not None else None
    return Wanted(group, normalised, pseudonym)


def forget(
    pipeline: dlt.Pipeline,
    settings: PrivacySettings,
    person: Wanted,
    store_path: Path | None,
    rebuild_marts: Callable[[], bool] | None = None,
    linked: Mapping[str, set[str]] | None = None,
) -> ForgetResult:
    """Blank the person everywhere (see the module's docstring), record the request; under the lock.
    `linked`: the keys of the records the API linked to the person, by table (`forget_links.py`).
    With `rebuild_marts` (the command line's): then the marts rebuilt and the DuckDB file rewritten, so
    that no freed page keeps the person (`reclaim.py`)."""
    result = ForgetResult(uuid.uuid4().hex)
    ids: dict[str, set[str]] = {group: set() for group in IDENTIFYING}
    if person.pseudonym:
        ids[person.group].add(person.pseudonym)
    for table_name, keys in (linked or {}).items():
        ids[table_name] = set(keys)
    with run_lock(pipeline, "write", command="platform-sync forget"):
        with pipeline.sql_client() as client:
            if client.has_dataset():
                _blank_tables(client, pipeline.dataset_name, settings, person, result, ids)
                _blank_linked(client, pipeline.dataset_name, linked or {}, result)
        if store_path is not None and store_path.exists():
            result.deliveries = _blank_store(store_path, person)
        result.kept = settings.key is not None
        _record(pipeline, person, result, ids if result.kept else {})
        if rebuild_marts is not None:
            result.reclaimed = leave_no_bytes(pipeline, rebuild_marts, sorted(result.rows))
    return result


def _persons_by_table() -> dict[str, list[PersonColumns]]:
    persons: dict[str, list[PersonColumns]] = {}
    for name, model in stream_models().items():
        for person in personal_columns(model, name):
            persons.setdefault(person.table, []).append(person)
    persons[IMPORTS_TABLE] = [PersonColumns(IMPORTS_TABLE, {"name": NAMES, "email": EMAILS})]
    return persons


def _blank_tables(
    client: Any,
    dataset: str,
    settings: PrivacySettings,
    person: Wanted,
    result: ForgetResult,
    ids: dict[str, set[str]],
) -> None:
    keys = record_key_columns()
    for schema in (dataset, f"{dataset}_staging"):
        tables = table_columns(client, schema)
        records: dict[str, set[str]] = {}  # resource -> ids of its records naming the person
        for table_name, persons in _persons_by_table().items():
            present = tables.get(table_name, set())
            table = f"{ident(schema)}.{ident(table_name)}"
            found = [(columns, _where(columns, person, present)) for columns in persons]
            matched = [(columns, where) for columns, where in found if where and _count(client, table, where)]
            if not matched:
                continue
            # Names beside the person that name nobody (a refund's requester) go first, while the rows
            # can still be found.
            anywhere = " or ".join(where for _, where in matched)
            key = f"{schema}.{table_name}"
            result.rows[key] = result.rows.get(key, 0) + _count(client, table, anywhere)
            if keys.get(table_name) in present:  # a resource's own table: its departures name these ids
                records.setdefault(table_name, set()).update(
                    record_ids(client, table, keys[table_name], anywhere)
                )
            for columns in persons:
                if not columns.identifying():
                    _set_null(client, table, columns, present, anywhere)
            for columns, where in matched:
                _keep_other_ids(client, table, columns, present, where, settings, person, ids)
                result.places[key] = result.places.get(key, 0) + _count(client, table, where)
                _set_null(client, table, columns, present, where)
        for table_name, (key, column) in _JSON_COLUMNS.items():
            if column in tables.get(table_name, set()):
                count = _blank_json_column(
                    client, f"{ident(schema)}.{ident(table_name)}", key, column, person
                )
                if count:
                    result.rows[f"{schema}.{table_name}"] = count
        if "value" in tables.get(VALUES_TABLE, set()):
            table = f"{ident(schema)}.{ident(VALUES_TABLE)}"
            where = _match("value", person)
            if by_record := of_records(client, schema, tables, records):
                where = f"({where} or {by_record})"
            if count := _count(client, table, where):
                client.execute_sql(f"update {table} set value = null where {where}")
                result.rows[f"{schema}.{VALUES_TABLE}"] = count


def _blank_linked(client: Any, dataset: str, linked: Mapping[str, set[str]], result: ForgetResult) -> None:
    """The rows of the person's linked records (`fields.Linked`: their comments) with the linked fields
    null, in the raw table and dlt's staging copy."""
    for schema in (dataset, f"{dataset}_staging"):
        tables = table_columns(client, schema)
        for table_name, keys in linked.items():
            spec = LINKED_BY_TABLE[table_name]
            present = tables.get(table_name, set())
            blanked = [name for name in spec.blanked if name in present]
            if not keys or spec.key not in present or not blanked:
                continue
            table = f"{ident(schema)}.{ident(table_name)}"
            listed = ", ".join(literal(key) for key in sorted(keys))
            where = f"cast({ident(spec.key)} as varchar) in ({listed})"
            if count := _count(client, table, where):
                nulls = ", ".join(f"{ident(name)} = null" for name in blanked)
                client.execute_sql(f"update {table} set {nulls} where {where}")
                key = f"{schema}.{table_name}"
                result.rows[key] = result.rows.get(key, 0) + count


def _where(columns: PersonColumns, person: Wanted, present: set[str]) -> str | None:
    keys = [c for c, g in columns.identifying().items() if g == person.group and c in present]
    return " or ".join(_match(key, person) for key in keys) if keys else None


def _set_null(client: Any, table: str, columns: PersonColumns, present: set[str], where: str) -> None:
    blanked = ", ".join(f"{ident(c)} = null" for c in columns.columns if c in present)
    if blanked:
        client.execute_sql(f"update {table} set {blanked} where {where}")


def _keep_other_ids(
    client: Any,
    table: str,
    columns: PersonColumns,
    present: set[str],
    where: str,
    settings: PrivacySettings,
    person: Wanted,
    ids: dict[str, set[str]],
) -> None:
    """The person's other identifier (their document when forgotten by email) on the rows found, as a
    keyed id for the forgotten list."""
    others = [(c, g) for c, g in columns.identifying().items() if g != person.group and c in present]
    if settings.key is None or not others:
        return
    rows = client.execute_sql(f"select {', '.join(ident(c) for c, _ in others)} from {table} where {where}")
    for row in rows or []:
        for (_, group), value in zip(others, row, strict=True):
            if value is not None:
                ids[group].add(_as_pseudonym(settings, group, str(value)))


def _as_pseudonym(settings: PrivacySettings, group: str, value: str) -> str:
    """The keyed id of a stored identifier: as stored where the group is hashed, else computed."""
    return value if settings.mode(group) == "hash" else settings.pseudonym(group, value)


def _count(client: Any, table: str, where: str) -> int:
    rows = client.execute_sql(f"select count(*) from {table} where {where}")
    return int(rows[0][0]) if rows else 0


def _match(column: str, person: Wanted) -> str:
    """SQL true where the column holds the person's value (normalised as `normalise` does) or pseudonym."""
    text = f"cast({ident(column)} as varchar)"
    if person.group == EMAILS:
        normalised = f"lower(trim({text}))"
    else:
        normalised = f"upper(regexp_replace({text}, '[^0-9A-Za-z]', '', 'g'))"
    condition = f"{normalised} = {literal(person.normalised)}"
    if person.pseudonym:
        condition += f" or {text} = {literal(person.pseudonym)}"
    return f"({condition})"


def _blank_json_column(client: Any, table: str, key: str, column: str, person: Wanted) -> int:
    """Free JSON blanked at the objects naming the person. A quarantined record is walked with its
    resource's model (`fields.plan_for`, by its `resource` column), as the tables are; keys no model
    declares are guessed by name (`fields.group_of_key`)."""
    models = stream_models()
    kind = "resource" if column == "raw_json" else "null"
    select = f"select {ident(key)}, cast({ident(column)} as varchar), {kind} from {table}"
    changed = 0
    for row_key, text, resource in client.execute_sql(select) or []:
        if text is None:
            continue
        model = models.get(str(resource)) if resource else None
        blanked, hits = blank_person(json.loads(text), person, plan=plan_for(model) if model else None)
        if hits:
            new = literal(json.dumps(blanked, ensure_ascii=False))
            client.execute_sql(
                f"update {table} set {ident(column)} = {new} where {ident(key)} = {literal(row_key)}"
            )
            changed += 1
    return changed


def blank_person(
    document: Any, person: Wanted, in_address: bool = False, plan: RecordPlan | None = None
) -> tuple[Any, int]:
    """Free JSON with every object that names the person (by a key of the person's group) blanked
    (`free_json.walk_json`, the sync's own walk, which changes nothing else here). Returns the JSON and
    how many objects were blanked."""

    def names(level: Mapping[str, Any], fields: Mapping[str, str]) -> bool:
        return any(group == person.group and person.matches(level.get(key)) for key, group in fields.items())

    return walk_json(document, lambda _group, value: value, names, in_address, plan)


def _blank_store(path: Path, person: Wanted) -> int:
    store = DeliveryStore(path)
    try:
        changed = 0
        for delivery in store.all():
            document, hits = blank_person(json.loads(delivery.body), person)
            if hits:
                store.rewrite(delivery.id, json.dumps(document, ensure_ascii=False))
                changed += 1
        return changed
    finally:
        store.close()


def _record(pipeline: dlt.Pipeline, person: Wanted, result: ForgetResult, ids: dict[str, set[str]]) -> None:
    """The request's record, and the keyed ids of the forgotten person (never a value)."""
    now = datetime.now(UTC)
    request = {
        "request_id": result.request_id,
        "requested_at": now,
        "id_group": person.group,
        "tables": ", ".join(f"{table}: {rows}" for table, rows in sorted(result.rows.items())),
        "rows_blanked": sum(result.rows.values()),
        "webhook_deliveries": result.deliveries,
        "kept_on_list": result.kept,
    }
    forgotten = [
        {
            "request_id": result.request_id,
            "id_group": group,
            "forgotten_id": forgotten_id,
            "forgotten_at": now,
        }
        for group, values in sorted(ids.items())
        for forgotten_id in sorted(values)
    ]
    target = companion_pipeline(FORGET_PIPELINE, pipeline)
    resources = [dlt.resource([request], name=REQUESTS_TABLE, write_disposition="append")]
    if forgotten:
        resources.append(dlt.resource(forgotten, name=FORGOTTEN_TABLE, write_disposition="append"))
    run_companion(target, resources).raise_on_failed_jobs()
