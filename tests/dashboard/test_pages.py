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
from dashboard.filters import Filters
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
