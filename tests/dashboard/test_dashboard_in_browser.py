"""The dashboard on the synced sandbox, in Debian's headless chromium: every page renders without a console
error, every chart has data, the KPIs shown equal the same figures computed by SQL on the marts; and a
sync (then dbt) runs while the dashboard is open and browsed, both succeed, and the dashboard shows the
new data without a restart.
"""

from __future__ import annotations

import datetime as dt
import re
import subprocess
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from dashboard.labels import label
from sources.platform.models import ENUMS
from tests.dashboard.conftest import CONSOLE_SCRIPT, Dashboard, World
from tests.support.browser import charts, chromium, console_errors, open_page, screenshot, text

pytestmark = pytest.mark.xdist_group("dashboard_browser")

PAGES = {
    "/": "overview",
    "/subscriptions": "subscriptions",
    "/products": "products",
    "/cash": "cash",
    "/events": "events",
    "/learning": "learning",
    "/health": "health",
}
START, END = "2025-01-01", "2026-11-30"
MOVEMENTS = """
const graph = document.getElementById('chart-mrr-movements');
const plot = graph.classList.contains('js-plotly-plot') ? graph : graph.querySelector('.js-plotly-plot');
return plot.data.map(trace => [trace.name, trace.y]);
"""  # the sandbox world's sales run from mid 2024 to mid 2026


def money(shown: str) -> Decimal:
    currency, amount = shown.split(" ")
    assert currency == "BRL"
    return Decimal(amount.replace(",", ""))


def cents(value: Any) -> Decimal:
    return Decimal(value or 0).quantize(Decimal("0.01"))


def expected_overview(world: World, start: str, end: str, product: str | None = None) -> dict[str, Any]:
    product_filter = " and product_id = ?" if product else ""
    extra = [product] if product else []
    paid = world.rows(
        "select count(*), sum(gross_amount), sum(net_revenue_amount), "
        "count(*) filter (where is_refunded) from marts.fct_sales where was_paid and currency = 'BRL' "
        f"and coalesce(paid_on, created_on) between cast(? as date) and cast(? as date){product_filter}",
        [start, end, *extra],
    )[0]
    refunds = world.rows(
        "select count(*) from marts.fct_sales where is_refunded and currency = 'BRL' and "
        "cast(coalesce(refunded_at, updated_at) as date) between cast(? as date) and cast(? as date)"
        f"{product_filter}",
        [start, end, *extra],
    )[0]
    return {
        "paid": paid[0],
        "gross": cents(paid[1]),
        "net": cents(paid[2]),
        "ticket": cents(paid[1] / paid[0]),
        "refunds": refunds[0],
        "refund_rate": f"{paid[3] / paid[0] * 100:.1f}%",
    }


def shown_overview(driver: Any) -> dict[str, Any]:
    return {
        "paid": int(text(driver, "kpi-paid-BRL").replace(",", "")),
        "gross": money(text(driver, "kpi-gross-BRL")),
        "net": money(text(driver, "kpi-net-BRL")),
        "ticket": money(text(driver, "kpi-ticket-BRL")),
        "refunds": int(text(driver, "kpi-refunds-BRL")),
        "refund_rate": text(driver, "kpi-refund-rate-BRL"),
    }


def test_every_page_renders_with_data_and_the_kpis_equal_sql(
    world: World, dashboard: Dashboard, screenshots: Path
) -> None:
    query = f"?start={START}&end={END}"
    with chromium() as driver:
        for path, name in PAGES.items():
            open_page(driver, dashboard.url + path + query)
            assert console_errors(driver) == [], path
            assert driver.find_elements("css selector", ".message") == [], path
            drawn = charts(driver)
            assert drawn, f"{path} shows no chart"
            assert all(chart["traces"] and all(n > 0 for n in chart["traces"]) for chart in drawn), (
                path,
                drawn,
            )
            screenshot(driver, screenshots / f"dashboard-{name}.png")
            _assert_coverage_notice(world, driver, path)

            if path == "/":
                assert shown_overview(driver) == expected_overview(world, START, END)
            elif path == "/subscriptions":
                month, mrr, active = world.rows(
                    "select month_start, mrr_amount, count_active_subscriptions "
                    "from marts.subscriptions_mrr_monthly where currency = 'BRL' and month_start <= ? "
                    "order by month_start desc limit 1",
                    [END],
                )[0]
                assert money(text(driver, "kpi-mrr-BRL")) == cents(mrr)
                assert int(text(driver, "kpi-active-BRL")) == active
                # the movements drawn are the mart's, month by month
                drawn = dict(driver.execute_script(MOVEMENTS))
                months = world.rows(
                    "select new_mrr_amount, expansion_mrr_amount, contraction_mrr_amount, churned_mrr_amount "
                    "from marts.subscriptions_mrr_monthly where currency = 'BRL' "
                    "and month_start between cast(? as date) and cast(? as date) order by month_start",
                    [START, END],
                )
                for index, name in enumerate(("new", "expansion", "contraction", "churn")):
                    sign = -1 if name in ("contraction", "churn") else 1
                    assert drawn[f"{name} BRL"] == pytest.approx([sign * float(m[index]) for m in months]), (
                        name
                    )
            elif path == "/cash":
                # coverage is partial here (no webhooks): the balance is the found sales', not the account's
                card = driver.find_element("id", "kpi-balance-BRL").find_element("xpath", "..").text
                assert card.lower().startswith("balance of the sales found, end of "), card  # CSS: upper
                assert "not the account's balance" in card
            elif path == "/events":
                table = driver.find_element("id", "table-events").text
                assert "status paid" in table and "status confirmed" in table and "check-in rate" in table
                assert re.search(r"\b\d+\.\d%", table) and not re.search(r"\b0\.\d{3,}", table), table
                attendees, checked_in = world.rows(
                    "select sum(count_attendees), sum(count_checked_in) from marts.event_attendance "
                    "where cast(event_starts_at as date) between cast(? as date) and cast(? as date)",
                    [START, END],
                )[0]
                assert int(text(driver, "kpi-attendees").replace(",", "")) == attendees
                assert int(text(driver, "kpi-checked-in").replace(",", "")) == checked_in
                assert text(driver, "kpi-checkin-rate") == f"{checked_in / attendees * 100:.1f}%"
            elif path == "/learning":
                comments, answered = world.rows(
                    "select sum(count_comments), sum(count_answered) from marts.course_engagement"
                )[0]
                assert int(text(driver, "kpi-comments").replace(",", "")) == comments
                assert int(text(driver, "kpi-answered").replace(",", "")) == answered
                observed, response_hours = world.rows(
                    "select sum(count_responses_observed), sum(avg_observed_response_hours * "
                    "count_responses_observed) / sum(count_responses_observed) from marts.course_engagement"
                )[0]
                assert observed > 0, "the two builds saw some comment answered in between"
                assert text(driver, "kpi-response-time") == f"{response_hours:,.1f} h"
            elif path == "/products":
                methods = world.rows(
                    "select coalesce(payment_method, '(none)'), count(*), sum(gross_amount) "
                    "from marts.fct_sales where was_paid and coalesce(paid_on, created_on) "
                    "between cast(? as date) and cast(? as date) "
                    "group by 1 order by 2 desc, 1",
                    [START, END],
                )
                table = driver.find_element("id", "table-payment-methods").text.splitlines()
                shown = [line for line in table if " BRL " in line]  # the rows, not the header
                assert shown == [f"{label(m)} BRL {n} {cents(g):,} {_listed(m)}" for m, n, g in methods]
            elif path == "/health":
                loads = world.rows("select count(*) from platform_raw._dlt_loads")[0][0]
                assert int(text(driver, "kpi-loads")) == loads
                raw_tables = world.rows(
                    "select count(distinct table_name) from information_schema.columns "
                    "where table_schema = 'platform_raw' and column_name = '_dlt_load_id' "
                    "and table_name not like '\\_%' escape '\\'"
                )[0][0]
                assert int(text(driver, "kpi-tables")) == raw_tables
                _assert_recorded_or_not(world, driver)
                _assert_coverage_table(world, driver)


SALES_PAGES = ("/", "/products", "/cash")  # their figures count sales


def _assert_coverage_notice(world: World, driver: Any, path: str) -> None:
    """The pages whose figures count sales say that the sync found only some (this world has no webhook
    receiver), how many, and how to find the others; the other pages say nothing of it."""
    notices = driver.find_elements("id", "coverage-notice")
    if path not in SALES_PAGES:
        assert notices == [], path
        return
    loaded = world.rows("select loaded from platform_raw._platform_sales_coverage where channel = 'all'")[0][
        0
    ]
    assert loaded == world.rows("select count(*) from platform_raw.sales")[0][0]
    shown = notices[0].text
    assert shown.startswith(
        f"Sales coverage is partial: these figures count the {loaded:,} sales the sync found."
    ), shown
    assert "no webhook announcement is loaded" in shown
    assert "`platform-sync webhooks serve`" in shown and "`sale_ids`" in shown


def _assert_coverage_table(world: World, driver: Any) -> None:
    """Data health lists the sale ids each channel names, loaded and retired, as the table holds them."""
    rows = world.rows(
        "select channel, named, loaded, retired from platform_raw._platform_sales_coverage order by channel"
    )
    assert {channel for channel, *_ in rows} == {
        "subscriptions", "fiscal_documents", "event_attendees", "order_bumps", "webhooks", "sale_ids", "all"
    }  # fmt: skip
    shown = driver.find_element("id", "table-coverage").text
    names = {"subscriptions": "subscriptions (first invoice)", "fiscal_documents": "fiscal documents",
             "event_attendees": "event attendees", "order_bumps": "order bumps (main sale)",
             "webhooks": "webhooks", "sale_ids": "configured sale_ids", "all": "all channels"}  # fmt: skip
    for channel, named, loaded, retired in rows:
        assert f"{names[channel]} {named} {loaded} {retired}" in shown, channel
    assert text(driver, "coverage-status").startswith("Partial: no webhook announcement is loaded")
    known, runs = world.rows(
        "select known_records, reverify_cycle_runs from platform_raw._platform_freshness "
        "where table_name = 'sales'"
    )[0]
    assert known == world.rows("select count(*) from platform_raw.sales")[0][0]
    assert text(driver, "sales-cycle").startswith(
        f"Every known sale ({known}) is fetched again at least every {runs} runs (about "
    )


def _listed(method: str) -> str:
    if method == "(none)":
        return "none sent"
    return "yes" if method in ENUMS["sale.payment.method"] else "no: added by the API"


def _assert_recorded_or_not(world: World, driver: Any) -> None:
    """The run and departure records are shown when the sync writes them, else "not recorded yet"."""
    tables = {
        r[0]
        for r in world.rows(
            "select table_name from information_schema.tables where table_schema = 'platform_raw'"
        )
    }
    # the sandbox drifts: the sync recorded what the API sent that the spec does not list
    assert "_platform_departures" in tables and driver.find_elements("id", "table-departures")
    # the world's syncs record their runs as the command does: how fresh each table is, shown by name
    assert {"_platform_sync_runs", "_platform_freshness"} <= tables
    shown = driver.find_element("id", "table-freshness").text
    for name, refresh in world.rows("select table_name, refresh from platform_raw._platform_freshness"):
        assert f"{name} {refresh}" in shown
    # how stale each table may be at this schedule and budget (issue 47), beside its rule
    assert "stale within (h)" in shown
    hours = world.rows("select stale_within_hours from platform_raw._platform_freshness")
    assert hours and all(value is not None and value > 0 for (value,) in hours)
    for table, marker, table_id in (
        ("_platform_freshness", "freshness-not-recorded", "table-freshness"),
        ("_platform_sync_runs", "runs-not-recorded", "table-last-run"),
        ("_platform_departures", "departures-not-recorded", "table-departures"),
    ):
        if table in tables:
            assert driver.find_elements("id", table_id) or driver.find_elements("id", f"{table_id}-empty")
        else:
            assert "not recorded yet" in text(driver, marker)


def test_filters_apply_product_and_an_empty_period(world: World, dashboard: Dashboard) -> None:
    product = world.rows(
        "select product_id from marts.fct_sales where was_paid and currency = 'BRL' and "
        "coalesce(paid_on, created_on) between cast(? as date) and cast(? as date) "
        "group by 1 order by count(*) desc, 1 limit 1",
        [START, END],
    )[0][0]
    with chromium() as driver:
        open_page(driver, f"{dashboard.url}/?start={START}&end={END}&product={product}&currency=BRL")
        assert console_errors(driver) == []
        assert shown_overview(driver) == expected_overview(world, START, END, product)
        # the filters stay when moving to another page through the menu
        driver.find_element("id", "nav-products").click()
        _wait_title(driver, "Products & affiliates")
        rows = driver.find_element("id", "table-top-products").text
        assert rows.count("BRL") == 1  # one product, the filtered one
        # a period with no sale: messages instead of charts, no error
        open_page(driver, f"{dashboard.url}/?start=2001-01-01&end=2001-01-31")
        assert console_errors(driver) == []
        assert "No paid sale" in driver.find_element("id", "overview-kpis").text
        assert driver.find_elements("id", "chart-revenue-day-empty")


def test_the_default_period_is_the_year_up_to_the_newest_data(world: World, dashboard: Dashboard) -> None:
    """Issue 51: the default period ran on to today, months past the newest data of a platform whose
    clock is behind ours (the sandbox's is); now it ends on the newest change of a sale or subscription
    (not on an event's start, which here is in 2027)."""
    newest = max(
        day
        for (day,) in world.rows(
            "select max(greatest(coalesce(paid_on, created_on), cast(updated_at as date))) "
            "from marts.fct_sales union all "
            "select max(greatest(cast(started_at as date), cast(updated_at as date))) "
            "from marts.fct_subscriptions"
        )
        if day is not None
    )
    with chromium() as driver:
        open_page(driver, dashboard.url + "/")
        assert console_errors(driver) == []
        start, end = (
            field.get_attribute("value")
            for field in driver.find_elements("css selector", "#filter-dates input")
        )
    assert end == newest.isoformat()
    assert start == (newest - dt.timedelta(days=364)).isoformat()


def _wait_title(driver: Any, title: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text(driver, "page-title") == title and not driver.find_elements(
            "css selector", '[data-dash-is-loading="true"]'
        ):
            return
        time.sleep(0.3)
    raise TimeoutError(title)


def test_a_sync_runs_while_the_dashboard_is_browsed_and_the_new_data_shows(
    world: World, dashboard: Dashboard
) -> None:
    loads_before = world.rows("select count(*) from platform_raw._dlt_loads")[0][0]
    stop, visits, problems = threading.Event(), [0], []

    def browse() -> None:
        with chromium() as driver:
            while not stop.is_set():
                for path in PAGES:
                    try:
                        open_page(driver, f"{dashboard.url}{path}?start={START}&end={END}")
                        problems.extend(console_errors(driver))
                        visits[0] += 1
                    except Exception as exc:  # reported below, with the page
                        problems.append(f"{path}: {exc!r}")
                    if stop.is_set():
                        return

    browser = threading.Thread(target=browse)
    browser.start()
    try:
        while visits[0] < 2:  # the dashboard is being browsed when the sync starts
            time.sleep(0.2)
        world.sandbox.advance(30 * 86400)
        synced, built = world.sync_and_build()
        visits_during = visits[0]
    finally:
        stop.set()
        browser.join(timeout=120)
    assert not synced.report.failed, synced.report
    assert built.success, built.output[-3000:]
    assert problems == []
    assert visits_during >= 4  # pages were rendered while the sync and dbt ran

    loads_after = world.rows("select count(*) from platform_raw._dlt_loads")[0][0]
    assert loads_after > loads_before
    with chromium() as driver:  # the next page shows the new data, without restarting the dashboard
        open_page(driver, f"{dashboard.url}/health")
        assert int(text(driver, "kpi-loads")) == loads_after
        open_page(driver, f"{dashboard.url}/?start={START}&end={END}")
        assert shown_overview(driver) == expected_overview(world, START, END)


def test_start_says_only_where_it_serves_and_a_busy_port_is_said_first(dashboard: Dashboard) -> None:
    """No Flask development-server warning, no "Dash is running": one line saying where it serves. A
    second dashboard on the same port says the port is taken, before anything else, and exits 2."""
    log = dashboard.log.read_text()
    assert log.splitlines()[0] == f"dashboard on {dashboard.url}/ (Ctrl-C to stop)"
    assert "Dash is running" not in log and "development server" not in log and "Serving Flask" not in log
    port = dashboard.url.rsplit(":", 1)[1]
    second = subprocess.run(
        [str(CONSOLE_SCRIPT), "dashboard", "--port", port],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=dashboard.log.parent,
    )
    assert second.returncode == 2
    assert second.stdout == ""
    assert second.stderr.splitlines() == [
        f"not started: port {port} on 127.0.0.1 is in use (Address already in use): another dashboard may "
        "be running; stop it, or choose another port with --port."
    ]
