"""The departures and quarantine tables and free JSON through the privacy settings (`scrub.Scrubber`'s
part for JSON no table describes: webhook deliveries, quarantined records, departures' original values).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
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
        """Free JSON (a webhook delivery's data, a quarantined record) with personal keys changed, keys
        from the record's `plan` when known, else guessed by name (`fields.group_of_key`); an object
        naming a forgotten person is blanked, with the levels beside it that name nobody when the plan
        says which (as `record` does)."""
        if isinstance(document, list):
            return [self.json(element, in_address, plan) for element in document]
        if not isinstance(document, dict):
            return document
        groups = json_groups(document, plan, in_address)
        personal = {key: group for key, group in groups.items() if group is not None}
        forget = self._forgets(document, personal)
        if forget:
            self._count_forgotten(1)
        # a level beside a forgotten person (a sale whose buyer is forgotten) loses the names that name
        # nobody, as in `Scrubber.record`
        beside = forget or (
            plan is not None
            and any(
                isinstance(document.get(key), dict) and self._forgets(document[key], child.fields)
                for key, child in plan.nested.items()
            )
        )
        changed: dict[str, Any] = {}
        for key, value in document.items():
            group = personal.get(key)
            child = json_child(plan, key)
            if beside and child is not None and not child.identified and isinstance(value, dict):
                changed[key] = {k: (None if k in child.fields else v) for k, v in value.items()}
            elif isinstance(value, dict | list):
                changed[key] = self.json(value, in_address or "address" in key.lower(), child)
                if forget and "address" in key.lower():
                    changed[key] = None
            elif group is None or isinstance(value, bool):
                changed[key] = value
            else:
                changed[key] = None if forget else self.value(group, value)
        return changed
