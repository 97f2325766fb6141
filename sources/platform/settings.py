"""Defaults and validated settings of the `platform` source.

Everything here is read from dlt config (`[sources.platform]`) by the source function and checked
before the first request, so a typo fails fast with a message that says what to fix.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pendulum

from sources.platform_client.errors import ConfigurationError

DEFAULT_START_DATE = "2024-01-01"
EARLIEST_START_DATE = pendulum.datetime(2000, 1, 1, tz="UTC")
DEFAULT_ITEMS_PER_PAGE = 100
DEFAULT_COMMUNITY_DAYS = 30
DEFAULT_FISCAL_WINDOW_DAYS = 30
DEFAULT_FISCAL_LAG_DAYS = 15
DEFAULT_SUBSCRIPTIONS_WINDOW_DAYS = 90
DEFAULT_SALES_MAX_REQUESTS = 5000
DEFAULT_SALES_REFRESH_DAYS = 30
DEFAULT_SALES_RECHECK_HOURS = 0.0
DEFAULT_SALES_CONCURRENCY = 4
# Share of `sales_max_requests` kept for re-verifying the known sales verified longest ago (`store_sales.py`).
DEFAULT_SALES_REVERIFY_SHARE = 0.1
# Runs that must each get a 404 for an id before it is retired (`retired.py`).
DEFAULT_RETIRE_AFTER_NOT_FOUND = 3
# Share of `sales_max_requests` that the sale ids on probation (answered 404 once) may take per run: their
# confirmations, which retire them (`retired.py`, `store_sales.py`).
DEFAULT_UNKNOWN_IDS_SHARE = 0.1
DEFAULT_RESCAN_HOURS = 6.0
# Issue 25: how far an incremental read overlaps the previous one, how far the API's clock and ours may
# differ before the API's stamps the run, and the per-run budget of renewal re-reads (`runclock.py`).
DEFAULT_CURSOR_LOOKBACK_MINUTES = 30.0
DEFAULT_CLOCK_TOLERANCE_SECONDS = 300.0
DEFAULT_RENEWALS_MAX_REQUESTS = 200
# Share of a by-id operation's requests between two runs that one run may spend on it (sale details,
# renewal re-reads), each within its cap (`sales_max_requests`, `renewals_max_requests`; `run_budget.py`).
DEFAULT_DETAILS_BUDGET_SHARE = 0.8
# A full scan whose last complete read made at most this many requests is read on every run (`rescan.py`).
DEFAULT_SCAN_BUDGET_SHARE = 0.1  # of each operation's requests (and time) between two runs (`scan_budget.py`)
DEFAULT_UNLISTED_RATE_LIMIT = 60.0  # requests per minute assumed of an operation the spec gives no limit
# Helper processes that decode the pages of large flat lists beside the extract (`offload.py`): one,
# where there is a core for it. The extract itself is one core's work, so more would find no core free.
MAX_DEFAULT_DECODE_WORKERS = 1
MAX_RESCAN_HOURS = 100 * 365 * 24  # "practically never", and still a date a datetime can hold

# A sale in one of these states never changes again, so it is never re-fetched.
FINAL_SALE_STATUSES = frozenset({"refunded", "canceled", "expired", "duplicated"})


@dataclass(frozen=True)
class School:
    """A school (team) whose students' enrollments and deliveries are synced."""

    team_slug: str
    student_slugs: tuple[str, ...] = ()
    delivery_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class SourceSettings:
    start_date: datetime
    items_per_page: int = DEFAULT_ITEMS_PER_PAGE
    event_ids: tuple[str, ...] = ()
    community_ids: tuple[int, ...] = ()
    sale_ids: tuple[str, ...] = ()
    course_ids: tuple[int, ...] = ()
    schools: tuple[School, ...] = ()
    community_days: int = DEFAULT_COMMUNITY_DAYS
    fiscal_documents_window_days: int = DEFAULT_FISCAL_WINDOW_DAYS
    fiscal_documents_lag_days: int = DEFAULT_FISCAL_LAG_DAYS
    subscriptions_window_days: int = DEFAULT_SUBSCRIPTIONS_WINDOW_DAYS
    sales_max_requests: int = DEFAULT_SALES_MAX_REQUESTS
    sales_refresh_days: int = DEFAULT_SALES_REFRESH_DAYS
    sales_recheck_hours: float = DEFAULT_SALES_RECHECK_HOURS
    # the least sale details in flight; more when the rate limit and the latency ask (`in_flight_wanted`)
    sales_concurrency: int = DEFAULT_SALES_CONCURRENCY
    sales_reverify_share: float = DEFAULT_SALES_REVERIFY_SHARE
    retire_after_not_found: int = DEFAULT_RETIRE_AFTER_NOT_FOUND
    unknown_ids_share: float = DEFAULT_UNKNOWN_IDS_SHARE
    strict: bool = False  # fail a resource on any departure from the spec instead of loading it
    arrow_pages: bool = True
    decode_workers: int = 0
    granted_scopes: frozenset[str] | None = field(default=None)
    rescan_hours: float = DEFAULT_RESCAN_HOURS
    rescan_hours_by_resource: Mapping[str, float] = field(default_factory=dict)
    rescan: bool = False
    scan_budget_share: float = DEFAULT_SCAN_BUDGET_SHARE
    unlisted_rate_limit: float = DEFAULT_UNLISTED_RATE_LIMIT
    run_interval_hours: float = 0.0  # 0: measured from the last runs' starts
    cursor_lookback_minutes: float = DEFAULT_CURSOR_LOOKBACK_MINUTES
    clock_tolerance_seconds: float = DEFAULT_CLOCK_TOLERANCE_SECONDS
    renewals_max_requests: int = DEFAULT_RENEWALS_MAX_REQUESTS
    details_budget_share: float = DEFAULT_DETAILS_BUDGET_SHARE


def parse_start_date(value: str | datetime, now: datetime | None = None) -> datetime:
    """Parse the configured start date (`YYYY-MM-DD` or ISO 8601) into an aware UTC datetime: not after
    `now` (a run from the future reads nothing and says nothing) and not before `EARLIEST_START_DATE`
    (no platform data is older; a year below 1000 would even be sent as `1-01-01T...`)."""
    parsed: object
    if isinstance(value, datetime):
        parsed = pendulum.instance(value)
    else:
        try:
            parsed = pendulum.parse(str(value), tz="UTC")
        except (ValueError, pendulum.parsing.exceptions.ParserError) as exc:
            raise ConfigurationError(
                f"start_date {value!r} is not a date: use YYYY-MM-DD or an ISO 8601 timestamp "
                "in [sources.platform] of .dlt/config.toml or SOURCES__PLATFORM__START_DATE"
            ) from exc
    if not isinstance(parsed, pendulum.DateTime):
        raise ConfigurationError(f"start_date {value!r} is not a date: use YYYY-MM-DD")
    start = parsed.in_timezone("UTC")
    now = pendulum.now("UTC") if now is None else now
    if start > now:
        raise ConfigurationError(
            f"start_date {value!r} is in the future (now {now:%Y-%m-%d %H:%M} UTC): nothing could be read "
            f'from it; use a past date, e.g. start_date = "{DEFAULT_START_DATE}"'
        )
    if start < EARLIEST_START_DATE:
        raise ConfigurationError(
            f"start_date {value!r} is before {EARLIEST_START_DATE:%Y-%m-%d}, older than any data of the "
            f'platform; use a later date, e.g. start_date = "{DEFAULT_START_DATE}"'
        )
    return start


LIST_EXAMPLES = {"student_slugs": '["ana-lima"]', "delivery_ids": "[12]"}


def parse_schools(value: Sequence[Mapping[str, Any]] | None) -> tuple[School, ...]:
    """Validate `schools = [{team_slug = "...", student_slugs = [...], delivery_ids = [...]}]`."""
    if value is not None and (isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence)):
        raise ConfigurationError(
            "schools must be an array of tables, e.g. "
            'schools = [{team_slug = "my-school", student_slugs = ["ana-lima"], delivery_ids = [12]}]; '
            f"got {value!r}"
        )
    schools = []
    for position, entry in enumerate(value or []):
        if not isinstance(entry, Mapping) or not entry.get("team_slug"):
            raise ConfigurationError(
                f"schools[{position}] must be a table with team_slug, student_slugs and delivery_ids, "
                f'e.g. {{team_slug = "my-school", student_slugs = ["ana"], delivery_ids = [12]}}; '
                f"got {entry!r}"
            )
        unknown = set(entry) - {"team_slug", "student_slugs", "delivery_ids"}
        if unknown:
            raise ConfigurationError(
                f"schools[{position}] has unknown keys {sorted(unknown)}: "
                "the keys are team_slug, student_slugs and delivery_ids"
            )
        text_ids(f"schools[{position}].team_slug", [entry["team_slug"]])
        for key in ("student_slugs", "delivery_ids"):
            listed = entry.get(key)
            if listed is not None and (
                isinstance(listed, str | bytes | Mapping) or not isinstance(listed, Sequence)
            ):
                # a string is a sequence too: walked, "one-slug" would be nine students of one letter
                raise ConfigurationError(
                    f"schools[{position}].{key} must be a list, e.g. "
                    f"{key} = {LIST_EXAMPLES[key]}; got {listed!r}"
                )
        schools.append(
            School(
                team_slug=str(entry["team_slug"]).strip(),
                student_slugs=text_ids(f"schools[{position}].student_slugs", entry.get("student_slugs")),
                delivery_ids=int_ids(f"schools[{position}].delivery_ids", entry.get("delivery_ids")),
            )
        )
    return tuple(schools)


def parse_rescan_hours_by_resource(
    value: Mapping[str, Any] | None, full_scans: Collection[str]
) -> dict[str, float]:
    """Validate `rescan_hours_by_resource = {products = 24, transfers = 0}`: full-scan resources only."""
    if value is not None and not isinstance(value, Mapping):
        raise ConfigurationError(
            "rescan_hours_by_resource must be a table of resource = hours, e.g. {products = 24}; "
            f"got {value!r}"
        )
    overrides = dict(value or {})
    unknown = sorted(name for name in overrides if name not in full_scans)
    if unknown:
        raise ConfigurationError(
            f"rescan_hours_by_resource: {', '.join(map(repr, unknown))} is not a full-scan resource; "
            f"the full-scan resources are: {', '.join(full_scans)} (the others are incremental and read "
            "every run)"
        )
    return {name: parse_rescan_hours(f"rescan_hours_by_resource.{name}", h) for name, h in overrides.items()}


def parse_rescan_hours(name: str, value: float) -> float:
    hours = non_negative(name, value)
    if not hours <= MAX_RESCAN_HOURS:  # NaN fails this too
        raise ConfigurationError(
            f"{name} must be at most {MAX_RESCAN_HOURS} hours (a century), got {value!r}"
        )
    return hours


def share(name: str, value: float) -> float:
    """A share of a budget: at least 0 and less than 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value < 1:
        raise ConfigurationError(
            f"{name} must be a number from 0 (off) to less than 1, e.g. 0.1 for a tenth; got {value!r}"
        )
    return float(value)


def positive_share(name: str, value: float) -> float:
    """A share of a budget that cannot be off: more than 0 and less than 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise ConfigurationError(
            f"{name} must be a number above 0 and below 1, e.g. 0.1 for a tenth; got {value!r}"
        )
    return float(value)


def share_up_to_all(name: str, value: float) -> float:
    """A share of a budget that may be all of it: more than 0 and at most 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ConfigurationError(
            f"{name} must be a number above 0 and at most 1, e.g. 0.8 for four fifths; got {value!r}"
        )
    return float(value)


def positive_rate(name: str, value: float) -> float:
    """A rate in requests per minute: a finite number above 0."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ConfigurationError(f"{name} must be a number of requests per minute above 0, got {value!r}")
    return float(value)


def positive(name: str, value: int) -> int:
    if not isinstance(value, int) or value <= 0:
        raise ConfigurationError(f"{name} must be a positive whole number, got {value!r}")
    return value


def whole_number(name: str, value: int) -> int:
    """A count that may be 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"{name} must be a whole number of at least 0, got {value!r}")
    return value


def decode_workers_or_default(value: int | None, cpu_count: int | None) -> int:
    """The configured number of decoding helpers, or by default one if there are two cores or more."""
    if value is None:
        return min(MAX_DEFAULT_DECODE_WORKERS, max(0, (cpu_count or 1) - 1))
    return whole_number("decode_workers", value)


def positive_seconds(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ConfigurationError(f"{name} must be a number of seconds above 0, got {value!r}")
    return float(value)


def non_negative(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigurationError(f"{name} must be a number of at least 0, got {value!r}")
    return float(value)


def int_ids(name: str, values: Sequence[Any] | None) -> tuple[int, ...]:
    """Numeric ids: each a positive whole number (or its digits as text)."""
    ids = []
    for position, value in enumerate(values or ()):
        text = str(value).strip()
        if isinstance(value, bool | float) or not text.isascii() or not text.isdigit() or int(text) <= 0:
            raise ConfigurationError(
                f"{name}[{position}] is {value!r}, not an id: {name} must be a list of positive numeric ids, "
                f"e.g. {name} = [12, 34]"
            )
        ids.append(int(text))
    return tuple(ids)


def uuid_ids(name: str, values: Sequence[Any] | None) -> tuple[str, ...]:
    """Ids the API writes as uuids (events): each one in the canonical form the API writes (lower case,
    hyphenated), whatever form it was given in (upper case, braces, `urn:uuid:`, no hyphens): the
    requests and the joins with the API's own ids then match (issue 53)."""
    ids = []
    for position, value in enumerate(values or ()):
        text = value.strip() if isinstance(value, str) else ""
        try:
            ids.append(str(uuid.UUID(text)))
        except ValueError:
            ids.append("")
        if not ids[-1]:
            raise ConfigurationError(
                f"{name}[{position}] is {value!r}, not a uuid: {name} must be a list of uuids, "
                f'e.g. {name} = ["4f6c3a1e-2b7d-4c1a-9f3e-8d2b6a5c7e90"]'
            )
    return tuple(ids)


def text_ids(name: str, values: Sequence[Any] | None) -> tuple[str, ...]:
    """Ids that go into a request's path (sale ids, slugs): each non-empty, with no space or `/`."""
    ids = []
    for position, value in enumerate(values or ()):
        text = str(value).strip() if isinstance(value, str | int) and not isinstance(value, bool) else ""
        if not text or not text.isprintable() or any(c in text for c in " /?#%\\"):
            raise ConfigurationError(
                f"{name}[{position}] is {value!r}, not an id: each must be non-empty, with no space, "
                f"/, ?, # or %"
            )
        ids.append(text)
    return tuple(ids)
