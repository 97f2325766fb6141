"""The departures and quarantine tables and free JSON through the privacy settings (`scrub.Scrubber`'s
part for JSON no table describes: webhook deliveries, quarantined records, departures' original values).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from sources.platform.privacy.fields import RecordPlan, group_at_path, json_child, json_groups


class FreeJson:
    """Mixed into `Scrubber`, which gives the three methods below."""

    def value(self, group: str, value: Any) -> Any:
        raise NotImplementedError

    def _forgets(self, row: Mapping[str, Any], fields: Mapping[str, str]) -> bool:
        raise NotImplementedError

    def _count_forgotten(self, records: int) -> None:
        raise NotImplementedError

    def departure_row(self, row: dict[str, Any], plan: RecordPlan | None = None) -> dict[str, Any]:
        """An original value of a personal field is changed as that group is: the field found by its path
        in the resource's `plan` where given (`buyer.name` a name, a product's `name` not), by the path's
        last key's name elsewhere (a field new to the model)."""
        group = group_at_path(plan, str(row.get("field_path", "")))
        if group is not None:
            for value in row.get("values") or []:
                if isinstance(value, dict) and value.get("value") is not None:
                    value["value"] = self.value(group, value["value"])
        return row

    def quarantine_row(self, row: dict[str, Any], plan: RecordPlan | None = None) -> dict[str, Any]:
        """The raw JSON of a quarantined record, with its personal values changed: by its resource's
        `plan` where given (the record departs from its model, but mostly keeps its keys), by key name
        elsewhere (a product's `name` is then treated as a person's)."""
        try:
            document = json.loads(row.get("raw_json") or "null")
        except ValueError:
            return row
        row["raw_json"] = json.dumps(self.json(document, plan=plan), default=str, ensure_ascii=False)
        return row

    def json(self, document: Any, in_address: bool = False, plan: RecordPlan | None = None) -> Any:
        """Free JSON (a webhook delivery's data, a quarantined record) through the settings (`walk_json`):
        each personal value changed as its group is, an object naming a forgotten person blanked."""
        changed, hits = walk_json(document, self.value, self._forgets, in_address, plan)
        if hits:
            self._count_forgotten(hits)
        return changed


Names = Callable[[Mapping[str, Any], Mapping[str, str]], bool]  # (an object, its personal keys) -> named?


def walk_json(
    document: Any,
    change: Callable[[str, Any], Any],
    names: Names,
    in_address: bool = False,
    plan: RecordPlan | None = None,
) -> tuple[Any, int]:
    """Free JSON with each personal value changed (`change(group, value)`), its keys the record's `plan`'s
    where known, else guessed by name (`fields.json_groups`), and every object that `names` a forgotten
    person blanked: all its personal keys and its address null. With the `plan`, a level beside a
    forgotten person (a sale whose buyer is forgotten) also loses the names that name nobody
    (`producer.name`), as `Scrubber.record` does in the tables. Returns the JSON and how many objects
    were blanked. The sync (`FreeJson.json`) and `forget` (which changes nothing else) both walk this way.
    """
    if isinstance(document, list):
        walked = [walk_json(element, change, names, in_address, plan) for element in document]
        return [element for element, _ in walked], sum(hits for _, hits in walked)
    if not isinstance(document, dict):
        return document, 0
    groups = json_groups(document, plan, in_address)
    personal = {key: group for key, group in groups.items() if group is not None}
    named = names(document, personal)
    hits = int(named)
    beside = named or (
        plan is not None
        and any(
            isinstance(level := document.get(key), dict) and names(level, child.fields)
            for key, child in plan.nested.items()
        )
    )
    out: dict[str, Any] = {}
    for key, value in document.items():
        group = personal.get(key)
        child = json_child(plan, key)
        if named and (group is not None or "address" in key.lower()):
            out[key] = None
        elif beside and child is not None and not child.identified and isinstance(value, dict):
            out[key] = {k: (None if k in child.fields else v) for k, v in value.items()}
        elif isinstance(value, dict | list):
            out[key], deeper = walk_json(value, change, names, in_address or "address" in key.lower(), child)
            hits += deeper
        elif group is None or isinstance(value, bool):
            out[key] = value
        else:
            out[key] = change(group, value)
    return out, hits
