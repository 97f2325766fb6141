"""How often a full-scan resource can be read whole, from the rate budget and the schedule (issue 47).

A full scan (`Stream.full_scan`: a whole list or a fan of one request per parent) costs as much in a run
with nothing new as in the first. Whether it is read on a run follows from arithmetic, not from a count:

- its **cost**: the distinct pages and requests its last complete scan needed (`rescan.CountingClient`;
  not retries, not a page read again because the list moved under the walk), added to the costs of the
  other full scans that spend the same operation's budget;
- its **operation's rate** in requests per minute: spec part 8, or `rate_limits`, times
  `rate_limit_time_scale`; `unlisted_rate_limit` for the operations the spec gives no limit;
- the **interval between runs**: the run's (`run_budget.RunBudget.interval`): `run_interval_hours` if
  set, else the median gap between the starts of the last runs (from the run records, else the source
  state), at least `MIN_MEASURED_INTERVAL` (a rerun by hand a minute later is not a schedule), one hour
  while fewer than two gaps are known;
- `scan_budget_share`: the share of the operation's requests, and so of the time between runs, that the
  full scans may take.

The scans may take `share x rate x interval` requests per run. A scan that fits is read on every run; one
that needs k intervals' share is read on every k-th run, due half an interval early so that a schedule's
jitter does not skip a run; `rescan_hours` is the longest wait (a scan never waits longer than that), and
`rescan_hours_by_resource` is the user's explicit choice, which wins. The decision, the interval and the
promise printed for the table (`Plan.promise`) come from the same `plan` call, so what the summary and
`_platform_freshness` promise is what the run did.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, MutableSequence, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import pendulum

# Source state key: the ISO starts of the last runs that read a full-scan resource, oldest first.
RUN_STARTS_KEY = "recent_run_starts"
KEPT_RUN_STARTS = 8
DEFAULT_RUN_INTERVAL = timedelta(hours=1)  # until two gaps between runs are known
MIN_MEASURED_INTERVAL = timedelta(minutes=5)


@dataclass(frozen=True)
class Budget:
    """What the arithmetic needs from the settings."""

    share: float  # scan_budget_share: 0 = never by the budget, only every `rescan_hours`
    rescan_hours: float
    overrides: Mapping[str, float]  # rescan_hours_by_resource


@dataclass(frozen=True)
class Plan:
    """How often one full scan is read, and the promise that follows."""

    interval: timedelta  # zero: every run; else due once this long after the last complete scan
    every_runs: int | None  # 1: every run; k: every k-th run; None: by hours (override or rescan_hours)
    promise: str  # for the summary, `_platform_freshness.refresh` and the dashboard
    stale_within: timedelta  # the longest a change on the platform may wait to reach the table


def note_run_start(starts: MutableSequence[str], started_at: datetime) -> None:
    """Record this run's start once (every full scan of a run calls this with the same time)."""
    stamp = started_at.isoformat()
    if starts and starts[-1] == stamp:
        return
    starts.append(stamp)
    del starts[:-KEPT_RUN_STARTS]


def run_interval(starts: Sequence[str], configured_hours: float) -> tuple[timedelta, bool]:
    """(the interval between runs, whether it was measured): `configured_hours` when above 0, else the
    median gap between `starts` (at least `MIN_MEASURED_INTERVAL`), else `DEFAULT_RUN_INTERVAL`."""
    if configured_hours > 0:
        return timedelta(hours=configured_hours), False
    times = sorted(_parse(stamp) for stamp in starts)
    gaps = [later - earlier for earlier, later in zip(times, times[1:], strict=False) if later > earlier]
    if len(gaps) < 2:
        return DEFAULT_RUN_INTERVAL, False
    median = timedelta(seconds=statistics.median(gap.total_seconds() for gap in gaps))
    return max(median, MIN_MEASURED_INTERVAL), True


def allowance(rate_per_minute: float, interval: timedelta, share: float) -> int:
    """The requests a purpose may spend of an operation in one run: `share` of what its rate allows
    between two runs, `share x rate x interval` (the same arithmetic for every purpose, `run_budget.py`)."""
    return math.floor(round(rate_per_minute * interval.total_seconds() / 60 * share, 9))


def operation_cost(costs: Mapping[str, int], resource: str, same_operation: Sequence[str]) -> int | None:
    """The requests the full scans spending `resource`'s operation made at their last complete scans
    (None while `resource` has none)."""
    if resource not in costs:
        return None
    return sum(int(costs.get(name, 0)) for name in {resource, *same_operation})


def plan(
    resource: str,
    cost: int | None,
    rate_per_minute: float,
    interval: timedelta,
    budget: Budget,
) -> Plan:
    """How often `resource` is read whole: `cost` requests (None: never scanned to its end, so read now)
    at `rate_per_minute` (scaled) under runs `interval` apart."""
    if resource in budget.overrides:
        hours = budget.overrides[resource]
        every = timedelta(hours=hours)
        if hours == 0:
            return Plan(every, None, "read every run (rescan_hours_by_resource)", interval)
        if within_every_run(every, interval):
            return Plan(timedelta(0), 1, f"read every run ({hours:g} h: rescan_hours_by_resource)", interval)
        return Plan(every, None, f"read every {hours:g} h (rescan_hours_by_resource)", every + interval)
    longest = timedelta(hours=budget.rescan_hours)
    if budget.rescan_hours == 0:
        return Plan(timedelta(0), 1, "read every run (rescan_hours = 0)", interval)
    if within_every_run(longest, interval):
        return Plan(timedelta(0), 1, f"read every run (rescan_hours = {budget.rescan_hours:g})", interval)
    if cost is None:
        return Plan(timedelta(0), 1, "read this run; then as its cost allows", interval)
    per_run = allowance(rate_per_minute, interval, budget.share) if budget.share > 0 else 0
    if per_run > 0:
        runs = max(1, math.ceil(cost / per_run))
        if runs == 1:
            return Plan(timedelta(0), 1, "read every run", interval)
        every = interval * (runs - 0.5)
        if every < longest:
            return Plan(
                every,
                runs,
                f"read every {runs} runs (about every {span_text(interval * runs)})",
                interval * runs + interval,
            )
    return Plan(longest, None, f"read every {budget.rescan_hours:g} h (rescan_hours)", longest + interval)


def within_every_run(every: timedelta, interval: timedelta) -> bool:
    """Whether a scan due `every` after the last is due on every run `interval` apart: within half an
    interval, so a run that starts early by up to half the interval still finds it due (a daily schedule
    with `rescan_hours` 6 reads it every run, and says so: its changes wait one interval, not 30 h)."""
    return every <= interval / 2


def span_text(span: timedelta) -> str:
    """A span in words for the summary: hours from one hour on, else minutes."""
    hours = span.total_seconds() / 3600
    return f"{hours:.3g} h" if hours >= 1 else f"{span.total_seconds() / 60:.3g} min"


def _parse(stamp: str) -> datetime:
    parsed = pendulum.parse(stamp)
    assert isinstance(parsed, datetime)
    return parsed
