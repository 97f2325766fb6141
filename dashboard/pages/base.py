"""What a page is, and what the pages share: the marts' schema and the spec's enums."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]

from dashboard.filters import Filters
from dashboard.warehouse import Session

MARTS = "marts"
DBT_PROJECT = Path(__file__).resolve().parents[2] / "dbt_models" / "dbt_project.yml"


@dataclass(frozen=True)
class Page:
    """A page: its path, its title in the menu, what renders it and the marts it cannot do without;
    `sales_figures`: its figures count sales, so it says when the sync has not found them all
    (`dashboard/coverage.py`)."""

    path: str
    title: str
    render: Callable[[Session, Filters], list[Any]]
    marts: tuple[str, ...] = ()
    sales_figures: bool = False


def by_month(filters: Filters) -> Filters:
    """The filters widened to whole months, for the marts that count by month."""
    return replace(filters, start=filters.start.replace(day=1))


@cache
def spec_enum(name: str) -> frozenset[str]:
    """The values the API spec lists for an enum, from the one place the models keep them."""
    project = yaml.safe_load(DBT_PROJECT.read_text())
    return frozenset(project["vars"]["platform_enums"][name])
