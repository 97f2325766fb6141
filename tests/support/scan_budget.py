"""What the scan budget decides for a run, computed from the settings a test passed (never from the
run's result): `scan_budget.plan` with the spec's rates, the test's time scale and the run interval."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from sources.platform.resources import FULL_SCANS, STREAMS
from sources.platform.scan_budget import DEFAULT_RUN_INTERVAL, Budget, Plan, operation_cost, plan
from sources.platform.settings import (
    DEFAULT_RESCAN_HOURS,
    DEFAULT_SCAN_BUDGET_SHARE,
    DEFAULT_UNLISTED_RATE_LIMIT,
)
from sources.platform_client.operations import DEFAULT_RATE_LIMITS


def plans(
    costs: Mapping[str, int], options: Mapping[str, Any], interval: timedelta = DEFAULT_RUN_INTERVAL
) -> dict[str, Plan]:
    """Each full scan's plan under `options` (the source's settings) for runs `interval` apart."""
    budget = Budget(
        options.get("scan_budget_share", DEFAULT_SCAN_BUDGET_SHARE),
        options.get("rescan_hours", DEFAULT_RESCAN_HOURS),
        options.get("rescan_hours_by_resource", {}),
    )
    if options.get("run_interval_hours"):
        interval = timedelta(hours=options["run_interval_hours"])
    scale = options.get("rate_limit_time_scale", 1.0)
    unlisted = options.get("unlisted_rate_limit", DEFAULT_UNLISTED_RATE_LIMIT)
    out = {}
    for name in FULL_SCANS:
        operation = STREAMS[name].operation
        same = [other for other in FULL_SCANS if STREAMS[other].operation == operation]
        rate = {**DEFAULT_RATE_LIMITS, **options.get("rate_limits", {})}.get(operation, unlisted)
        out[name] = plan(name, operation_cost(costs, name, same), rate * scale, interval, budget)
    return out


def read_every_run(costs: Mapping[str, int], options: Mapping[str, Any]) -> set[str]:
    """The full scans the budget reads on every run."""
    return {name for name, one in plans(costs, options).items() if one.interval == timedelta(0)}


# The old schedule of the fans (every 6 hours, the lists every run), as a user who wants it sets it: for
# the tests whose subject is a second run in which the fans are not due.
FANS = frozenset(name for name in FULL_SCANS if STREAMS[name].fans_out)
FANS_WAIT: dict[str, Any] = {"rescan_hours_by_resource": dict.fromkeys(sorted(FANS), 6)}


def share_that_fits(costs: Mapping[str, int], options: Mapping[str, Any], names: set[str]) -> float:
    """The smallest `scan_budget_share` at which every scan of `names` fits one hour's budget."""
    scale = options.get("rate_limit_time_scale", 1.0)
    unlisted = options.get("unlisted_rate_limit", DEFAULT_UNLISTED_RATE_LIMIT)
    needed = 0.0
    for name in names:
        operation = STREAMS[name].operation
        same = [other for other in FULL_SCANS if STREAMS[other].operation == operation]
        rate = DEFAULT_RATE_LIMITS.get(operation, unlisted) * scale * 60  # an hour's requests
        needed = max(needed, (operation_cost(costs, name, same) or 0) / rate)
    return needed
