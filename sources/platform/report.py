"""What happened to each resource in one run: the pipeline's summary and exit status come from here."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sources.platform.departures import DepartureLog

if TYPE_CHECKING:
    from sources.platform.privacy import Scrubber

logger = logging.getLogger("platform_sync.source")


@dataclass(frozen=True)
class ScanSchedule:
    """How often a full-scan resource is read, as this run found it (`rescan.py`)."""

    interval: timedelta  # zero: on every run (its last scan was cheap)
    next_after: datetime  # the first run start that reads it again


@dataclass(frozen=True)
class SaleDetailsPace:
    """What bounds the sale details: requests per run and per minute (for the backlog's ETA)."""

    max_requests_per_run: int
    requests_per_minute: float | None


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
    sale_details_pace: SaleDetailsPace | None = None
    # Sale details this run has fetched or will fetch (the known ids, within the budget): the progress
    # display's total. None until the sales resource starts.
    sale_details_planned: int | None = None
    privacy: Scrubber | None = None  # what the run does to personal values (`privacy/`)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _count_requests: Callable[[], dict[str, int]] | None = field(default=None, repr=False)

    def count_requests_with(self, counter: Callable[[], dict[str, int]]) -> None:
        """Where `requests` reads the number of requests made per operation (the source's client)."""
        self._count_requests = counter

    @property
    def requests(self) -> dict[str, int]:
        return self._count_requests() if self._count_requests else {}

    def plan_sale_details(self, planned: int) -> None:
        self.sale_details_planned = planned  # one int assigned: atomic, read by the progress thread

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

    def warn(self, message: str) -> None:
        with self._lock:
            self.warnings.append(message)
        logger.warning("%s", message)

    @property
    def is_partial(self) -> bool:
        """Some resource was skipped or failed, or some record could not be keyed (quarantined)."""
        return bool(self.skipped or self.failed or self.departures.quarantined())
