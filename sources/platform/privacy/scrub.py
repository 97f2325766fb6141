"""Personal values changed on the way in: every batch a resource yields passes `Scrubber.map_item`.

One step (`DltResource.add_step`, dlt's public API) sees every item of a resource whole: its batches of
rows (dicts with the API's keys, walked level by level by the model's `RecordPlan`, each group's values
hashed together), its Arrow tables (dlt's column names, each group's columns together over their
distinct values) and the departures and quarantine rows it hands dlt at its end. A group set to `hash`
is replaced by its pseudonym, one set to `block` by null. Pseudonyms are kept per group across batches
and tables, bounded (`cache.py`): the same people come back in a run, a buyer in each of their sales and
fiscal documents. A table with many distinct values of a group has them hashed by DuckDB instead
(`array_hash.py`), away from the interpreter lock the extract is bound by.

A forgotten person (`platform-sync forget`, whose keyed ids `forgotten` holds) is blanked, all groups,
wherever a record names them again: their email or document pseudonym is looked up before anything
else is changed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import dlt
import pyarrow as pa
import pyarrow.compute as pc
from dlt.common.exceptions import SourceSectionNotAvailable
from pydantic import BaseModel

from sources.platform.privacy.array_hash import MIN_VALUES, ArrayHasher
from sources.platform.privacy.cache import PseudonymCache
from sources.platform.privacy.fields import (
    GROUPS,
    IDENTIFYING,
    LINKED_BY_TABLE,
    PersonColumns,
    RecordPlan,
    personal_columns,
    plan_for,
)
from sources.platform.privacy.free_json import FreeJson
from sources.platform.privacy.linked import blank_linked
from sources.platform.privacy.settings import BLOCK, HASH, KEEP, PrivacySettings

Forgotten = Mapping[str, frozenset[str]]  # identifying group -> pseudonyms of the forgotten people
STATE_KEY = "privacy"  # in the source's state: the settings the loaded data was written with
DEPARTURES_TABLE = "_platform_departures"
QUARANTINE_TABLE = "_platform_quarantine"


class Scrubber(FreeJson):
    """Applies the privacy settings, and the forgotten list, to rows, tables and free JSON. Thread-safe
    (dlt extracts resources in a thread pool); its cache of pseudonyms is bounded."""

    def __init__(self, settings: PrivacySettings, forgotten: Callable[[], Forgotten] | None = None) -> None:
        self.settings = settings
        self._load_forgotten = forgotten
        self._forgotten: Forgotten | None = None
        self._anyone_forgotten = False
        self._modes = {group: settings.mode(group) for group in GROUPS}
        self._lock = threading.Lock()
        self._cache = PseudonymCache(settings.pseudonyms, GROUPS)
        self._arrays = ArrayHasher(settings)
        self._noted = False
        self._count_lock = threading.Lock()
        self.reforgotten = 0  # people blanked again on the way in, this run

    @property
    def forgotten(self) -> Forgotten:
        """The forgotten people's keyed ids; read once (only a key can recognise them: none without)."""
        forgotten = self._forgotten
        if forgotten is not None:
            return forgotten
        with self._lock:
            if self._forgotten is None:
                loader = self._load_forgotten
                self._forgotten = loader() if loader and self.settings.key is not None else {}
                # people recognised by an identifier (the linked records' keys are matched apart)
                self._anyone_forgotten = any(self._forgotten.get(group) for group in IDENTIFYING)
            return self._forgotten

    def changes_anything(self) -> bool:
        """Whether items must pass the hook: something is hashed or blocked, or someone was forgotten.
        Reads the forgotten list now, before any extract starts."""
        forgotten = self.forgotten
        return self.settings.active or any(forgotten.values())

    def _count_forgotten(self, records: int) -> None:
        with self._count_lock:
            self.reforgotten += records

    def note_settings(self) -> None:
        """Record the settings in the source's state, which dlt loads with the data (once per run; each
        resource calls it as it starts, in the extract's context)."""
        if self._noted or not self.settings.active:
            return
        try:
            dlt.current.source_state()[STATE_KEY] = self.settings.record()
        except SourceSectionNotAvailable:  # a resource driven by hand, outside an extract
            return
        self._noted = True

    # --- single values ---

    def pseudonym(self, group: str, value: str) -> str:
        """One value's pseudonym through the group's cache (`pseudonyms`)."""
        return self.pseudonyms(group, [value])[0]

    def pseudonyms(self, group: str, values: list[str]) -> list[str]:
        """The pseudonym of each value, in order, through the run's kept pseudonyms (`cache.py`)."""
        return self._cache.pseudonyms(group, values)

    def value(self, group: str, value: Any) -> Any:
        """The value as it is loaded: kept, its pseudonym, or None."""
        if value is None:
            return None
        mode = self.settings.mode(group)
        if mode == HASH:
            return self.pseudonym(group, value if isinstance(value, str) else json.dumps(value))
        if mode == BLOCK:
            return None
        return value

    def is_forgotten(self, group: str, value: Any) -> bool:
        ids = self.forgotten.get(group)
        if not ids or value is None or self.settings.key is None:
            return False
        return self.pseudonym(group, value if isinstance(value, str) else str(value)) in ids

    # --- dlt's hook ---

    def mapper(self, model: type[BaseModel], table: str) -> Callable[[Any, Any], Any]:
        """The step (`DltResource.add_step`) every item of the resource of `model` passes, whose table is
        `table`: a batch of rows whole (their values hashed together), an Arrow table, or one row."""
        plan = plan_for(model)
        persons = personal_columns(model, table)
        linked = LINKED_BY_TABLE.get(table)
        linked_ids = self.forgotten.get(table, frozenset()) if linked is not None else frozenset()

        def map_item(item: Any, meta: Any = None) -> Any:
            changed = map_personal(item, meta)
            if linked is not None and linked_ids and getattr(meta, "table_name", None) in (None, table):
                changed, hits = blank_linked(changed, linked, linked_ids)
                self._count_forgotten(hits)
            return changed

        def map_personal(item: Any, meta: Any = None) -> Any:
            target = getattr(meta, "table_name", None)
            if isinstance(item, pa.Table):
                return self.table(item, persons)
            if isinstance(item, list):
                if target in (DEPARTURES_TABLE, QUARANTINE_TABLE):
                    return [map_personal(row, meta) for row in item]
                self.records([row for row in item if isinstance(row, dict)], plan)
                return item
            if not isinstance(item, dict):
                return item
            if target == DEPARTURES_TABLE:  # the resource's own departures are walked with its model
                return self.departure_row(item, plan if item.get("resource") == table else None)
            if target == QUARANTINE_TABLE:
                return self.quarantine_row(item, plan)
            self.record(item, plan)
            return item

        return map_item

    # --- rows (API keys) ---

    def record(self, row: dict[str, Any], plan: RecordPlan) -> None:
        """Change the row in place, level by level as the plan says. A person (`RecordPlan.people`) is
        blanked when they are forgotten, and so are the levels beside them that name nobody
        (`refund.requesterName`, a sale's `affiliate.name`): a name that cannot be told apart from the
        person's own goes with it."""
        anyone = self._anyone_forgotten  # the list was read when the mapper was made
        modes = self._modes
        forget = False
        for person in plan.people:
            gone = anyone and self._forgets(row, person)
            if gone:
                self._count_forgotten(1)
                forget = True
            for key, group in person.items():
                value = row.get(key)
                if value is None:
                    continue
                if gone:
                    row[key] = None
                elif modes[group] != KEEP:
                    row[key] = self.value(group, value)
        if plan.nested:
            named = forget or (
                anyone
                and any(
                    self._forgets(row[k], c.fields)
                    for k, c in plan.nested.items()
                    if isinstance(row.get(k), dict)
                )
            )
            for key, child in plan.nested.items():
                nested = row.get(key)
                if not isinstance(nested, dict):
                    continue
                if named and not child.identified:
                    _blank(nested, child)
                else:
                    self.record(nested, child)
        for key, child in plan.lists.items():
            items = row.get(key)
            if isinstance(items, list):
                for element in items:
                    if isinstance(element, dict):
                        self.record(element, child)

    def records(self, rows: list[dict[str, Any]], plan: RecordPlan) -> None:
        """`record` on each row of a batch. With nobody forgotten, level by level over the whole batch:
        each group's values are gathered from every row, hashed together (`pseudonyms`) and put back."""
        if self.forgotten and self._anyone_forgotten:
            for row in rows:
                self.record(row, plan)
            return
        found: dict[str, tuple[list[dict[str, Any]], list[str], list[str]]] = {}
        self._gather(rows, plan, found)
        for group, (holders, keys, values) in found.items():
            for holder, key, pseudonym in zip(holders, keys, self.pseudonyms(group, values), strict=True):
                holder[key] = pseudonym

    def _gather(
        self,
        rows: list[dict[str, Any]],
        plan: RecordPlan,
        found: dict[str, tuple[list[dict[str, Any]], list[str], list[str]]],
    ) -> None:
        """Block the level's blocked fields in `rows`, and note where each value to hash is."""
        modes = self._modes
        for key, group in plan.fields.items():
            mode = modes[group]
            if mode == BLOCK:
                for row in rows:
                    if row.get(key) is not None:
                        row[key] = None
            elif mode == HASH:
                holders, keys, values = found.setdefault(group, ([], [], []))
                for row in rows:
                    value = row.get(key)
                    if value is not None:
                        holders.append(row)
                        keys.append(key)
                        values.append(value if isinstance(value, str) else json.dumps(value))
        for key, child in plan.nested.items():
            nested = [level for row in rows if isinstance(level := row.get(key), dict)]
            if nested:
                self._gather(nested, child, found)
        for key, child in plan.lists.items():
            elements = [
                element
                for row in rows
                if isinstance(items := row.get(key), list)
                for element in items
                if isinstance(element, dict)
            ]
            if elements:
                self._gather(elements, child, found)

    def _forgets(self, row: Mapping[str, Any], fields: Mapping[str, str]) -> bool:
        if self._forgotten is None:
            self.forgotten  # noqa: B018 (read once)
        if not self._anyone_forgotten:
            return False
        return any(
            group in IDENTIFYING and self.is_forgotten(group, row.get(key)) for key, group in fields.items()
        )

    # --- Arrow tables (dlt's column names) ---

    def table(self, table: pa.Table, persons: Iterable[PersonColumns]) -> pa.Table:
        names = set(table.column_names)
        present = [p for p in persons if any(name in names for name in p.columns)]
        masks = [self._forgotten_rows(table, person) for person in present]
        # the rows naming a forgotten person also lose the names that name nobody (see `record`)
        anyone = None
        for mask in masks:
            if mask is not None:
                anyone = mask if anyone is None else pc.or_(anyone, mask)
        changed = self._columns(table, {n: g for p in present for n, g in p.columns.items() if n in names})
        for person, mask in zip(present, masks, strict=True):
            forgotten = mask if person.identifying() else anyone
            if forgotten is None:
                continue
            for name in person.columns:
                if name in names:
                    column = changed.get(name, table.column(name))
                    changed[name] = pc.if_else(forgotten, pa.nulls(len(column), column.type), column)
        if not changed:
            return table
        # one new table, not one per changed column (a fiscal document has 33 personal columns)
        fields = [
            pa.field(field.name, changed[field.name].type) if field.name in changed else field
            for field in table.schema
        ]
        columns = [
            changed.get(field.name, column) for field, column in zip(table.schema, table.columns, strict=True)
        ]
        return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=table.schema.metadata))

    def _columns(self, table: pa.Table, groups: Mapping[str, str]) -> dict[str, pa.Array]:
        """The changed columns, by name: a blocked group's as nulls; a hashed group's columns together,
        each distinct value of them once (the client of a fiscal document is its destination too): many
        in DuckDB (`array_hash.py`), a few through the kept pseudonyms."""
        changed: dict[str, pa.Array] = {}
        hashed: dict[str, list[str]] = {}
        for name, group in groups.items():
            mode = self.settings.mode(group)
            if mode == BLOCK:
                changed[name] = pa.nulls(table.num_rows, table.field(name).type)
            elif mode == HASH:
                hashed.setdefault(group, []).append(name)
        for group, names in hashed.items():
            text = [_text(table.column(name)) for name in names]
            encoded = (text[0] if len(text) == 1 else pa.concat_arrays(text)).dictionary_encode()
            distinct = encoded.dictionary
            if len(distinct) >= MIN_VALUES:  # hashed by DuckDB, which lets the other threads go on
                mapped = self._arrays.pseudonyms(group, distinct)
            else:
                mapped = pa.array(self.pseudonyms(group, distinct.to_pylist()), pa.string())
            whole = mapped.take(encoded.indices)
            for at, name in enumerate(names):
                changed[name] = whole.slice(at * table.num_rows, table.num_rows)
        return changed

    def _forgotten_rows(self, table: pa.Table, person: PersonColumns) -> pa.Array | None:
        if not self.forgotten or self.settings.key is None:
            return None
        mask: pa.Array | None = None
        for name, group in person.identifying().items():
            ids = self.forgotten.get(group)
            if not ids or name not in table.column_names:
                continue
            encoded = _text(table.column(name)).dictionary_encode()
            hit = pa.array(
                [p in ids for p in self.pseudonyms(group, encoded.dictionary.to_pylist())], pa.bool_()
            )
            rows = pc.fill_null(hit.take(encoded.indices), False)
            mask = rows if mask is None else pc.or_(mask, rows)
        if mask is None or not pc.any(mask).as_py():
            return None
        self._count_forgotten(int(pc.sum(mask).as_py()))
        return mask


def _blank(row: dict[str, Any], plan: RecordPlan) -> None:
    """Every personal field of the level and of its nested levels set to null."""
    for key in plan.fields:
        if key in row:
            row[key] = None
    for key, child in plan.nested.items():
        nested = row.get(key)
        if isinstance(nested, dict):
            _blank(nested, child)


def _text(column: pa.ChunkedArray) -> pa.Array:
    """A column as one array of strings."""
    return (column.cast(pa.string()) if column.type != pa.string() else column).combine_chunks()
