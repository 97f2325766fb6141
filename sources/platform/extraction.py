"""What the running dlt extract tells a reader; each answers for a reader driven by hand, outside one."""

from __future__ import annotations

import dlt
from dlt.common.schema import Schema
from dlt.common.storages.exceptions import CurrentLoadPackageStateNotAvailable
from dlt.extract.exceptions import CurrentSourceSchemaNotAvailable


def current_load_id() -> str | None:
    """The load id of the extract running this reader, None outside one (a reader driven by hand)."""
    try:
        return str(dlt.current.load_package_state()["load_id"])
    except CurrentLoadPackageStateNotAvailable:
        return None


def current_source_schema() -> Schema | None:
    """The schema the extract running this reader evolves (the stored one, updated as tables arrive),
    None outside one."""
    try:
        return dlt.current.source_schema()
    except CurrentSourceSchemaNotAvailable:
        return None


def selected_resources() -> set[str] | None:
    """The resources this extract runs, None outside one."""
    try:
        return set(dlt.current.source().resources.selected)
    except Exception:  # outside an extract (a reader driven by hand)
        return None


def sales_selected() -> bool:
    """Whether this extract runs `sales`: if it does not, nobody would take the offered ids (outside an
    extract, the ids are kept)."""
    selected = selected_resources()
    return selected is None or "sales" in selected
