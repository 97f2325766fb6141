"""The `platform` dlt source: every read operation of the platform's API, incremental where it can be.

Declares the source and its resources and reads only config. `sources/platform_client/` owns HTTP, auth,
paging, retries and rate limits; `resources/` declares each resource beside the reader that walks it, one
module per area of the API; `fastpath/` packs large flat pages into Arrow tables in helper processes.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, cast

import dlt
import pendulum
from dlt.common.exceptions import PipelineStateNotAvailable
from dlt.common.schema.typing import C_DLT_ID, TColumnSchema
from dlt.common.schema.utils import dlt_id_column
from dlt.common.typing import TSecretStrValue
from dlt.extract.resource import DltResource

from sources.platform.config_check import check_list, check_source_config
from sources.platform.departures import declare_tables
from sources.platform.fastpath.batches import Batch
from sources.platform.fastpath.offload import PageDecoder
from sources.platform.freshness import LAST_READS_KEY, note_complete_read
from sources.platform.guard import guarded
from sources.platform.models import columns_for, nested_hints_for
from sources.platform.privacy import Scrubber, parse_privacy
from sources.platform.privacy.forgotten import forgotten_from_destination
from sources.platform.records import RecordReader
from sources.platform.report import RunReport, SaleDetailsPace
from sources.platform.rescan import SCAN_STAMPS_KEY, scan_when_due
from sources.platform.resources import FULL_SCANS, STREAMS, Stream
from sources.platform.resources.context import SourceContext
from sources.platform.resources.store import SUBSCRIPTIONS
from sources.platform.resources.store_renewals import pending_renewals
from sources.platform.resources.store_sale_ids import SaleIdQueue
from sources.platform.resources.stream import DELETED_AT, DELETED_AT_COLUMN
from sources.platform.run_budget import run_budget
from sources.platform.runclock import RUN_STAMPS_KEY, RunClock, latest_stamp
from sources.platform.scan_budget import RUN_STARTS_KEY
from sources.platform.settings import (
    DEFAULT_CLOCK_TOLERANCE_SECONDS,
    DEFAULT_COMMUNITY_DAYS,
    DEFAULT_CURSOR_LOOKBACK_MINUTES,
    DEFAULT_DETAILS_BUDGET_SHARE,
    DEFAULT_FISCAL_LAG_DAYS,
    DEFAULT_FISCAL_WINDOW_DAYS,
    DEFAULT_ITEMS_PER_PAGE,
    DEFAULT_RENEWALS_MAX_REQUESTS,
    DEFAULT_RESCAN_HOURS,
    DEFAULT_RETIRE_AFTER_NOT_FOUND,
    DEFAULT_SALES_CONCURRENCY,
    DEFAULT_SALES_MAX_REQUESTS,
    DEFAULT_SALES_RECHECK_HOURS,
    DEFAULT_SALES_REFRESH_DAYS,
    DEFAULT_SALES_REVERIFY_SHARE,
    DEFAULT_SCAN_BUDGET_SHARE,
    DEFAULT_START_DATE,
    DEFAULT_SUBSCRIPTIONS_WINDOW_DAYS,
    DEFAULT_UNKNOWN_IDS_SHARE,
    DEFAULT_UNLISTED_RATE_LIMIT,
    SourceSettings,
    decode_workers_or_default,
    int_ids,
    non_negative,
    parse_rescan_hours,
    parse_rescan_hours_by_resource,
    parse_schools,
    parse_start_date,
    positive,
    positive_rate,
    positive_seconds,
    positive_share,
    share,
    share_up_to_all,
    text_ids,
    uuid_ids,
    whole_number,
)
from sources.platform_client.client import PlatformClient
from sources.platform_client.retry import DEFAULT_PATIENCE

__all__ = ["RunReport", "platform_source"]


@dlt.source(name="platform", max_table_nesting=4)
def platform_source(
    base_url: str = dlt.config.value,
    access_token: str = dlt.secrets.value,
    start_date: str = DEFAULT_START_DATE,
    event_ids: Sequence[str] | None = None,
    community_ids: Sequence[int] | None = None,
    sale_ids: Sequence[str] | None = None,
    course_ids: Sequence[int] | None = None,
    schools: Sequence[Mapping[str, Any]] | None = None,
    items_per_page: int = DEFAULT_ITEMS_PER_PAGE,
    community_days: int = DEFAULT_COMMUNITY_DAYS,
    fiscal_documents_window_days: int = DEFAULT_FISCAL_WINDOW_DAYS,
    fiscal_documents_lag_days: int = DEFAULT_FISCAL_LAG_DAYS,
    subscriptions_window_days: int = DEFAULT_SUBSCRIPTIONS_WINDOW_DAYS,
    sales_max_requests: int = DEFAULT_SALES_MAX_REQUESTS,
    sales_refresh_days: int = DEFAULT_SALES_REFRESH_DAYS,
    sales_recheck_hours: float = DEFAULT_SALES_RECHECK_HOURS,
    sales_concurrency: int = DEFAULT_SALES_CONCURRENCY,
    sales_reverify_share: float = DEFAULT_SALES_REVERIFY_SHARE,
    retire_after_not_found: int = DEFAULT_RETIRE_AFTER_NOT_FOUND,
    unknown_ids_share: float = DEFAULT_UNKNOWN_IDS_SHARE,
    rescan_hours: float = DEFAULT_RESCAN_HOURS,
    rescan_hours_by_resource: Mapping[str, float] | None = None,
    rescan: bool = False,
    scan_budget_share: float = DEFAULT_SCAN_BUDGET_SHARE,
    unlisted_rate_limit: float = DEFAULT_UNLISTED_RATE_LIMIT,
    run_interval_hours: float = 0.0,
    cursor_lookback_minutes: float = DEFAULT_CURSOR_LOOKBACK_MINUTES,
    clock_tolerance_seconds: float = DEFAULT_CLOCK_TOLERANCE_SECONDS,
    renewals_max_requests: int = DEFAULT_RENEWALS_MAX_REQUESTS,
    details_budget_share: float = DEFAULT_DETAILS_BUDGET_SHARE,
    rate_limits: Mapping[str, float] | None = None,
    rate_limit_time_scale: float = 1.0,
    max_retries: int = 6,
    patience_seconds: float = DEFAULT_PATIENCE,
    strict: bool = False,
    arrow_pages: bool = True,
    decode_workers: int | None = None,
    granted_scopes: Sequence[str] | None = None,
    privacy: Mapping[str, str] | None = None,
    privacy_key: TSecretStrValue | None = None,
    client: PlatformClient | None = None,
    report: RunReport | None = None,
    now: Callable[[], datetime] | None = None,
    run_starts: Sequence[str] | None = None,
) -> list[DltResource]:
    """All resources of the platform's API. Ids the API cannot list come from config.

    Args:
        base_url: The API address, e.g. `https://api.example.com`.
        access_token: The bearer token (`platform-sync auth` stores one in `.dlt/secrets.toml`).
        start_date: Lower bound of the date-windowed resources on their first run.
        event_ids, community_ids, sale_ids, course_ids, schools: Ids the API gives no way to list.
        rescan_hours: A full-scan resource (`Stream.full_scan`) whose last complete scan is younger than
            this is not read (0: read every run); `rescan_hours_by_resource` overrides it per resource.
        scan_budget_share: The share of each operation's requests between two runs that the full scans
            may take: a scan that fits is read every run, a larger one every k-th run, never less often
            than `rescan_hours` (`scan_budget.py`); 0: every `rescan_hours` only.
        unlisted_rate_limit: Requests per minute assumed, for that arithmetic only, of an operation the
            spec gives no limit (the limiter does not hold it to this).
        run_interval_hours: The interval between scheduled runs; 0 (default): measured from the last
            runs' starts (one hour until two gaps are known).
        details_budget_share: The share of the sale details' and the renewal re-reads' requests between
            two runs (at their rate limits) that one run spends, each within `sales_max_requests` and
            `renewals_max_requests` (`run_budget.py`): a run's reads by id end before the next run is due.
        sales_reverify_share: Share of the run's sale details kept each run for re-fetching the known sales
            verified longest ago, so every known sale is verified again within a bounded number of runs.
        retire_after_not_found: Runs that must each get a 404 for an id (event, student, delivery)
            before it is retired: not requested again, listed in `_platform_retired_ids`. A sale id
            retires at its confirmed 404 instead (`unknown_ids_share`).
        unknown_ids_share: Share of `sales_max_requests` that the sale ids on probation (answered 404
            once) may take per run, after the other sale ids: their second 404 retires them
            (`retired.py`).
        patience_seconds: The longest wait the API may ask (`Retry-After`) that the run waits for; an
            operation asked to wait longer is deferred to the next run (its resources fail with one line,
            exit 3) and every other resource goes on.
        rescan: Read every full-scan resource in this run, however recent its last scan.
        cursor_lookback_minutes: How far each incremental read overlaps the previous one.
        clock_tolerance_seconds: How far the API's clock (its `Date` header) and ours may differ before
            run records and snapshots are stamped with the API's time (`runclock.py`).
        renewals_max_requests: Subscriptions whose renewal fell due since they were read, re-read by id
            per run at most (0: none).
        strict: Fail a resource on any record that departs from the spec (a null where the spec has
            none, an enum value or a field it does not list, a value of another type). Off, such a
            record loads as faithfully as its columns allow and each departure is recorded
            (`_platform_departures`, the run's summary).
        arrow_pages: Hand dlt the pages of flat records as Arrow tables, which it loads without
            normalizing them row by row (`fastpath/columnar.py`); off, dlt normalizes every row. The
            tables are the same either way: this is for comparison (bench/) and troubleshooting.
        decode_workers: Helper processes that validate and pack the pages of large flat lists while the
            extract fetches others (`offload.py`); by default one where there are two cores or more.
            0 decodes every page in the extract's process. The rows are the same either way.
        granted_scopes: Scopes of the token as granted by the token exchange, if known: resources whose
            scope is missing are skipped without a request.
        privacy: Per column group (documents, emails, phones, names, addresses): `keep` (default),
            `hash` (a keyed pseudonym, `privacy_key` in secrets) or `block` (loaded as null); see
            `privacy/`. People forgotten by `platform-sync forget` are blanked again wherever they appear.
        client: An API client to use instead of one built from config (tests, custom transports).
        report: Collects skipped and failed resources of this run; the command line reads it.
        now: The run's start by a clock of the caller's (a benchmark's schedule, a test's fake clock)
            instead of ours; code only, like `client` and `report`.
        run_starts: The ISO starts of the last runs from the run records (`_platform_sync_runs`, read
            by the pipeline), which set the interval between runs of the run's budget; None: the starts
            the source state keeps (only runs whose load committed). Code only.
    """
    # Before anything else: a misspelled key would otherwise be ignored, a string walked as a list.
    check_source_config(inspect.signature(platform_source).parameters, STREAMS)
    for name, value in (
        ("event_ids", event_ids),
        ("community_ids", community_ids),
        ("sale_ids", sale_ids),
        ("course_ids", course_ids),
        ("granted_scopes", granted_scopes),
    ):
        check_list(name, value)
    settings = SourceSettings(
        start_date=parse_start_date(start_date),
        items_per_page=positive("items_per_page", items_per_page),
        event_ids=uuid_ids("event_ids", event_ids),
        community_ids=int_ids("community_ids", community_ids),
        sale_ids=text_ids("sale_ids", sale_ids),
        course_ids=int_ids("course_ids", course_ids),
        schools=parse_schools(schools),
        community_days=positive("community_days", community_days),
        fiscal_documents_window_days=positive("fiscal_documents_window_days", fiscal_documents_window_days),
        fiscal_documents_lag_days=positive("fiscal_documents_lag_days", fiscal_documents_lag_days),
        subscriptions_window_days=positive("subscriptions_window_days", subscriptions_window_days),
        sales_max_requests=positive("sales_max_requests", sales_max_requests),
        sales_refresh_days=positive("sales_refresh_days", sales_refresh_days),
        sales_recheck_hours=non_negative("sales_recheck_hours", sales_recheck_hours),
        sales_concurrency=positive("sales_concurrency", sales_concurrency),
        sales_reverify_share=share("sales_reverify_share", sales_reverify_share),
        retire_after_not_found=positive("retire_after_not_found", retire_after_not_found),
        unknown_ids_share=positive_share("unknown_ids_share", unknown_ids_share),
        strict=strict,
        arrow_pages=arrow_pages,
        decode_workers=decode_workers_or_default(decode_workers, os.cpu_count()),
        granted_scopes=frozenset(granted_scopes) if granted_scopes else None,
        rescan_hours=parse_rescan_hours("rescan_hours", rescan_hours),
        rescan_hours_by_resource=parse_rescan_hours_by_resource(rescan_hours_by_resource, FULL_SCANS),
        rescan=rescan,
        scan_budget_share=share("scan_budget_share", scan_budget_share),
        unlisted_rate_limit=positive_rate("unlisted_rate_limit", unlisted_rate_limit),
        run_interval_hours=parse_rescan_hours("run_interval_hours", run_interval_hours),
        cursor_lookback_minutes=non_negative("cursor_lookback_minutes", cursor_lookback_minutes),
        clock_tolerance_seconds=non_negative("clock_tolerance_seconds", clock_tolerance_seconds),
        renewals_max_requests=whole_number("renewals_max_requests", renewals_max_requests),
        details_budget_share=share_up_to_all("details_budget_share", details_budget_share),
    )
    if client is None:
        client = PlatformClient(
            base_url,
            access_token,
            rate_limits=dict(rate_limits or {}),
            rate_limit_time_scale=rate_limit_time_scale,
            items_per_page=settings.items_per_page,
            max_retries=max_retries,
            patience=positive_seconds("patience_seconds", patience_seconds),
        )
    run_report = report if report is not None else RunReport()
    started_at = now() if now is not None else pendulum.now("UTC")
    if run_report.budget is None:  # a later pass of the run keeps the run's (`pipelines/sync/checkpoints.py`)
        run_report.budget = run_budget(
            settings,
            client.rate_limits.get,
            client.rate_limit_time_scale,
            list(run_starts) if run_starts else _run_starts(),
            started_at,
            from_records=bool(run_starts),
        )
    budget = run_report.budget
    sale_details = STREAMS["sales"].operation
    run_report.sale_details_pace = SaleDetailsPace(
        budget.sale_details.per_run,
        client.rate_limits.get(sale_details),
        lambda: client.schedule(sale_details),
    )
    run_report.count_requests_with(lambda: {name: stats.requests for name, stats in client.stats.items()})
    run_report.count_retries_with(lambda: sum(stats.retries for stats in client.stats.values()))
    run_report.count_rate_limited_with(
        lambda: {
            name: (stats.rate_limited, stats.foreign_rate_limited)
            for name, stats in client.stats.items()
            if stats.rate_limited
        }
    )
    run_report.run_clock = RunClock(
        started_at,
        client.server_time,
        timedelta(seconds=settings.clock_tolerance_seconds),
        floor=_earlier_stamp(),
    )
    ctx = SourceContext(
        client=client,
        settings=settings,
        report=run_report,
        sale_ids=SaleIdQueue(),
        snapshot_at=started_at,
        records=RecordReader(settings.strict, run_report.departures, client.redact),
        streams=STREAMS,
        budget=budget,
        decoder=PageDecoder(settings.decode_workers) if settings.decode_workers else None,
        renewals=pending_renewals(SUBSCRIPTIONS.name, budget.renewals.per_run),
    )
    scrubber = Scrubber(parse_privacy(privacy, privacy_key), forgotten_from_destination)
    run_report.privacy = scrubber
    return [_resource(ctx, stream, scrubber) for stream in STREAMS.values()]


def _run_starts() -> list[str]:
    """The starts of the last runs, as the source state keeps them (`scan_budget.RUN_STARTS_KEY`); none
    when no pipeline is active."""
    try:
        state = dlt.current.source_state()
    except PipelineStateNotAvailable:
        return []
    return [str(stamp) for stamp in state.get(RUN_STARTS_KEY, [])]


def _earlier_stamp() -> datetime | None:
    """The latest stamp an earlier run kept in the source state (the floor of this run's, `runclock.py`);
    none when no pipeline is active (the source iterated on its own)."""
    try:
        state = dlt.current.source_state()
    except PipelineStateNotAvailable:
        return None
    return latest_stamp(state, (RUN_STAMPS_KEY, LAST_READS_KEY, SCAN_STAMPS_KEY))


def _resource(ctx: SourceContext, stream: Stream, scrubber: Scrubber) -> DltResource:
    def scan() -> Iterator[Batch]:
        if stream.full_scan:
            return scan_when_due(ctx, stream)
        return stream.read(ctx, stream)

    def rows() -> Iterator[Any]:
        scrubber.note_settings()  # the privacy settings, recorded with the data they were loaded under
        try:
            yield from ctx.pack(stream, guarded(ctx, stream, scan))
            note_complete_read(stream.name, ctx.report, ctx.note_stamp)
        finally:
            ctx.finished(stream.name)
        # What this resource's records departed from the spec in, in the same load package as the rows.
        yield from ctx.report.departures.items_for(stream.name)

    resource = dlt.resource(
        rows,
        name=stream.name,
        primary_key=list(stream.primary_key),
        write_disposition=stream.write_disposition,
        columns=_column_hints(stream),
        nested_hints=nested_hints_for(stream.model),
        parallelized=True,
        # Unknown extra fields are kept: the API may add fields, and losing them silently is worse.
        schema_contract="evolve",
    )()
    declare_tables(resource)
    if scrubber.changes_anything():  # personal values pseudonymised, blocked or forgotten: every batch
        resource.add_step(scrubber.mapper(stream.model, stream.name))
    return resource


def _column_hints(stream: Stream) -> dict[str, TColumnSchema]:
    # dlt writes into column hints, so each resource gets its own copies
    columns = cast(
        dict[str, TColumnSchema],
        {**columns_for(stream.model), **{k: dict(v) for k, v in stream.extra_columns.items()}},
    )
    for key in stream.primary_key:  # a record without its key is quarantined, never loaded
        columns[key]["nullable"] = False
    if stream.write_disposition == "merge":
        columns[stream.dedup_sort_column()]["dedup_sort"] = "desc"
    # set by `pipelines/deletions.py`, null as loaded
    if stream.marks_deletions or stream.deleted_with or stream.gone_by:
        columns[DELETED_AT] = cast(TColumnSchema, dict(DELETED_AT_COLUMN))
    # The row id as dlt's normalizer declares it (a unique row key), also for the tables whose rows
    # arrive packed with their ids (`fastpath/columnar.py`), which dlt would otherwise type from Arrow only.
    columns[C_DLT_ID] = dlt_id_column()
    return columns
