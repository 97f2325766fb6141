"""The run's budget (issue 47): one arithmetic, `share x rate x interval`, for the full scans, the sale
details (with the re-verification cycle's and the unknown ids' shares of them) and the renewal re-reads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sources.platform.run_budget import (
    PURPOSES,
    RETRIES,
    REVERIFY,
    THE_REST,
    WHOLE_SCANS,
    RequestSplit,
    run_budget,
)
from sources.platform.scan_budget import Budget, allowance, plan
from sources.platform.settings import SourceSettings

START = datetime(2026, 12, 7, 12, tzinfo=UTC)
SPEC = {"sale_details": 30.0}  # subscription_details: not in the spec, so `unlisted_rate_limit` (60)


def settings(**overrides: object) -> SourceSettings:
    return SourceSettings(start_date=START, **overrides)  # type: ignore[arg-type]


def starts(gap: timedelta, runs: int) -> list[str]:
    return [(START - gap * (runs - i)).isoformat() for i in range(runs)]


def test_an_hourly_schedule_spends_what_an_hour_of_the_rate_allows() -> None:
    budget = run_budget(settings(), SPEC.get, 1.0, starts(timedelta(hours=1), 4), START)
    assert budget.interval == timedelta(hours=1)
    # 0.8 x 30/min x 60 min: the run's sale details end well before the next run is due
    assert (budget.sale_details.by_rate, budget.sale_details.per_run) == (1440, 1440)
    assert (budget.reverify, budget.unknown_ids) == (144, 144)
    # 0.8 x 60/min x 60 min = 2,880, and renewals_max_requests = 200 binds
    assert (budget.renewals.by_rate, budget.renewals.per_run) == (2880, 200)
    assert budget.lines()[0].startswith("budget: runs 1 h apart (the median gap between the last 5 runs")


def test_a_daily_schedule_is_held_to_the_cap() -> None:
    budget = run_budget(settings(), SPEC.get, 1.0, starts(timedelta(days=1), 3), START)
    assert budget.interval == timedelta(days=1)
    assert (budget.sale_details.by_rate, budget.sale_details.per_run) == (34_560, 5000)
    assert budget.reverify == 500
    assert "sales_max_requests = 5,000; the cap binds" in budget.lines()[2]


def test_the_configured_interval_and_the_time_scale_set_it() -> None:
    budget = run_budget(
        settings(run_interval_hours=0.25, details_budget_share=0.5), SPEC.get, 10.0, [], START
    )
    assert budget.interval == timedelta(minutes=15)
    assert budget.interval_from == "run_interval_hours"
    assert budget.sale_details.per_run == 30 * 10 * 15 // 2  # 2,250
    assert "x 10 (rate_limit_time_scale) x 15 min = 2,250" in budget.lines()[2]


def test_a_first_run_assumes_an_hour_and_says_so() -> None:
    budget = run_budget(settings(), SPEC.get, 1.0, [], START)
    assert budget.interval == timedelta(hours=1)
    assert "assumed until two gaps between runs are known" in budget.interval_from


@pytest.mark.parametrize(
    "rate, minutes, share", [(30, 60, 0.1), (200, 60, 0.1), (60, 1440, 0.05), (7, 5, 0.3)]
)
def test_a_scan_is_read_every_run_exactly_when_it_fits_the_same_allowance(
    rate: float, minutes: int, share: float
) -> None:
    interval = timedelta(minutes=minutes)
    fits = allowance(rate, interval, share)
    shares = Budget(share, rescan_hours=10_000, overrides={})
    for cost in range(max(1, fits - 3), fits + 4):
        every_run = plan("lesson_comments", cost, rate, interval, shares).every_runs == 1
        assert every_run == (cost <= fits), cost


def test_the_split_adds_up_to_the_run_and_leaves_the_rest_to_the_rest() -> None:
    split = RequestSplit()
    split.spend(WHOLE_SCANS, 40)
    split.spend(REVERIFY, 7)
    split.spend(REVERIFY, 0)
    counted = split.split(total=100, retries=5)
    assert list(counted) == [*PURPOSES, RETRIES, THE_REST]
    assert (counted[WHOLE_SCANS], counted[REVERIFY], counted[RETRIES], counted[THE_REST]) == (40, 7, 5, 48)
    assert sum(counted.values()) == 100
