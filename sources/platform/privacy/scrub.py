"""Personal values changed on the way in: every batch a resource yields passes `Scrubber.map_item`.

One hook (`DltResource.add_map`, dlt's public API) sees every item of a resource: its rows (dicts with
the API's keys, walked by the model's `RecordPlan`), its Arrow tables (dlt's column names, one column at
a time over its distinct values) and the departures and quarantine rows it hands dlt at its end. A
group set to `hash` is replaced by its pseudonym, one set to `block` by null.

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

from sources.platform.privacy.fields import (
    GROUPS,
    IDENTIFYING,
    PersonColumns,
    RecordPlan,
    group_of_key,
    personal_columns,
    plan_for,
)
from sources.platform.privacy.settings import BLOCK, HASH, KEEP, PrivacySettings

Forgotten = Mapping[str, frozenset[str]]  # identifying group -> pseudonyms of the forgotten people
_CACHE_LIMIT = 20_000  # pseudonyms kept per group (five: about 15 MB in all): people repeat across rows
STATE_KEY = "privacy"  # in the source's state: the settings the loaded data was written with
DEPARTURES_TABLE = "_platform_departures"
QUARANTINE_TABLE = "_platform_quarantine"


class Scrubber:
    """Applies the privacy settings, and the forgotten list, to rows, tables and free JSON. Thread-safe
    (dlt extracts resources in a thread pool); its cache of pseudonyms is bounded."""

    def __init__(self, settings: PrivacySettings, forgotten: Callable[[], Forgotten] | None = None) -> None:
        self.settings = settings
        self._load_forgotten = forgotten
        self._forgotten: Forgotten | None = None
        self._anyone_forgotten = False
        self._modes = {group: settings.mode(group) for group in GROUPS}
        self._lock = threading.Lock()
        self._caches: dict[str, dict[str, str]] = {group: {} for group in GROUPS}
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
                self._anyone_forgotten = any(self._forgotten.values())
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
        """One value's pseudonym through the group's cache (the rows dlt normalizes, one value at a time)."""
        known = self._caches[group]
        cached = known.get(value)
        if cached is None:
            cached = self.settings.pseudonym(group, value)
            if len(known) >= _CACHE_LIMIT:
                known.clear()
            known[value] = cached
        return cached

    def pseudonyms(self, group: str, values: list[str]) -> list[str]:
        """The pseudonym of each value, in order. The values not in the group's cache are hashed together
        (each once) and kept, unless they alone are more than the cache holds."""
        known = self._caches[group]
        missing = list(dict.fromkeys(value for value in values if value not in known))
        hashed = dict(zip(missing, self.settings.pseudonyms(group, missing), strict=True))
        if hashed and len(hashed) <= _CACHE_LIMIT:
            if len(known) + len(hashed) > _CACHE_LIMIT:
                known.clear()
            known.update(hashed)
        # another thread may have emptied the cache since: a value found in neither is hashed again
        return [hashed.get(v) or known.get(v) or self.settings.pseudonym(group, v) for v in values]

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
        """The function `add_map` runs on each item of the resource of `model`, whose table is `table`."""
        plan = plan_for(model)
        persons = personal_columns(model, table)
        self.forgotten  # noqa: B018 (read now, before any item)

        def map_item(item: Any, meta: Any = None) -> Any:
            target = getattr(meta, "table_name", None)
            if isinstance(item, pa.Table):
                return self.table(item, persons)
            if not isinstance(item, dict):
                return item
            if target == DEPARTURES_TABLE:
                return self.departure_row(item)
            if target == QUARANTINE_TABLE:
                return self.quarantine_row(item)
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
        for person, mask in zip(present, masks, strict=True):
            forgotten = mask if person.identifying() else anyone
            for name, group in person.columns.items():
                if name not in names:
                    continue
                column = self._column(table.column(name), group)
                if forgotten is not None:
                    column = pc.if_else(forgotten, pa.nulls(len(column), column.type), column)
                table = table.set_column(table.column_names.index(name), table.field(name).name, column)
        return table

    def _column(self, column: pa.ChunkedArray, group: str) -> pa.ChunkedArray | pa.Array:
        mode = self.settings.mode(group)
        if mode == BLOCK:
            return pa.nulls(len(column), column.type)
        if mode != HASH:
            return column
        text = column.cast(pa.string()) if column.type != pa.string() else column
        encoded = text.combine_chunks().dictionary_encode()
        # each distinct value of the batch hashed once, without the cache: a batch's values are mostly
        # new ones (a cache of a million rows' people would not fit), and looking each up costs more
        mapped = pa.array(self.settings.pseudonyms(group, encoded.dictionary.to_pylist()), pa.string())
        return mapped.take(encoded.indices)

    def _forgotten_rows(self, table: pa.Table, person: PersonColumns) -> pa.Array | None:
        if not self.forgotten or self.settings.key is None:
            return None
        mask: pa.Array | None = None
        for name, group in person.identifying().items():
            ids = self.forgotten.get(group)
            if not ids or name not in table.column_names:
                continue
            encoded = table.column(name).cast(pa.string()).combine_chunks().dictionary_encode()
            hit = pa.array(
                [p in ids for p in self.pseudonyms(group, encoded.dictionary.to_pylist())], pa.bool_()
            )
            rows = pc.fill_null(hit.take(encoded.indices), False)
            mask = rows if mask is None else pc.or_(mask, rows)
        if mask is None or not pc.any(mask).as_py():
            return None
        self._count_forgotten(int(pc.sum(mask).as_py()))
        return mask

    # --- the departures and quarantine tables, free JSON ---

    def departure_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """An original value of a personal field (a field path ending in a personal key) is changed as
        that group is (the tolerant parser keeps none of the declared ones; a new field might)."""
        group = group_of_key(str(row.get("field_path", "")).rsplit(".", 1)[-1].rstrip("[]"))
        if group is not None:
            for value in row.get("values") or []:
                if isinstance(value, dict) and value.get("value") is not None:
                    value["value"] = self.value(group, value["value"])
        return row

    def quarantine_row(self, row: dict[str, Any]) -> dict[str, Any]:
        """The raw JSON of a quarantined record, with its personal values changed by key name (it may be
        of any shape: it departs from its model; a product's `name` is treated as a person's)."""
        try:
            document = json.loads(row.get("raw_json") or "null")
        except ValueError:
            return row
        row["raw_json"] = json.dumps(self.json(document), default=str, ensure_ascii=False)
        return row

    def json(self, document: Any, in_address: bool = False) -> Any:
        """Free JSON (a webhook delivery's data, a quarantined record) with personal keys changed, keys
        guessed by name (`fields.group_of_key`); an object naming a forgotten person is blanked."""
        if isinstance(document, list):
            return [self.json(element, in_address) for element in document]
        if not isinstance(document, dict):
            return document
        groups = {key: group_of_key(key, in_address) for key in document}
        personal = {key: group for key, group in groups.items() if group is not None}
        forget = self._forgets(document, personal)
        if forget:
            self._count_forgotten(1)
        changed: dict[str, Any] = {}
        for key, value in document.items():
            group = personal.get(key)
            if isinstance(value, dict | list):
                changed[key] = self.json(value, in_address or "address" in key.lower())
                if forget and "address" in key.lower():
                    changed[key] = None
            elif group is None or isinstance(value, bool):
                changed[key] = value
            else:
                changed[key] = None if forget else self.value(group, value)
        return changed


def _blank(row: dict[str, Any], plan: RecordPlan) -> None:
    """Every personal field of the level and of its nested levels set to null."""
    for key in plan.fields:
        if key in row:
            row[key] = None
    for key, child in plan.nested.items():
        nested = row.get(key)
        if isinstance(nested, dict):
            _blank(nested, child)
