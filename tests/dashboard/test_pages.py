"""The pages and the snapshot on tiny hand-made DuckDB files (no browser, under a second each)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import duckdb
from plotly.utils import PlotlyJSONEncoder

from dashboard import DuckDbSnapshot, render_page
from dashboard.app import pages
from dashboard.filters import Filters, default_filters
from dashboard.pages.base import month_to_date, newest_day
from dashboard.warehouse import write_locked

PERIOD = Filters(date(2026, 1, 1), date(2026, 1, 31))


def page(path: str):
    return next(p for p in pages("platform_raw") if p.path == path)


def rendered(component: object) -> str:
    return json.dumps(component, cls=PlotlyJSONEncoder)


def test_no_database_file_names_the_commands(tmp_path: Path) -> None:
    warehouse = DuckDbSnapshot(tmp_path / "absent.duckdb", first_copy_timeout=0)
    shown = rendered(render_page(warehouse, page("/"), PERIOD))
    assert "platform-sync sync" in shown and "platform-sync models" in shown
    assert "Traceback" not in shown


def test_missing_and_empty_marts_name_the_commands(tmp_path: Path) -> None:
    database = tmp_path / "w.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute("create schema marts")
        connection.execute("create table marts.subscriptions_mrr_monthly (month_start date)")
    warehouse = DuckDbSnapshot(database)
    shown = rendered(render_page(warehouse, page("/subscriptions"), PERIOD))
    assert "empty: marts.subscriptions_mrr_monthly" in shown
    assert "missing: marts.fct_subscriptions" in shown
    assert "Run `platform-sync sync` and then `platform-sync models`" in shown
    health = rendered(render_page(warehouse, page("/health"), PERIOD))
    assert "No load recorded in platform_raw._dlt_loads yet" in health


def test_a_payment_method_the_spec_does_not_list_is_its_own_row(tmp_path: Path) -> None:
    database = tmp_path / "w.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute("create schema marts")
        connection.execute(
            "create table marts.fct_sales as select * from (values "
            "('s1', 'p1', true, false, 'BRL', 10.0, 8.0, 'pix', date '2026-01-05', null, 'A1', 'Ann', 1.0), "
            "('s2', 'p1', true, false, 'BRL', 30.0, 25.0, 'cryptoWallet', date '2026-01-06', "
            "null, null, null, 0)"
            ") t(sale_id, product_id, was_paid, is_refunded, currency, gross_amount, net_revenue_amount, "
            "payment_method, paid_on, created_on, affiliate_id, affiliate_name, affiliates_gain_amount)"
        )
        connection.execute(
            "create table marts.dim_products as select 'p1' as product_id, 'Course' as product_name"
        )
    shown = rendered(render_page(DuckDbSnapshot(database), page("/products"), PERIOD))
    # a method the dashboard does not know: as the API sent it
    assert '"0": "cryptoWallet", "1": "BRL", "2": 1, "3": "30.00", "4": "no: added by the API"' in shown
    assert '"0": "Pix", "1": "BRL", "2": 1, "3": "10.00", "4": "yes"' in shown  # a known method: its label


def test_the_snapshot_waits_for_the_writer_and_follows_the_file(tmp_path: Path) -> None:
    database = tmp_path / "w.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute("create table t as select 1 as x")
    warehouse = DuckDbSnapshot(database, check_every=0)
    with warehouse.session() as session:
        assert session.rows("select x from t") == [(1,)]
    assert warehouse.copies == 1
    with warehouse.session():
        pass
    assert warehouse.copies == 1  # unchanged file: no new copy
    with duckdb.connect(str(database)) as writer:  # a writer opened the file: the dashboard never blocks it
        writer.execute("insert into t values (2)")
        writer.execute("checkpoint")
        # the same process holds the lock here, which F_GETLK does not report: that is why the browser
        # test runs the dashboard in a process of its own
        assert write_locked(database) is False
    with warehouse.session() as session:
        assert session.rows("select x from t order by x") == [(1,), (2,)]
    assert warehouse.copies == 2
    warehouse.close()


def test_a_file_another_process_writes_is_not_copied_and_the_writer_is_never_blocked(tmp_path: Path) -> None:
    database = tmp_path / "w.duckdb"
    with duckdb.connect(str(database)) as connection:
        connection.execute("create table t as select 1 as x")
    warehouse = DuckDbSnapshot(database, check_every=0, first_copy_timeout=0)
    with warehouse.session() as session:
        assert session.rows("select count(*) from t") == [(1,)]
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(database)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "writing"
        assert write_locked(database)
        with warehouse.session() as session:  # the previous copy answers while the writer works
            assert session.rows("select count(*) from t") == [(1,)]
        assert warehouse.copies == 1
    finally:
        assert writer.communicate("done\n", timeout=30)[0].strip() == "committed"
    assert writer.returncode == 0  # the writer was never refused the file
    with warehouse.session() as session:
        assert session.rows("select count(*) from t") == [(2,)]
    assert warehouse.copies == 2


# Opens the file for writing (DuckDB's write lock), inserts a row, waits for a line, then closes.
WRITER = """
import sys, duckdb
connection = duckdb.connect(sys.argv[1])
connection.execute("insert into t values (2)")
print("writing", flush=True)
sys.stdin.readline()
connection.close()
print("committed", flush=True)
"""


def _marts(database: Path, *statements: str) -> None:
    with duckdb.connect(str(database)) as connection:
        connection.execute("create schema if not exists marts")
        for statement in statements:
            connection.execute(statement)


def test_the_balance_of_a_partial_coverage_is_not_the_accounts(tmp_path: Path) -> None:
    """Issue 51: a balance of BRL -166,741.94 stood as the account's while coverage was partial."""
    database = tmp_path / "w.duckdb"
    _marts(
        database,
        "create table marts.monthly_cash_flow as select date '2026-01-01' as month_start, 'BRL' as currency, "
        "10.0 as net_sales_credited_amount, 30.0 as transfers_out_amount, -20.0 as net_cash_flow_amount, "
        "-20.0 as cumulative_balance_amount, 'default' as account",
        "create table marts.fct_transfers as select timestamptz '2026-01-05 10:00:00+00' as created_at, "
        "'confirmed' as transfer_status, 30.0 as transfer_amount, 'BRL' as currency",
        "create table marts.fiscal_documents_status as select date '2026-01-01' as month_start, "
        "'approved' as document_status, 1 as count_documents, 10.0 as base_value_amount, 'BRL' as currency",
        "create schema platform_raw",
        "create table platform_raw._platform_sales_coverage as select * from (values "
        "('all', 5, 5, 0), ('subscriptions', 5, 5, 0), ('webhooks', 0, 0, 0)) "
        "t(channel, named, loaded, retired)",
    )
    partial = rendered(render_page(DuckDbSnapshot(database), page("/cash"), PERIOD))
    assert "Sales coverage is partial" in partial
    assert "Balance of the sales found, end of Jan 2026" in partial
    assert "not the account's balance" in partial
    with duckdb.connect(str(database)) as connection:  # every sale found: the account's balance
        connection.execute(
            "update platform_raw._platform_sales_coverage set named = 5, loaded = 5 "
            "where channel = 'webhooks'"
        )
    complete = rendered(render_page(DuckDbSnapshot(database), page("/cash"), PERIOD))
    assert "Sales coverage is partial" not in complete
    assert "Balance end of Jan 2026" in complete and "sales found" not in complete


def test_the_events_table_shows_the_rate_as_the_card_and_each_status(tmp_path: Path) -> None:
    """Issue 51: "paid 0" beside 90 tickets sold read as unpaid tickets, and 0.6889 beside 69.0%."""
    database = tmp_path / "w.duckdb"
    _marts(
        database,
        "create table marts.event_attendance as select 'e1' as event_id, 'Launch' as event_title, "
        "timestamptz '2026-01-10 19:00:00+00' as event_starts_at, 90 as count_attendees, "
        "62 as count_checked_in, 80 as count_confirmed, 3 as count_presence_confirmed, 0 as count_paid, "
        "2 as count_locked, 4 as count_refunded, 1 as count_unlisted_status",
    )
    shown = rendered(render_page(DuckDbSnapshot(database), page("/events"), PERIOD))
    assert '"children": "68.9%", "id": "kpi-checkin-rate"' in shown
    assert '"4": "68.9%", "5": 80, "6": 3, "7": 0, "8": 2, "9": 4, "10": 1' in shown
    for header in ("status confirmed", "status presence confirmed", "status paid", "status not in the spec"):
        assert f'"name": "{header}"' in shown


def test_the_newest_month_is_marked_to_date_and_the_default_period_ends_at_the_data(tmp_path: Path) -> None:
    """Issue 51: the current month's MRR was not marked partial, and the default period ran six months
    past the newest data (the platform's clock behind ours)."""
    database = tmp_path / "w.duckdb"
    _marts(
        database,
        "create table marts.subscriptions_mrr_monthly as select * from (values "
        "(date '2026-01-01', 'BRL', 100.0, 100.0, 0.0, 2, 0.0, 0.0, 0.0), "
        "(date '2026-02-01', 'BRL', 150.0, 50.0, 0.0, 3, 0.0, 0.0, 0.0)) "
        "t(month_start, currency, mrr_amount, new_mrr_amount, churned_mrr_amount, "
        "count_active_subscriptions, churn_rate, expansion_mrr_amount, "
        "contraction_mrr_amount)",
        "create table marts.fct_subscriptions as select * from (values "
        "('s1', 'p1', 'BRL', 'upToDate', timestamptz '2026-01-03 00:00:00+00', "
        "timestamptz '2026-02-11 08:00:00+00'), "
        "('s2', 'p1', 'BRL', 'upToDate', timestamptz '2026-02-07 00:00:00+00', "
        "timestamptz '2026-02-07 00:00:00+00')) "
        "t(subscription_id, product_id, currency, subscription_status, started_at, updated_at)",
        "create table marts.fct_sales as select date '2026-02-09' as paid_on, null::date as created_on, "
        "timestamptz '2026-02-10 00:00:00+00' as updated_at",
    )
    period = Filters(date(2026, 1, 1), date(2026, 2, 28))
    shown = rendered(render_page(DuckDbSnapshot(database), page("/subscriptions"), period))
    assert "MRR Feb 2026 to 11 Feb" in shown and "month not over: to the newest data" in shown
    assert "Feb 2026 is not over: to 11 Feb 2026, the newest day of the data" in shown
    with DuckDbSnapshot(database).session() as session:
        assert newest_day(session) == date(2026, 2, 11)
    assert default_filters(date(2026, 2, 11)) == Filters(date(2025, 2, 12), date(2026, 2, 11))
    # the last day of a month: a whole month
    assert not month_to_date(date(2026, 2, 1), date(2026, 2, 28))
    assert month_to_date(date(2026, 2, 1), date(2026, 2, 27))
    assert not month_to_date(date(2026, 1, 1), date(2026, 2, 11))
    assert month_to_date(date(2026, 3, 1), date(2026, 2, 11))  # a month past the data: to its newest day
