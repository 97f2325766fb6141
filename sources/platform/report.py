"""What happened to each resource in one run: the pipeline's summary and exit status come from here."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sources.platform.departures import DepartureLog
from sources.platform.retired import Retirements
from sources.platform.run_budget import RequestSplit, RunBudget
from sources.platform.seen_keys import SeenKeys

if TYPE_CHECKING:
    from sources.platform.runclock import RunClock
    from sources.platform_client.ratelimit import Schedule

if TYPE_CHECKING:
    from sources.platform.privacy import Scrubber

logger = logging.getLogger("platform_sync.source")


@dataclass(frozen=True)
class ScanSchedule:
    """How often a full-scan resource is read, as this run found it (`rescan.py`)."""

    interval: timedelta  # zero: on every run (the budget allows it)
    next_after: datetime  # the first run start that reads it again
    promise: str = ""  # how often it is read, in words (`scan_budget.Plan.promise`)
    stale_within: timedelta | None = None  # the longest a change may wait to reach the table


@dataclass(frozen=True)
class SaleDetailsPace:
    """What bounds the sale details: requests per run and per minute (for the backlog's ETA)."""

    max_requests_per_run: int
    requests_per_minute: float | None
    # The rate limiter's schedule (time scale included; None: unlimited): the progress's ETA of the sale
    # details follows it while the limiter sets their pace (issue 51).
    schedule: Callable[[], Schedule | None] | None = None


@dataclass
class SalesCycle:
    """The re-verification cycle of known sales in this run (`sales_reverify_share`)."""

    per_run: int  # requests kept for the cycle: ceil(share x the run's sale details), `run_budget.py`
    run_at: datetime  # this run's start
    reverified: int = 0  # sales fetched by the cycle alone in this run


@dataclass
class SalePasses:
    """A run loaded in passes (checkpoints, `pipelines/sync/checkpoints.py`): each pass is one load with
    its state, and fetches at most `checkpoint` sale details of the run's budget (`run_budget.py`). What the
    passes so far did, so that the next one goes on from there instead of repeating it."""

    checkpoint: int  # sale details per pass
    # at least a minute of sale details at their rate limit, when more than `checkpoint` (its default)
    at_least_a_minute: bool = False
    cycle_only: bool = False  # a pass for the re-verification cycle alone (the rest of the run was done)
    fetched: set[str] = field(default_factory=set)  # sale ids requested by the passes so far
    spent: int = 0  # sale details requested by the passes so far
    reverified: int = 0  # of them, by the re-verification cycle
    cycle: SalesCycle | None = None  # the run's cycle (the first pass's start)
    waiting: int = 0  # sale ids the last pass left for later (its budget reached, or requests failed)
    # the last pass's sale details: (budget, spent, cycle reserve, reverified); None: `sales` did not run
    last: tuple[int, int, int, int] | None = None

    def plan(
        self, run_budget: int, run_reserve: int, reserve_of: Callable[[int], int], per_minute: float = 0.0
    ) -> tuple[int, int]:
        """This pass's (budget, cycle reserve): the checkpoint (or, `at_least_a_minute`, the sale details
        their limit allows in a minute, `per_minute`, when more) within what the run has left, and its
        share of the cycle (`reserve_of(budget)`; all of it in a pass for the cycle alone) within the
        run's."""
        checkpoint = self.checkpoint
        if self.at_least_a_minute:
            checkpoint = max(checkpoint, math.floor(per_minute))
        budget = max(0, min(checkpoint, run_budget - self.spent))
        cycle_left = max(0, run_reserve - self.reverified)
        reserve = min(cycle_left, budget if self.cycle_only else reserve_of(budget))
        return budget, reserve

    def passed(self, fetched: set[str], budget: int, spent: int, reserve: int, reverified: int) -> None:
        self.fetched |= fetched
        self.spent += spent
        self.reverified += reverified
        self.last = (budget, spent, reserve, reverified)


@dataclass
class RunReport:
    """Resources skipped (a missing scope) or failed (an error after retries) in this run, and full-scan
    resources not read because their last complete scan is recent (`not_due`, which is no problem).

    The source records into it; the command line prints it and exits non-zero when it is not clean.
    Thread-safe, since resources run in dlt's extract thread pool.
    """

    not_due: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    departures: DepartureLog = field(default_factory=DepartureLog)  # what departs from the spec
    scans: dict[str, ScanSchedule] = field(default_factory=dict)  # the full-scan resources' schedules
    budget: RunBudget | None = None  # the run's requests by purpose, decided before the first
    spent: RequestSplit = field(default_factory=RequestSplit)  # what the run spent per purpose
    sale_details_pace: SaleDetailsPace | None = None
    sales_cycle: SalesCycle | None = None  # set by `sales` when it runs
    changed_sales: int = 0  # known sales found changed (their fiscal documents are read again)
    configured_sale_ids: tuple[str, ...] = ()  # `sale_ids`, for the sales coverage (set by `sales`)
    # Ids the API answers 404 for, counted across runs until they retire: one for the run, shared by
    # every copy of the source's context (`resources/context.py`).
    retirements: Retirements | None = None
    # Sale details this run has fetched or will fetch (the known ids, within the budget): the progress
    # display's total. None until the sales resource starts.
    sale_details_planned: int | None = None
    sale_details_final: bool = False  # the planned count grows no more (`plan_sale_details`)
    # Rows the full scans' lists announced (`totalItems` of each list's first page, summed over the
    # lists a resource reads): the progress display's totals.
    rows_announced: dict[str, int] = field(default_factory=dict)
    run_clock: RunClock | None = None  # the run's times by the API's clock and ours (`runclock.py`)
    # The keys each complete scan of a resource whose deletions are marked saw (`pipelines/deletions.py`);
    # a resource is here only once its scan ended.
    scanned_keys: dict[str, SeenKeys] = field(default_factory=dict)
    # Per resource, the configured parents (values of its `Stream.gone_by` columns) whose request answered
    # 404 in this run: their rows are marked deleted after the load (`pipelines/deletions.py`).
    gone: dict[str, set[tuple[str, ...]]] = field(default_factory=dict)
    privacy: Scrubber | None = None  # what the run does to personal values (`privacy/`)
    sale_passes: SalePasses | None = None  # the run loads in passes (`pipelines/sync/checkpoints.py`)
    # What the clients of the run's earlier passes counted (each pass builds its source, and its client).
    _earlier_requests: dict[str, int] = field(default_factory=dict, repr=False)
    _earlier_retries: int = field(default=0, repr=False)
    _count_retries: Callable[[], int] | None = field(default=None, repr=False)
    _earlier_rate_limited: dict[str, tuple[int, int]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _count_requests: Callable[[], dict[str, int]] | None = field(default=None, repr=False)
    # 429 answers per operation: (all, those from another client of the account), from the client.
    _count_rate_limited: Callable[[], dict[str, tuple[int, int]]] | None = field(default=None, repr=False)

    @property
    def run_interval(self) -> timedelta | None:
        """The interval between runs the run's budget was set by (`run_budget.py`)."""
        return self.budget.interval if self.budget is not None else None

    @property
    def retired_now(self) -> list[tuple[str, str]]:
        """(kind, id) of the ids this run retired."""
        return self.retirements.retired_now if self.retirements is not None else []

    def count_requests_with(self, counter: Callable[[], dict[str, int]]) -> None:
        """Where `requests` reads the number of requests made per operation (the source's client); a
        later pass's client adds to what the earlier ones counted."""
        self._earlier_requests = self.requests
        self._count_requests = counter

    def count_retries_with(self, counter: Callable[[], int]) -> None:
        """Where `retries` reads the tries that repeated a request (the source's client), as `requests`."""
        self._earlier_retries = self.retries
        self._count_retries = counter

    @property
    def retries(self) -> int:
        """The tries of the run that repeated a request (after a 5xx, a 429, a timeout...)."""
        return self._earlier_retries + (self._count_retries() if self._count_retries else 0)

    def requests_by_purpose(self) -> dict[str, int]:
        """The run's requests split by purpose (`run_budget.RequestSplit`), its retries apart."""
        return self.spent.split(sum(self.requests.values()), self.retries)

    @property
    def requests(self) -> dict[str, int]:
        counted = dict(self._earlier_requests)
        for name, count in (self._count_requests() if self._count_requests else {}).items():
            counted[name] = counted.get(name, 0) + count
        return counted

    def count_rate_limited_with(self, counter: Callable[[], dict[str, tuple[int, int]]]) -> None:
        """Where `rate_limited` reads the 429s per operation (all, another client's) (the client)."""
        self._earlier_rate_limited = self.rate_limited
        self._count_rate_limited = counter

    @property
    def rate_limited(self) -> dict[str, tuple[int, int]]:
        """429 answers per operation that had any: (all of them, those from another client)."""
        counted = dict(self._earlier_rate_limited)
        for name, (limited, foreign) in (
            self._count_rate_limited() if self._count_rate_limited else {}
        ).items():
            before = counted.get(name, (0, 0))
            counted[name] = (before[0] + limited, before[1] + foreign)
        return counted

    def plan_sale_details(self, planned: int, final: bool) -> None:
        """The sale details this run knows it will make; `final`: every producer of sale ids is done
        (before, more may be found). Each an atomic assignment, read by the progress thread."""
        self.sale_details_final = final
        self.sale_details_planned = planned

    def announce_rows(self, resource: str, total_items: int) -> None:
        with self._lock:
            self.rows_announced[resource] = self.rows_announced.get(resource, 0) + max(total_items, 0)

    def schedule_scan(self, resource: str, schedule: ScanSchedule) -> None:
        with self._lock:
            self.scans[resource] = schedule

    def mark_not_due(self, resource: str, reason: str) -> None:
        """Not read by design this run: its table stays as loaded, and the run is not partial."""
        with self._lock:
            self.not_due[resource] = reason
        logger.info("%s not due: %s", resource, reason)

    def skip(self, resource: str, reason: str) -> None:
        with self._lock:
            self.skipped[resource] = reason
        logger.warning("%s skipped: %s", resource, reason)

    def fail(self, resource: str, reason: str) -> None:
        with self._lock:
            self.failed[resource] = reason
        logger.error("%s failed: %s", resource, reason)

    def scan_complete(self, resource: str, keys: SeenKeys) -> None:
        """A scan of `resource` read every page: `keys` are all the records it saw."""
        with self._lock:
            self.scanned_keys[resource] = keys

    def parent_gone(self, resource: str, key: tuple[str, ...]) -> None:
        """The parent of `resource`'s rows named by `key` (its `gone_by` columns) answered 404."""
        with self._lock:
            self.gone.setdefault(resource, set()).add(tuple(str(value) for value in key))

    def warn(self, message: str) -> None:
        with self._lock:
            self.warnings.append(message)
        logger.warning("%s", message)

    @property
    def is_partial(self) -> bool:
        """Some resource was skipped or failed, or some record could not be keyed (quarantined)."""
        return bool(self.skipped or self.failed or self.departures.quarantined())
