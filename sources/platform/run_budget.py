"""How a run's requests are spent (issue 47): one arithmetic for every purpose, and what was spent.

Everything a run reads by a count rather than by what changed gets a share of its operation's requests
between two runs, `share x rate x interval` (`scan_budget.allowance`):

- the **full scans**: `scan_budget_share` of each list's operation (`scan_budget.plan` decides how often
  each is read);
- the **sale details**: `details_budget_share` of `sale_details`, at most `sales_max_requests`; of these,
  `sales_reverify_share` is kept for the re-verification cycle and `unknown_ids_share` may go to the ids
  on probation, and the rest goes to new and changed sales;
- the **renewal re-reads**: `details_budget_share` of `subscription_details`, at most
  `renewals_max_requests`.

The rate is the operation's limit (spec part 8, `rate_limits`) or `unlisted_rate_limit`, times
`rate_limit_time_scale`; the interval is measured once per run from the starts of the last runs
(`scan_budget.run_interval`) unless `run_interval_hours` sets it. So a run's reads by count fit in the
time until the next run whatever the schedule: the spec's 30 sale details a minute are 1,440 a run at
an hourly schedule and at most `sales_max_requests` = 5,000 at a daily one.

`RequestSplit` counts what the run spent per purpose; the summary prints the budget and that split.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sources.platform.scan_budget import allowance, run_interval, span_text
from sources.platform.settings import SourceSettings

SALE_DETAILS = "sale_details"
RENEWALS = "subscription_details"

# What a run's requests are spent on (`RequestSplit`), in the summary's order.
WHOLE_SCANS = "whole scans"
HEADS = "heads and tails of sorted lists"
NEW_SALES = "new or changed sales"
REVERIFY = "re-verified sales"
UNKNOWN_IDS = "unknown sale ids"
RENEWAL_READS = "renewal re-reads"
PURPOSES = (WHOLE_SCANS, HEADS, NEW_SALES, REVERIFY, UNKNOWN_IDS, RENEWAL_READS)
RETRIES = "retries"
THE_REST = "incremental lists and ids"


@dataclass(frozen=True)
class Allowance:
    """What one run may spend on one operation read by id: the least of the share of its requests
    between two runs and of the user's cap."""

    operation: str
    rate_per_minute: float  # its rate limit, or `unlisted_rate_limit`
    time_scale: float  # `rate_limit_time_scale`: the sandbox's faster clock, 1 against the real API
    share: float
    cap: int
    cap_setting: str
    by_rate: int  # share x rate x interval

    @property
    def per_run(self) -> int:
        """The requests of this run: at least one while the cap allows any."""
        return min(self.cap, max(1, self.by_rate))

    def describe(self, interval: timedelta) -> str:
        bound = "the cap" if self.cap <= self.by_rate else "the budget"
        scaled = f" x {self.time_scale:g} (rate_limit_time_scale)" if self.time_scale != 1 else ""
        return (
            f"{self.per_run:,} {self.operation} ({self.share:g} x {self.rate_per_minute:g}/min{scaled} x "
            f"{span_text(interval)} = {self.by_rate:,}; {self.cap_setting} = {self.cap:,}; {bound} binds)"
        )


@dataclass(frozen=True)
class RunBudget:
    """The run's request budget by purpose, decided once before its first request."""

    interval: timedelta
    interval_from: str  # where the interval comes from, in words
    scan_share: float
    sale_details: Allowance
    reverify: int  # of `sale_details.per_run`, kept for the re-verification cycle
    unknown_ids: int  # of `sale_details.per_run`, that the ids on probation may take
    renewals: Allowance

    def lines(self) -> list[str]:
        """The summary's lines on the budget."""
        details = self.sale_details
        return [
            f"budget: runs {span_text(self.interval)} apart ({self.interval_from}); each operation's "
            f"requests between two runs, at its rate limit, are shared out:",
            f"  full scans: {self.scan_share:g} of each list's operation (scan_budget_share)",
            f"  sale details: {details.describe(self.interval)}; of them {self.reverify:,} for the "
            f"re-verification cycle (sales_reverify_share), up to {self.unknown_ids:,} for unknown ids "
            "(unknown_ids_share), the rest for new and changed sales",
            f"  renewal re-reads: {self.renewals.describe(self.interval)}",
        ]


def run_budget(
    settings: SourceSettings,
    rate_of: Callable[[str], float | None],
    time_scale: float,
    starts: Sequence[str],
    started_at: datetime,
    from_records: bool = False,
) -> RunBudget:
    """The budget of the run starting at `started_at`, after the runs that started at `starts` (from the
    run records, `from_records`, else the source state's `scan_budget.RUN_STARTS_KEY`);
    `rate_of(operation)`: its configured limit, if any."""
    stamp = started_at.isoformat()
    all_starts = [*starts, stamp] if not starts or starts[-1] != stamp else list(starts)
    interval, measured = run_interval(all_starts, settings.run_interval_hours)
    if settings.run_interval_hours > 0:
        source = "run_interval_hours"
    elif measured:
        records = "_platform_sync_runs" if from_records else "the source state"
        source = f"the median gap between the last {len(all_starts)} runs' starts, from {records}"
    else:
        source = "assumed until two gaps between runs are known; run_interval_hours sets it"

    def by_id(operation: str, share: float, cap: int, cap_setting: str) -> Allowance:
        rate = rate_of(operation) or settings.unlisted_rate_limit
        by_rate = allowance(rate * time_scale, interval, share)
        return Allowance(operation, rate, time_scale, share, cap, cap_setting, by_rate)

    details = by_id(
        SALE_DETAILS, settings.details_budget_share, settings.sales_max_requests, "sales_max_requests"
    )
    renewals = by_id(
        RENEWALS, settings.details_budget_share, settings.renewals_max_requests, "renewals_max_requests"
    )
    return RunBudget(
        interval,
        source,
        settings.scan_budget_share,
        details,
        budget_share(settings.sales_reverify_share, details.per_run),
        budget_share(settings.unknown_ids_share, details.per_run),
        renewals,
    )


def waiting_line(waiting: int, budget: int) -> str:
    """The run's warning on the sale ids left for the next run."""
    return (
        f"{waiting:,} sale ids wait for the next run (the run's budget of {budget:,} sale details was "
        "spent or requests failed; the summary's budget lines say how it was set)"
    )


def budget_share(share: float, budget: int) -> int:
    """ceil(share x budget) requests of a run's sale details, leaving at least one to the new ids (the
    cycle's reserve, `sales_reverify_share`; the ids on probation's allowance, `unknown_ids_share`)."""
    return min(math.ceil(round(share * budget, 9)), budget - 1) if share > 0 else 0


@dataclass
class RequestSplit:
    """The requests a run spent per purpose (`PURPOSES`), each counted once however often it was tried;
    the tries that repeated one are `RETRIES`, and whatever the client made beyond them (the incremental
    lists and windows, reads by configured ids) is `THE_REST`. Thread-safe."""

    counts: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def spend(self, purpose: str, requests: int = 1) -> None:
        if requests:
            with self._lock:
                self.counts[purpose] = self.counts.get(purpose, 0) + requests

    def split(self, total: int, retries: int = 0) -> dict[str, int]:
        """Every purpose's requests, the `retries`, and `THE_REST` of the run's `total` (every try)."""
        with self._lock:
            counted = {purpose: self.counts.get(purpose, 0) for purpose in PURPOSES}
        counted[RETRIES] = retries
        counted[THE_REST] = max(0, total - sum(counted.values()))
        return counted


def split_line(split: dict[str, int]) -> str:
    """The summary's line of a run's `RequestSplit.split`."""
    return "requests by purpose: " + ", ".join(f"{purpose} {count:,}" for purpose, count in split.items())
