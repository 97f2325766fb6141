"""The scan budget's arithmetic (`sources/platform/scan_budget.py`) on fixed times: which full scans are
read every run, every k-th run or every `rescan_hours`, the interval between runs measured from their
starts, and the cost counted in distinct requests (`rescan.CountingClient`)."""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from sources.platform.rescan import CountingClient, is_due
from sources.platform.run_budget import PURPOSES, RETRIES, THE_REST, WHOLE_SCANS, RequestSplit
from sources.platform.scan_budget import (
    DEFAULT_RUN_INTERVAL,
    KEPT_RUN_STARTS,
    MIN_MEASURED_INTERVAL,
    Budget,
    note_run_start,
    operation_cost,
    plan,
    run_interval,
)
from sources.platform_client.paging import Page

HOUR = timedelta(hours=1)
T0 = datetime(2026, 1, 1, tzinfo=UTC)
BUDGET = Budget(share=0.1, rescan_hours=6, overrides={})


def test_a_list_that_fits_its_share_of_an_hour_is_read_every_run() -> None:
    # lesson comments: 33 requests at 200 a minute, 10% of an hour = 1,200 requests: every run
    assert plan("lesson_comments", 33, 200, HOUR, BUDGET).interval == timedelta(0)
    assert plan("lesson_comments", 33, 200, HOUR, BUDGET).promise == "read every run"
    # exactly the share: still fits (60 a minute x 0.1 x 60 min = 360)
    assert plan("transfers", 360, 60, HOUR, BUDGET).every_runs == 1
    assert plan("transfers", 361, 60, HOUR, BUDGET).every_runs == 2


def test_a_scan_needing_k_intervals_is_due_from_half_an_interval_before_the_kth_run() -> None:
    one = plan("product_campaigns", 500, 30, HOUR, BUDGET)  # 500 / 3 a minute = 167 min: every 3 runs
    assert one.every_runs == 3
    assert one.interval == timedelta(hours=2.5)  # a run 2 h 59 min later is not skipped by jitter
    assert one.promise == "read every 3 runs (about every 3 h)"
    assert one.stale_within == timedelta(hours=4)


def test_rescan_hours_is_the_longest_wait_and_an_override_wins() -> None:
    slow = plan("deliveries", 100_000, 30, HOUR, BUDGET)
    assert (slow.interval, slow.every_runs) == (timedelta(hours=6), None)
    assert slow.promise == "read every 6 h (rescan_hours)"
    assert plan("transfers", 1, 60, HOUR, Budget(0, 6, {})).interval == timedelta(hours=6)  # share 0: off
    assert plan("transfers", 10**6, 60, HOUR, Budget(0.1, 0, {})).interval == timedelta(0)  # 0: every run
    override = plan("transfers", 1, 60, HOUR, Budget(0.1, 6, {"transfers": 24}))
    assert (override.interval, override.promise) == (
        timedelta(hours=24),
        "read every 24 h (rescan_hours_by_resource)",
    )
    assert plan("transfers", None, 60, HOUR, BUDGET).interval == timedelta(0)  # never scanned: now


def test_a_longest_wait_within_half_the_interval_is_read_every_run_and_promised_so() -> None:
    day = timedelta(hours=24)
    daily = plan("deliveries", 100_000, 30, day, BUDGET)  # rescan_hours 6 under daily runs: every run
    assert (daily.interval, daily.every_runs, daily.stale_within) == (timedelta(0), 1, day)
    assert daily.promise == "read every run (rescan_hours = 6)"
    override = plan("transfers", 1, 60, day, Budget(0.1, 6, {"transfers": 12}))
    assert (override.interval, override.promise, override.stale_within) == (
        timedelta(0),
        "read every run (12 h: rescan_hours_by_resource)",
        day,
    )
    # more than half an interval: a run starting early could find it not due, so it is promised by hours
    assert plan("transfers", 1, 60, day, Budget(0.1, 6, {"transfers": 13})).stale_within == day + timedelta(
        hours=13
    )


def test_the_time_scale_and_the_schedule_change_the_answer() -> None:
    fan = 142  # campaigns: one request a product, 30 a minute
    assert plan("product_campaigns", fan, 30, HOUR, BUDGET).every_runs == 1  # 47 min of 60
    assert plan("product_campaigns", fan, 30, timedelta(minutes=15), BUDGET).every_runs == 4
    assert plan("product_campaigns", fan, 30 * 60, timedelta(minutes=15), BUDGET).every_runs == 1


def test_the_interval_between_runs_is_measured_from_their_starts() -> None:
    starts: list[str] = []
    assert run_interval(starts, 0) == (DEFAULT_RUN_INTERVAL, False)
    for minutes in (0, 60, 120):
        note_run_start(starts, T0 + timedelta(minutes=minutes))
        note_run_start(starts, T0 + timedelta(minutes=minutes))  # every full scan of a run says it
    assert len(starts) == 3
    assert run_interval(starts, 0) == (HOUR, True)
    note_run_start(starts, T0 + timedelta(minutes=125))  # a rerun by hand: the median holds
    note_run_start(starts, T0 + timedelta(minutes=185))
    assert run_interval(starts, 0) == (HOUR, True)
    assert run_interval(starts, 24) == (timedelta(hours=24), False)  # the user's schedule wins
    quick = [(T0 + timedelta(seconds=s)).isoformat() for s in (0, 5, 10)]
    assert run_interval(quick, 0) == (MIN_MEASURED_INTERVAL, True)
    for minutes in range(20):
        note_run_start(starts, T0 + timedelta(hours=5, minutes=minutes))
    assert len(starts) == KEPT_RUN_STARTS


def test_the_operation_budget_is_shared_by_the_scans_that_spend_it() -> None:
    costs = {"products": 3, "product_snapshots": 3, "transfers": 1}
    assert operation_cost(costs, "products", ["products", "product_snapshots"]) == 6
    assert operation_cost(costs, "events", ["events"]) is None


class FakeClient:
    """Answers every paged request with the pages it is asked for, as a walk made twice asks them."""

    def __init__(self) -> None:
        self.sent = 0

    def paginate(
        self, operation_name: str, path_params: Any = None, params: Any = None, distinct: bool = False
    ) -> Iterator[Page]:
        for _walk in range(2):  # the list moved: the walk is made again from page 1
            for number in (1, 2, 3):
                self.sent += 1
                yield Page([{"id": number}], number, 3, 3, 1)

    def request(self, operation_name: str, path_params: Mapping[str, object] | None = None, *_: Any) -> Any:
        self.sent += 1
        return {}


def test_a_scan_costs_its_distinct_requests_not_its_walks_again() -> None:
    fake = FakeClient()
    split = RequestSplit()
    counting = CountingClient(fake, split, WHOLE_SCANS)  # type: ignore[arg-type]
    assert len(list(counting.paginate("list_transfers", None, {"status": "x"}))) == 6
    assert (fake.sent, counting.requests) == (6, 3)
    for product in (1, 2, 1):
        counting.request("product_campaigns", {"product_id": product})
    assert counting.requests == 5
    # what the run spent: every request, the pages asked again included
    assert split.split(total=12) == {**dict.fromkeys(PURPOSES, 0), WHOLE_SCANS: 9, RETRIES: 0, THE_REST: 3}


@pytest.mark.parametrize("share", [0.5, 0.05])
def test_a_smaller_share_never_reads_more_often(share: float) -> None:
    wide, narrow = Budget(share, 6, {}), Budget(share / 2, 6, {})
    for cost in (1, 50, 500, 5000):
        assert plan("x", cost, 30, HOUR, narrow).interval >= plan("x", cost, 30, HOUR, wide).interval


@pytest.mark.parametrize(
    ("cost", "rate", "budget", "kind"),
    [
        (33, 200, BUDGET, "read every run"),
        (500, 30, BUDGET, "read every 3 runs"),
        (100_000, 30, BUDGET, "(rescan_hours)"),
        (1, 60, Budget(0.1, 6, {"transfers": 24}), "(rescan_hours_by_resource)"),
        (1, 60, Budget(0.1, 0, {}), "(rescan_hours = 0)"),
        (100_000, 30, Budget(0.1, 0.5, {}), "read every run (rescan_hours = 0.5)"),
        (1, 60, Budget(0.1, 6, {"transfers": 0.5}), "read every run (0.5 h: rescan_hours_by_resource)"),
    ],
)
@pytest.mark.parametrize("jitter", [0.0, 0.05, 0.2, 0.45])
def test_a_change_waits_no_longer_than_the_promise_at_its_edge(
    cost: int, rate: float, budget: Budget, kind: str, jitter: float
) -> None:
    """On a fake clock, 600 hourly runs each starting up to `jitter` of an interval early or late, the
    scan read whenever `rescan.is_due` says so: a change made on the platform just after a whole scan read
    its record waits for the next whole scan. The longest such wait is within the printed promise
    (`stale_within`), plus the runs' own lateness (a promise is made for runs at the measured interval);
    with runs on time it reaches the promise's last interval, so the promise is its edge, not a guess."""
    promised = plan("transfers", cost, rate, HOUR, budget)
    assert kind in promised.promise
    rng = random.Random(47)
    starts = [T0 + HOUR * (i + jitter * rng.uniform(-1, 1)) for i in range(600)]
    scans: list[datetime] = []
    for start in starts:
        if not scans or is_due(scans[-1], promised.interval, start):
            scans.append(start)
    longest = max(later - earlier for earlier, later in zip(scans, scans[1:], strict=False))
    assert longest <= promised.stale_within + 2 * jitter * HOUR
    if jitter == 0:
        assert longest > promised.stale_within - HOUR - timedelta(seconds=1)
    # never more often than the plan says either: a scan needing k runs' budget is read once in k runs
    if promised.every_runs:
        assert len(scans) <= len(starts) / promised.every_runs + 1
