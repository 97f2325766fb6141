"""What a page is, and what the pages share: the marts' schema and the spec's enums."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date
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


# How far the data goes: the newest change of a sale or subscription (the months of the marts run to it);
# an event's start only without them (an event may start a year ahead: 2027 in the sandbox's world,
# against sales up to June 2026).
DATA_DAYS = (
    ("fct_sales", "max(greatest(coalesce(paid_on, created_on), cast(updated_at as date)))"),
    ("fct_subscriptions", "max(greatest(cast(started_at as date), cast(updated_at as date)))"),
)
UPCOMING_DAYS = (("event_attendance", "max(cast(event_starts_at as date))"),)


def newest_day(session: Session) -> date | None:
    """The newest day the data is of (`DATA_DAYS`, else `UPCOMING_DAYS`), None without data. Periods and
    "to date" marks follow it, not our clock: the platform's clock may be behind ours, and an account
    may be quiet for months."""
    marts = session.tables(MARTS)
    for dated in (DATA_DAYS, UPCOMING_DAYS):
        days = [
            session.rows(f"select {newest} from {MARTS}.{mart}")[0][0]
            for mart, newest in dated
            if mart in marts
        ]
        known = [day for day in days if day is not None]
        if known:
            return max(known)
    return None


def month_to_date(month_start: date, newest: date | None) -> bool:
    """The month is not over as far as the data goes: its figures are to `newest`, not to its end. Also a
    month after the newest change (the marts' months run to sales' future credit dates: the demo's June,
    its data to May 31), as the models' summary says it ("to 2026-05-31")."""
    if newest is None:
        return False
    following = date(month_start.year + month_start.month // 12, month_start.month % 12 + 1, 1)
    return (following - newest).days > 1
