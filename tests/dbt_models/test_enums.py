"""The enumerations of the spec live in the source's models (`sources/platform/models/enums.py`) and, for
the dbt tests and pivots, in `dbt_project.yml`'s `platform_enums`: the two must hold the same lists, so
that a value added to one is added to the other."""

from __future__ import annotations

import yaml  # type: ignore[import-untyped]

from pipelines.dbt.runner import DBT_PROJECT_DIR
from sources.platform.models import ENUMS


def test_the_dbt_enums_are_the_sources() -> None:
    project = yaml.safe_load((DBT_PROJECT_DIR / "dbt_project.yml").read_text())
    in_dbt = {name: frozenset(values) for name, values in project["vars"]["platform_enums"].items()}
    in_source = {name: frozenset(values) for name, values in ENUMS.items()}
    only_dbt = {name: sorted(v) for name, v in in_dbt.items() if v not in in_source.values()}
    only_source = {name: sorted(v) for name, v in in_source.items() if v not in in_dbt.values()}
    assert only_dbt == {} and only_source == {}, (
        "an enumeration differs between sources/platform/models/enums.py and dbt_project.yml: "
        f"dbt only {only_dbt}, source only {only_source}"
    )
