"""Pseudonymisation end to end: the sandbox synced by the command line twice, off and on (at DEBUG), the
models built on both. With the option on no raw email, CPF or phone of the sandbox's people is anywhere:
tables of every schema, state, schemas, load packages, trace, log lines; the same person has the same
pseudonym in every table; the marts agree with the run without it except in the personal columns, and so
does the dashboard, opened on both in Debian's headless chromium: the same figures and charts, the people
it names shown by pseudonym."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt
import duckdb
import pytest

from pipelines.dbt.runner import headline_figures, run_models
from sandbox.running import running_sandbox
from sources.platform.privacy import parse_privacy
from tests.dashboard.conftest import start_dashboard
from tests.dashboard.test_dashboard_in_browser import END, PAGES, START
from tests.pipelines.cli.test_cli import cli_env, run_cli, warehouse
from tests.support.api_people import LOCAL_PID, Served, declared_places, served_people
from tests.support.api_truth import ApiTruth
from tests.support.browser import chromium, console_errors, open_page, screenshot
from tests.support.privacy_scan import Truth, folder_texts, leaks, warehouse_texts
from tests.support.sync_helpers import source_options
from tests.support.warehouses import MODELS_ONLY

# Several syncs and dbt builds in one test: beyond the suite's 300 s on a loaded machine.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("privacy_sandbox"), pytest.mark.timeout(1200)]

SEED, SCALE = 3, 400
PEOPLE = range(0, 301)  # the producer and the pool of buyers (max(300, scale // 2)): every CPF and phone
KEY = "privacy-key-for-tests-7f3a9c0d"
ALL_ON = {"emails": "hash", "documents": "hash", "phones": "hash", "names": "hash", "addresses": "block"}
SETTINGS = parse_privacy(ALL_ON, KEY)


@dataclass
class Synced:
    off: Path
    on: Path
    on_output: str
    served: Served  # the people the API itself served, found by what its values hold


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Synced:
    off, on = tmp_path_factory.mktemp("off"), tmp_path_factory.mktemp("on")
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=600.0) as sandbox:
        token = sandbox.token()
        off_run = run_cli(["sync", "--no-progress"], cli_env(off, source_options(sandbox, token)), off)
        on_env = cli_env(on, source_options(sandbox, token, privacy=ALL_ON, privacy_key=KEY))
        on_env["RUNTIME__LOG_LEVEL"] = "DEBUG"
        on_run = run_cli(["-v", "sync", "--no-progress"], on_env, on)
        served = served_people(ApiTruth(sandbox.base_url, token), sandbox.catalog(), SEED)
    assert off_run.returncode == 0, off_run.stdout + off_run.stderr
    assert on_run.returncode == 0, on_run.stdout + on_run.stderr
    for folder, skipped in ((off, MODELS_ONLY), (on, ())):  # dbt's tests must pass on pseudonyms
        built = run_models(
            warehouse(folder), "build", extra_args=skipped, target_path=folder / "target", echo=False
        )
        assert built.success, built.output[-3000:]
    return Synced(off, on, on_run.stdout + on_run.stderr, served)


def _rows(folder: Path, sql: str) -> list[tuple[Any, ...]]:
    with duckdb.connect(str(folder / "warehouse.duckdb"), read_only=True) as connection:
        return connection.execute(sql).fetchall()


def test_every_place_the_api_serves_a_person_in_is_a_declared_personal_field(synced: Synced) -> None:
    """Truth from the API itself (issue 49): every answer of every read operation walked, a person found
    by what a value holds (an email names its person; a string of the world's first and last names is a
    name), and each place such a value was served must be a personal field the source declares."""
    served = synced.served
    assert served.records > 500 and len(served.truth.emails) > 150
    # people beyond the buyers' pool the scans used to take as the world's (partners, affiliates)
    pids = [LOCAL_PID.search(email.partition("@")[0]) for email in served.truth.emails]
    assert max(int(found.group(1)) for found in pids if found) > max(PEOPLE)
    assert {
        ("buyer", "email"),
        ("producer", "name"),
        ("interruption", "responsible"),
        (None, "author"),
    } <= set(served.places)
    undeclared = {
        place: sorted(kinds) for place, kinds in served.places.items() if place not in declared_places()
    }
    assert undeclared == {}


def test_no_raw_email_cpf_phone_or_name_anywhere_with_the_option_on(synced: Synced) -> None:
    truth = Truth.of_world(SEED, PEOPLE)
    for group in ("emails", "documents", "phones", "names"):  # and every person the API served
        getattr(truth, group).update(getattr(synced.served.truth, group))
    # the scan finds them where they are: the run without the option holds them in raw tables and marts
    found_off = leaks(truth, warehouse_texts(synced.off / "warehouse.duckdb"))
    for where in (
        "platform_raw.sales.buyer__email",
        "platform_raw.sales.buyer__document",
        "marts.fct_sales.buyer_email",
        # names, the seller's and the one who cancelled included (issue 49: left raw with the option on)
        "platform_raw.sales.buyer__name",
        "platform_raw.sales.producer__name",
        "platform_raw.products.author",
        "platform_raw.subscriptions.interruption__responsible",
        "marts.fct_subscriptions.interruption_responsible",
    ):
        assert where in found_off, where
    assert leaks(truth, folder_texts(synced.off / ".dlt" / "pipelines"))  # load packages, state, trace

    assert leaks(truth, warehouse_texts(synced.on / "warehouse.duckdb")) == {}
    pipelines = synced.on / ".dlt" / "pipelines"
    assert {p.name for p in pipelines.iterdir() if p.is_dir()} == {"platform_sync", "platform_sync_runs"}
    assert any((pipelines / "platform_sync" / "load" / "loaded").rglob("*.parquet"))
    assert (pipelines / "platform_sync" / "trace.pickle").exists()
    # every file: state, schemas, load packages, trace, dbt's artefacts, the DuckDB file's own bytes
    assert leaks(truth, folder_texts(synced.on)) == {}
    debug_lines = [line for line in synced.on_output.splitlines() if line.startswith("DEBUG")]
    assert len(debug_lines) > 20
    assert leaks(truth, [("log", synced.on_output)]) == {}
    assert KEY not in synced.on_output
    assert all(KEY not in text for _, text in folder_texts(synced.on))
    assert all(KEY not in text for _, text in warehouse_texts(synced.on / "warehouse.duckdb"))


@pytest.mark.parametrize(
    ("table", "key", "column", "group"),
    [
        ("sales", "id", "buyer__email", "emails"),
        ("sales", "id", "buyer__document", "documents"),
        ("sales", "id", "buyer__phone", "phones"),
        ("sales", "id", "buyer__name", "names"),
        ("sales", "id", "recipient__document", "documents"),
        ("fiscal_documents", "document__id", "client__email", "emails"),
        ("fiscal_documents", "document__id", "client__document", "documents"),
        ("fiscal_documents", "document__id", "destination__tax_id", "documents"),
        ("fiscal_documents", "document__id", "client__cellphone", "phones"),
        ("event_attendees", "id", "email", "emails"),
        ("event_attendees", "id", "invoice_customer_document", "documents"),
        ("subscriptions", "id", "client__email", "emails"),
        ("lesson_comments", "id", "author", "names"),
        ("sales__affiliates", "_dlt_parent_id || '/' || _dlt_list_idx", "email", "emails"),
    ],
)
def test_each_value_becomes_its_pseudonym_the_same_in_every_table(
    synced: Synced, table: str, key: str, column: str, group: str
) -> None:
    if table == "sales__affiliates":  # child rows by their sale id and position
        key = "s.id || '/' || c._dlt_list_idx"
        sql = (
            f"select {key}, c.{column} from platform_raw.{table} c "
            "join platform_raw.sales s on c._dlt_parent_id = s._dlt_id"
        )
    else:
        sql = f"select {key}, {column} from platform_raw.{table}"
    before = dict(_rows(synced.off, sql))
    after = dict(_rows(synced.on, sql))
    assert len(before) > 0 and any(before.values())
    assert after == {k: None if v is None else SETTINGS.pseudonym(group, v) for k, v in before.items()}


def test_joins_on_pseudonyms_find_the_same_pairs(synced: Synced) -> None:
    joins = (
        "select count(*) from platform_raw.sales s join platform_raw.fiscal_documents f "
        "on f.client__document = s.buyer__document",
        "select count(*) from platform_raw.event_attendees a join platform_raw.sales s "
        "on a.invoice_customer_email = s.buyer__email and a.invoice_id = s.id",
        "select count(distinct buyer__email) from platform_raw.sales",
    )
    for sql in joins:
        count = _rows(synced.off, sql)[0][0]
        assert count > 0
        assert _rows(synced.on, sql) == [(count,)], sql


# The mart columns that hold a person's data: pseudonyms (or nulls: addresses are blocked) with the option on.
PERSONAL_MART_COLUMNS = {
    "dim_customers": {"customer_name", "customer_email"},
    "fct_sales": {"buyer_name", "buyer_email", "affiliate_name"},
    # who cancelled or suspended, and the seller's name as a product's author (issue 49)
    "fct_subscriptions": {"subscriber_name", "subscriber_email", "interruption_responsible"},
    "affiliate_performance": {"affiliate_name"},
    "dim_products": {"author"},
}


def test_the_marts_are_the_same_but_for_the_personal_columns(synced: Synced) -> None:
    tables = [
        t
        for (t,) in _rows(
            synced.off, "select table_name from information_schema.tables where table_schema = 'marts'"
        )
    ]
    assert "fct_sales" in tables and "dim_customers" in tables
    differing: dict[str, set[str]] = {}
    for table in tables:
        columns_sql = (
            "select column_name from information_schema.columns "
            f"where table_schema = 'marts' and table_name = '{table}' order by ordinal_position"
        )
        columns = [c for (c,) in _rows(synced.off, columns_sql)]
        for column in columns:
            sql = f'select "{column}" from marts.{table} order by all'
            if _rows(synced.off, sql) != _rows(synced.on, sql):
                differing.setdefault(table, set()).add(column)
        kept = [c for c in columns if c not in PERSONAL_MART_COLUMNS.get(table, set())]
        select = ", ".join(f'"{c}"' for c in kept)
        sql = f"select {select} from marts.{table} order by all"
        assert _rows(synced.off, sql) == _rows(synced.on, sql), (table, differing.get(table))
    assert differing == PERSONAL_MART_COLUMNS
    # the dashboard's headline figures are computed from the marts: the same
    assert headline_figures(warehouse(synced.off)) == headline_figures(warehouse(synced.on))
    top = _rows(
        synced.on,
        "select customer_email, net_revenue_amount from marts.dim_customers order by 2 desc limit 3",
    )
    assert all(len(email) == 32 for email, _ in top)  # top customers shown by pseudonym


# What a page shows: its text, its KPIs and every chart's series (names, labels, values), times and dlt's
# load ids (a time too) made alike: the Data health page shows when each of the two syncs ran.
SHOWN = """
const charts = Array.from(document.querySelectorAll('.js-plotly-plot')).map(el => [
  el.parentElement.id || el.id, (el.data || []).map(t => [t.name, t.x, t.y, t.labels, t.values])]);
const kpis = Array.from(document.querySelectorAll('[id^=kpi-]')).map(e => [e.id, e.innerText]);
return JSON.stringify([document.getElementById('page').innerText, kpis, charts]);
"""
WHEN = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?( UTC|Z|\+00:00)?|(?<!\d)\d{10}\.\d+")


def test_the_dashboard_shows_the_same_figures_and_people_by_pseudonym(synced: Synced, tmp_path: Path) -> None:
    names = {n for (n,) in _rows(synced.off, "select distinct affiliate_name from marts.fct_sales") if n}
    assert names
    as_pseudonyms = {name: SETTINGS.pseudonym("names", name) for name in names}

    def shown(driver: Any, side: str, path: str) -> str:
        assert console_errors(driver) == [], (side, path)
        assert driver.find_elements("css selector", ".message") == [], (side, path)
        return WHEN.sub("<when>", driver.execute_script(SHOWN))

    served = [start_dashboard(folder / "warehouse.duckdb", folder) for folder in (synced.off, synced.on)]
    shots = Path(os.environ.get("PLATFORM_SYNC_SCREENSHOTS") or tmp_path)
    named = 0
    try:
        with chromium() as driver:
            for path, page in PAGES.items():
                query = f"?start={START}&end={END}"
                open_page(driver, served[0].url + path + query)
                off = shown(driver, "off", path)
                open_page(driver, served[1].url + path + query)
                on = shown(driver, "on", path)
                screenshot(driver, shots / f"dashboard-pseudonyms-{page}.png")
                raw = [name for name in names if name in off]
                named += len(raw)
                for name in sorted(raw, key=len, reverse=True):
                    off = off.replace(name, as_pseudonyms[name])
                assert on == off, path  # the same page, a pseudonym where a name was
                assert not [name for name in names if name in on], path
    finally:
        for dashboard in served:
            dashboard.process.terminate()
            dashboard.process.wait(timeout=30)
    assert named >= 10  # the top affiliates, by name without the option (chart and table)


def test_the_settings_are_recorded_with_the_data(synced: Synced) -> None:
    def state(folder: Path) -> dict[str, Any]:
        pipeline = dlt.attach("platform_sync", pipelines_dir=str(folder / ".dlt" / "pipelines"))
        return dict(pipeline.state["sources"]["platform"])

    assert state(synced.on)["privacy"] == SETTINGS.record()
    assert "privacy" not in state(synced.off)
    # and in the destination, where dlt restores it from: the state row of the last load
    stored = _rows(
        synced.on, "select state from platform_raw._dlt_pipeline_state order by version desc limit 1"
    )
    assert stored and SETTINGS.key_id() is not None


def test_changing_the_settings_of_a_loaded_warehouse_stops_with_one_line(tmp_path: Path) -> None:
    with running_sandbox(seed=2, scale=50, time_scale=600.0) as sandbox:
        options = source_options(sandbox, sandbox.token())
        args = ["sync", "--no-progress", "--resources", "products"]
        first = run_cli(args, cli_env(tmp_path, options), tmp_path)
        assert first.returncode == 0, first.stderr
        loads = _rows(tmp_path, "select count(*) from platform_raw._dlt_loads")

        on = {**options, "privacy": {"emails": "hash"}, "privacy_key": KEY}
        refused = run_cli(args, cli_env(tmp_path, on), tmp_path)
        assert refused.returncode == 2
        assert refused.stderr.strip().splitlines() == [
            "configuration error: the privacy settings changed (emails keep -> hash) but dataset "
            "platform_raw holds data loaded under the earlier ones, and the two would mix: nothing was "
            "synced. Load everything again under the new settings with `platform-sync sync --full-refresh`, "
            "or put the earlier settings back (docs/contracts.md, section 7)"
        ]
        assert _rows(tmp_path, "select count(*) from platform_raw._dlt_loads") == loads

        reloaded = run_cli([*args, "--full-refresh"], cli_env(tmp_path, on), tmp_path)
        assert reloaded.returncode == 0, reloaded.stderr
        assert run_cli(args, cli_env(tmp_path, on), tmp_path).returncode == 0  # same settings: fine

        rotated = {**on, "privacy_key": "another-key-for-tests-12345"}
        refused = run_cli(args, cli_env(tmp_path, rotated), tmp_path)
        assert refused.returncode == 2
        assert "(another privacy_key)" in refused.stderr and "another-key-for-tests" not in refused.stderr
