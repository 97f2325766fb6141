"""The dashboard over a warehouse of two accounts (issue 32), in Debian's headless chromium: the header's
account filter lists them, every page renders filtered by the account chosen (in the link, as a person's
bookmark would carry it), the overview's KPIs equal the marts' figures of that account alone, Data health
reads that account's raw dataset, and without a choice the figures are both accounts' together."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pytest

from sandbox.running import running_sandbox
from tests.dashboard.conftest import start_dashboard
from tests.dashboard.test_dashboard_in_browser import cents, money
from tests.support.accounts import SCALE, TIME_SCALE, World, accounts_project, run_cli
from tests.support.browser import charts, chromium, console_errors, open_page, screenshot, text

pytestmark = [pytest.mark.xdist_group("dashboard_browser"), pytest.mark.timeout(900)]

SEEDS = {"acme": 11, "beta": 12}
PAGES = ("/", "/subscriptions", "/products", "/cash", "/events", "/learning", "/health")
START, END = "2020-01-01", "2026-11-30"
TABLE_ROWS = """
const graph = document.getElementById('chart-table-rows');
const plot = graph.classList.contains('js-plotly-plot') ? graph : graph.querySelector('.js-plotly-plot');
return [plot.data[0].x, plot.data[0].y];
"""
MART_CELLS = "return Array.from(document.querySelectorAll('#table-marts td')).map(td => td.innerText.trim());"


@dataclass
class Warehouse:
    folder: Path
    database: Path
    env: dict[str, str]

    def rows(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        with duckdb.connect(str(self.database), read_only=True) as connection:
            connection.execute("set TimeZone = 'UTC'")
            return connection.execute(sql, params or []).fetchall()


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warehouse]:
    """Two worlds synced as two accounts with `platform-sync sync --all-accounts`, then `models`."""
    folder = tmp_path_factory.mktemp("two-accounts")
    with contextlib.ExitStack() as stack:
        handles = {
            name: stack.enter_context(running_sandbox(seed=seed, scale=SCALE, time_scale=TIME_SCALE))
            for name, seed in SEEDS.items()
        }
        worlds = {name: World(name, handle, handle.token()) for name, handle in handles.items()}
        env = accounts_project(folder, worlds)
        synced = run_cli(["sync", "--all-accounts", "--no-progress"], env, folder)
        assert synced.returncode == 0, synced.stdout + synced.stderr
    built = run_cli(["models"], env, folder)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    yield Warehouse(folder, folder / "warehouse.duckdb", env)


def overview_figures(warehouse: Warehouse, account: str | None) -> dict[str, Any]:
    """The overview's BRL figures from the marts, of one account or of all."""
    of_account = " and account = ?" if account else ""
    extra = [account] if account else []
    paid = warehouse.rows(
        "select count(*), sum(gross_amount), sum(net_revenue_amount) from marts.fct_sales "
        "where was_paid and currency = 'BRL' "
        f"and coalesce(paid_on, created_on) between cast(? as date) and cast(? as date){of_account}",
        [START, END, *extra],
    )[0]
    return {"paid": paid[0], "gross": cents(paid[1]), "net": cents(paid[2])}


def shown(driver: Any) -> dict[str, Any]:
    return {
        "paid": int(text(driver, "kpi-paid-BRL").replace(",", "")),
        "gross": money(text(driver, "kpi-gross-BRL")),
        "net": money(text(driver, "kpi-net-BRL")),
    }


def test_every_page_filters_by_the_account_chosen(warehouse: Warehouse, tmp_path: Path) -> None:
    accounts = [a for (a,) in warehouse.rows("select distinct account from marts.fct_sales order by 1")]
    assert accounts == sorted(SEEDS)
    figures = {name: overview_figures(warehouse, name) for name in SEEDS}
    both = overview_figures(warehouse, None)
    assert figures["acme"] != figures["beta"] and all(f["paid"] > 0 for f in figures.values())
    assert both["paid"] == figures["acme"]["paid"] + figures["beta"]["paid"]

    raw_sales = {n: warehouse.rows(f"select count(*) from platform_raw_{n}.sales")[0][0] for n in SEEDS}
    assert raw_sales["acme"] != raw_sales["beta"]  # so the health page's figures tell the accounts apart
    mart_sales = {
        n: warehouse.rows("select count(*) from marts.fct_sales where account = ?", [n])[0][0] for n in SEEDS
    }

    served = start_dashboard(warehouse.database, warehouse.folder)
    try:
        with chromium() as driver:
            open_page(driver, f"{served.url}/?start={START}&end={END}")
            assert shown(driver) == both  # no account chosen: both accounts' sales
            # each account's sales coverage (recorded by its own sync: partial, no webhooks here), named
            for name in SEEDS:
                assert text(driver, f"coverage-notice-{name}").startswith(
                    f"Account {name}: Sales coverage is partial"
                )
            options = driver.find_element("id", "filter-account")
            assert options.is_displayed()
            for name in SEEDS:
                for path in PAGES:
                    open_page(driver, f"{served.url}{path}?start={START}&end={END}&account={name}")
                    assert console_errors(driver) == [], (name, path)
                    assert driver.find_elements("css selector", ".page-error") == [], (name, path)
                    assert driver.find_elements("css selector", ".message") == [], (name, path)
                    assert all(chart["traces"] for chart in charts(driver)), (name, path)
                    assert name in text(driver, "filter-account"), (name, path)  # the choice is shown
                    screenshot(driver, tmp_path / f"account-{name}{path.replace('/', '-')}.png")
                    if path == "/":
                        assert shown(driver) == figures[name]
                        assert text(driver, "coverage-notice").startswith("Sales coverage is partial")
                    if path == "/health":
                        # the chosen account's raw dataset: the rows of its own tables are drawn
                        drawn = dict(zip(*driver.execute_script(TABLE_ROWS), strict=True))
                        assert drawn["sales"] == raw_sales[name], drawn
                        # and the marts' rows of that account
                        cells = driver.execute_script(MART_CELLS)
                        assert int(cells[cells.index("fct_sales") + 1]) == mart_sales[name], cells
            open_page(driver, f"{served.url}/health?start={START}&end={END}")
            assert "choose an account" in text(driver, "health-choose-account")
    finally:
        served.process.terminate()
        served.process.wait(timeout=30)
    print(f"screenshots in {tmp_path}")
