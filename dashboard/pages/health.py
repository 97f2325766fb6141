"""Data health: when each table was last loaded, how fresh it is, what the last run skipped or failed,
and what the API sent that the spec does not list. The three last are read from tables the sync records
when it has them (`_platform_freshness`, `_platform_sync_runs`, `_platform_departures`); until then the
page says they are not recorded yet.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go
from dash import html

from dashboard.components import chart, count, kpi, kpi_row, section, table
from dashboard.coverage import coverage_section
from dashboard.filters import Filters
from dashboard.labels import label
from dashboard.pages.base import MARTS, Page
from dashboard.warehouse import Session

RUNS_TABLE = "_platform_sync_runs"
FRESHNESS_TABLE = "_platform_freshness"
DEPARTURES_TABLE = "_platform_departures"
NOT_RECORDED = "not recorded yet"


def make_health_page(raw_schema: str, account_schemas: Mapping[str, str] | None = None) -> Page:
    """The page for the pipeline's raw dataset (`platform_raw` unless `--dataset` says otherwise), or,
    with accounts configured, for the raw dataset of the account chosen in the filter."""

    def render(session: Session, filters: Filters) -> list[Any]:
        if not account_schemas:
            return health(session, raw_schema)
        if filters.account is not None and filters.account in account_schemas:
            return health(session, account_schemas[filters.account], filters.account)
        return [
            html.P(
                "Each account has its own raw dataset: choose an account in the filter above to see its "
                f"data health ({', '.join(sorted(account_schemas))}).",
                className="empty",
                id="health-choose-account",
            )
        ]

    return Page("/health", "Data health", render, ())


def health(session: Session, raw: str, account: str | None = None) -> list[Any]:
    """The page for the raw dataset `raw`; with `account`, the marts' rows of that account only."""
    tables = session.tables(raw)
    if "_dlt_loads" not in tables:
        return [
            html.P(
                f"No load recorded in {raw}._dlt_loads yet. Run `platform-sync sync` and then "
                "`platform-sync models`.",
                className="empty",
                id="health-no-loads",
            )
        ]
    loads = session.rows(
        "select load_id, schema_name, status, inserted_at "
        f"from {raw}._dlt_loads order by inserted_at desc limit 10"
    )
    last_loaded = table_loads(session, raw, tables)
    marts = session.tables(MARTS)
    mart_rows = [(name, mart_count(session, name, account)) for name in sorted(marts)]
    rows_figure = go.Figure(go.Bar(x=[r[0] for r in last_loaded], y=[r[2] for r in last_loaded], name="rows"))
    rows_figure.update_layout(yaxis_title="rows", xaxis_tickangle=-45)
    return [
        kpi_row(
            [
                kpi("kpi-last-load", "Last load", str(loads[0][3])[:19] + " UTC" if loads else "-"),
                kpi(
                    "kpi-loads", "Loads", count(session.rows(f"select count(*) from {raw}._dlt_loads")[0][0])
                ),
                kpi("kpi-tables", "Raw tables", count(len(last_loaded))),
            ]
        ),
        section("Rows per raw table", chart("chart-table-rows", rows_figure)),
        section(
            "When each table was last loaded",
            table("table-last-loaded", ["table", "last loaded", "rows"], last_loaded, page_size=15),
            note="The newest load that wrote rows into each table (dlt's load ids and _dlt_loads).",
        ),
        section("Last loads", table("table-loads", ["load id", "schema", "status", "inserted at"], loads)),
        section("How fresh each table is", *freshness(session, raw, tables)),
        section(
            "Sales found, by channel",
            *coverage_section(session, raw),
            note="The API cannot list sales: a sale is known only through a record that names it.",
        ),
        section("Last run: what was skipped or failed", *last_run(session, raw, tables)),
        section("What the API sent that the spec does not list", *departures(session, raw, tables)),
        section("Marts", table("table-marts", ["mart", "rows"], mart_rows, page_size=20)),
    ]


def mart_count(session: Session, mart: str, account: str | None) -> int:
    """A mart's rows, of `account` only when given and the mart has the account column."""
    by_account = account and session.rows(
        "select 1 from information_schema.columns where table_schema = ? and table_name = ? "
        "and column_name = 'account'",
        [MARTS, mart],
    )
    if by_account:
        return int(session.rows(f"select count(*) from {MARTS}.{mart} where account = ?", [account])[0][0])
    return int(session.rows(f"select count(*) from {MARTS}.{mart}")[0][0])


def table_loads(session: Session, raw: str, tables: set[str]) -> list[tuple[Any, ...]]:
    """(table, time of the newest load that wrote rows into it, rows) for every raw table with rows ids."""
    with_load_ids = {
        name
        for (name,) in session.rows(
            "select table_name from information_schema.columns where table_schema = ? and column_name = ?",
            [raw, "_dlt_load_id"],
        )
    }
    result = []
    for name in sorted(tables):
        if name.startswith("_dlt") or name.startswith("_platform") or name not in with_load_ids:
            continue
        newest, rows = session.rows(f'select max(_dlt_load_id), count(*) from {raw}."{name}"')[0]
        loaded = session.rows(f"select max(inserted_at) from {raw}._dlt_loads where load_id = ?", [newest])
        result.append((name, loaded[0][0] if loaded else None, rows))
    return result


def not_recorded(what: str, raw: str, table_name: str, element_id: str) -> list[Any]:
    """The message where the sync has not written one of its record tables yet."""
    return [html.P(f"{what} {NOT_RECORDED} ({raw}.{table_name} does not exist).", id=element_id)]


def freshness(session: Session, raw: str, tables: set[str]) -> list[Any]:
    """Each table's refresh rule, last complete read and full scan, next scan and what waits."""
    if FRESHNESS_TABLE not in tables:
        return not_recorded("Freshness is", raw, FRESHNESS_TABLE, "freshness-not-recorded")
    # the promise (how stale a table may be at this schedule and budget): from the runs that write it
    recorded = freshness_columns(session, raw)
    stale = "round(stale_within_hours, 2)" if "stale_within_hours" in recorded else "null"
    rows = session.rows(
        f"""
        select table_name, refresh, {stale}, last_read_at, last_full_scan_at, next_full_scan_after,
            not_fetched, round(not_fetched_minutes)
        from {raw}.{FRESHNESS_TABLE} order by not_fetched desc, table_name
        """
    )
    columns = [
        "table", "refresh", "stale within (h)", "last read", "last full scan", "next full scan",
        "not fetched", "minutes",
    ]  # fmt: skip
    return [table("table-freshness", columns, rows, page_size=20), *sales_cycle(session, raw)]


def freshness_columns(session: Session, raw: str) -> set[str]:
    """The columns `_platform_freshness` has (older runs wrote fewer)."""
    return {
        name
        for (name,) in session.rows(
            "select column_name from information_schema.columns where table_schema = ? and table_name = ?",
            [raw, FRESHNESS_TABLE],
        )
    }


def sales_cycle(session: Session, raw: str) -> list[Any]:
    """How often every known sale is fetched again (`sales_reverify_share`), from the `sales` row."""
    recorded = freshness_columns(session, raw)
    if "reverify_cycle_runs" not in recorded:
        return []
    rows = session.rows(
        f"""
        select known_records, reverify_cycle_runs, reverify_cycle_days, oldest_verified_at
        from {raw}.{FRESHNESS_TABLE} where table_name = 'sales' and reverify_cycle_runs is not null
        """
    )
    if not rows:
        return []
    known, runs, days, oldest = rows[0]
    at_schedule = f" (about {days:.3g} days at this schedule)" if days is not None else ""
    since = f"; the oldest verification is from {str(oldest)[:16]} UTC" if oldest is not None else ""
    return [
        html.P(
            f"Every known sale ({count(known)}) is fetched again at least every {runs} runs{at_schedule}, "
            f"so a late change (a chargeback, a slip paid late) is in the warehouse within that{since}.",
            id="sales-cycle",
        )
    ]


def last_run(session: Session, raw: str, tables: set[str]) -> list[Any]:
    """The resources of the newest recorded run, those not loaded first."""
    if RUNS_TABLE not in tables:
        return not_recorded("Runs are", raw, RUNS_TABLE, "runs-not-recorded")
    rows = session.rows(
        f"""
        select resource, status, message, requests, run_started_at from {raw}.{RUNS_TABLE}
        where run_started_at = (select max(run_started_at) from {raw}.{RUNS_TABLE})
        order by case status when 'failed' then 0 when 'skipped' then 1 when 'not_due' then 2 else 3 end,
            resource
        """
    )
    problems = [row for row in rows if row[1] in ("failed", "skipped")]
    rows = [(resource, label(status), *rest) for resource, status, *rest in rows]
    summary = (
        f"Run started {str(rows[0][4])[:19]} UTC: {len(problems)} resource(s) skipped or failed."
        if rows
        else "No run recorded."
    )
    return [
        html.P(summary, id="runs-summary"),
        table(
            "table-last-run", ["resource", "status", "message", "requests", "run started"], rows, page_size=20
        ),
    ]


def departures(session: Session, raw: str, tables: set[str]) -> list[Any]:
    """Values and fields outside the spec, by resource, field and kind, with an example record."""
    if DEPARTURES_TABLE not in tables:
        return not_recorded("Departures from the spec are", raw, DEPARTURES_TABLE, "departures-not-recorded")
    rows = session.rows(
        f"""
        select resource, field_path, kind, sum(records), max(example_record_id), max(_dlt_load_id)
        from {raw}.{DEPARTURES_TABLE} group by 1, 2, 3 order by 4 desc, 1, 2, 3
        """
    )
    return [
        table(
            "table-departures",
            ["resource", "field", "kind", "records", "example record", "last load id"],
            rows,
            page_size=20,
        )
    ]
