"""PostgreSQL as a real destination: the sandbox synced into a throwaway PostgreSQL server and, with the
same seed and options, into DuckDB; `dbt build` on both; the marts compared value by value.

One small world, one sync and one `dbt build` per engine, shared by the module (about a minute on two
cores). The credentials reach dlt and dbt through dlt's environment configuration only.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import dlt
import duckdb
import psycopg2
import pytest

from pipelines.dbt.freshness import source_freshness
from pipelines.dbt.runner import ModelsResult, raw_tables, run_models
from pipelines.sync.platform_pipeline import SyncResult, sync
from sandbox.running import running_sandbox
from tests.support.postgres_server import PostgresServer, free_port
from tests.support.sync_helpers import source_options

pytestmark = [pytest.mark.xdist_group("postgres"), pytest.mark.timeout(900)]

SEED, SCALE, TIME_SCALE = 3, 400, 600.0
DATABASE = "warehouse"
RAW, MARTS = "platform_raw", "marts"
CREDENTIALS_ENV = "DESTINATION__POSTGRES__CREDENTIALS"
MARTS_OF_THE_README = (
    "fct_sales",
    "fct_sale_items",
    "dim_products",
    "dim_customers",
    "fct_subscriptions",
    "subscriptions_mrr_monthly",
    "daily_sales_overview",
    "affiliate_performance",
    "fct_transfers",
    "monthly_cash_flow",
    "event_attendance",
    "course_engagement",
    "community_engagement",
    "fiscal_documents_status",
)


@dataclass
class Engine:
    """One warehouse after the sync and the build."""

    pipeline: dlt.Pipeline
    synced: SyncResult
    built: ModelsResult


@dataclass
class Synced:
    postgres: Engine
    duckdb: Engine
    duckdb_path: Path
    server: PostgresServer
    postgres_again: SyncResult


@pytest.fixture(scope="module")
def postgres_env(postgres_server: PostgresServer) -> Iterator[PostgresServer]:
    """The server's `warehouse` database as dlt's postgres credentials, for this module's duration."""
    postgres_server.create_database(DATABASE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CREDENTIALS_ENV, postgres_server.credentials(DATABASE))
        yield postgres_server


@pytest.fixture(scope="module")
def synced(postgres_env: PostgresServer, tmp_path_factory: pytest.TempPathFactory) -> Synced:
    workdir = tmp_path_factory.mktemp("postgres_e2e")
    duckdb_path = workdir / "warehouse.duckdb"
    pipelines = {
        "postgres": dlt.pipeline(
            pipeline_name="platform_sync",
            destination="postgres",  # credentials from the environment, as a user's config would give them
            dataset_name=RAW,
            pipelines_dir=str(workdir / "pg_pipelines"),
        ),
        "duckdb": dlt.pipeline(
            pipeline_name="platform_sync",
            destination=dlt.destinations.duckdb(str(duckdb_path)),
            dataset_name=RAW,
            pipelines_dir=str(workdir / "duck_pipelines"),
        ),
    }
    syncs = {}
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=TIME_SCALE) as sandbox:
        for name, pipeline in pipelines.items():
            syncs[name] = sync(pipeline, source_options=source_options(sandbox, sandbox.token()))
        # a second run into PostgreSQL with nothing new: its merges (ADBC-loaded parquet into a staging
        # dataset, then delete-insert) must leave every table as the single run into DuckDB did
        syncs["postgres_again"] = sync(
            pipelines["postgres"], source_options=source_options(sandbox, sandbox.token())
        )
        # and into DuckDB as well, which appends the community snapshots (read on every run) a second
        # time on both
        sync(pipelines["duckdb"], source_options=source_options(sandbox, sandbox.token()))
    engines = {
        name: Engine(
            pipeline, syncs[name], run_models(pipeline, target_path=workdir / f"target_{name}", echo=False)
        )
        for name, pipeline in pipelines.items()
    }
    return Synced(engines["postgres"], engines["duckdb"], duckdb_path, postgres_env, syncs["postgres_again"])


# ------------------------------------------------------------------------------------------- helpers


def pg_query(server: PostgresServer, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    connection = psycopg2.connect(
        host=server.host, port=server.port, user=server.user, password=server.password, dbname=DATABASE
    )
    try:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            names = [column[0] for column in cursor.description or []]
            return names, list(cursor.fetchall())
    finally:
        connection.close()


def duck_query(path: Path, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    with duckdb.connect(str(path), read_only=True) as connection:
        cursor = connection.execute(sql)
        return [column[0] for column in cursor.description], cursor.fetchall()


def tables_in(query: Any, schema: str) -> list[str]:
    _, rows = query(
        "select table_name from information_schema.tables "
        f"where table_schema = '{schema}' and table_name not like '!_%' escape '!' order by table_name"
    )
    return [str(row[0]) for row in rows]


def canonical(value: Any) -> str:
    """One spelling per value on both engines: decimals exactly (80 and 80.000000 are one number),
    timestamps in UTC, floats to 12 significant digits (sums of doubles may differ in the last bits)."""
    if value is None:
        return "<null>"
    if isinstance(value, bool):
        return f"bool:{value}"
    if isinstance(value, Decimal | int):  # a sum of integers is numeric on PostgreSQL, an integer on DuckDB
        number = Decimal(value)
        return "number:" + (format(number.normalize(), "f") if number else "0")
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.12g}"
    if isinstance(value, dt.datetime):
        return (value.astimezone(dt.UTC) if value.tzinfo else value).isoformat()
    if isinstance(value, str | dt.date):
        return f"{type(value).__name__}:{value}"
    return repr(value)


def canonical_rows(rows: list[tuple[Any, ...]]) -> list[tuple[str, ...]]:
    return sorted(tuple(canonical(value) for value in row) for row in rows)


# ------------------------------------------------------------------------------------------- the tests


def test_the_syncs_load_the_same_raw_rows_into_postgres_as_into_duckdb(synced: Synced) -> None:
    for engine in (synced.postgres, synced.duckdb):
        assert engine.synced.report.failed == {}
        assert engine.synced.rows["sales"] > 0
    assert synced.postgres_again.report.failed == {}
    assert sum(synced.postgres_again.rows.values()) > 0  # rows re-read and merged over themselves
    pg_tables = tables_in(lambda sql: pg_query(synced.server, sql), RAW)
    duck_tables = tables_in(lambda sql: duck_query(synced.duckdb_path, sql), RAW)
    assert pg_tables == duck_tables
    assert {"sales", "sales__items", "subscriptions", "transfers", "event_attendees"} <= set(pg_tables)
    for table in pg_tables:
        count = f"select count(*) from {RAW}.{table}"
        assert pg_query(synced.server, count)[1] == duck_query(synced.duckdb_path, count)[1], table


def test_the_sales_coverage_and_verification_are_counted_alike_on_both_engines(synced: Synced) -> None:
    """The coverage by channel and the oldest verification are asked of the destination in SQL
    (`pipelines/sync/coverage.py`): PostgreSQL answers as DuckDB does, for the same first sync."""

    def counts(result: Any) -> dict[str, tuple[int, int, int]]:
        return {row["channel"]: (row["named"], row["loaded"], row["retired"]) for row in result.coverage}

    ours, theirs = counts(synced.postgres.synced), counts(synced.duckdb.synced)
    assert ours == theirs and ours["all"][1] == synced.duckdb.synced.rows["sales"]
    assert {ours[name][0] for name in ("subscriptions", "fiscal_documents", "event_attendees")} != {0}
    known = {row["table_name"]: row["known_records"] for row in synced.postgres.synced.freshness}
    assert known["sales"] == ours["all"][1]


def test_dbt_build_passes_every_model_test_and_unit_test_on_postgres(synced: Synced) -> None:
    built = synced.postgres.built
    assert built.success, built.output[-5000:]
    checked = [
        n for n in built.nodes if n.unique_id.split(".")[0] in ("model", "test", "unit_test", "snapshot")
    ]
    not_passing = [(n.unique_id, n.status, n.message) for n in checked if n.status not in ("success", "pass")]
    assert not_passing == []  # no warning either: the sandbox's data keeps every rule
    assert {node.unique_id.split(".")[0] for node in checked} == {"model", "test", "unit_test", "snapshot"}
    # the same nodes with the same outcome as on DuckDB: nothing is left out or skipped on PostgreSQL
    assert synced.duckdb.built.success, synced.duckdb.built.output[-5000:]
    statuses = {n.unique_id: n.status for n in built.nodes}
    assert statuses == {n.unique_id: n.status for n in synced.duckdb.built.nodes}
    assert {f"model.platform_sync.{mart}" for mart in MARTS_OF_THE_README} <= set(statuses)


def test_the_marts_hold_the_same_figures_on_postgres_and_duckdb(synced: Synced) -> None:
    marts = tables_in(lambda sql: duck_query(synced.duckdb_path, sql), MARTS)
    assert set(MARTS_OF_THE_README) <= set(marts)
    assert tables_in(lambda sql: pg_query(synced.server, sql), MARTS) == marts
    for mart in marts:
        pg_names, pg_rows = pg_query(synced.server, f"select * from {MARTS}.{mart}")
        duck_names, duck_rows = duck_query(synced.duckdb_path, f"select * from {MARTS}.{mart}")
        assert pg_names == duck_names, mart
        assert len(pg_rows) == len(duck_rows), mart
        assert canonical_rows(pg_rows) == canonical_rows(duck_rows), mart
    # the comparison covers real figures, not empty tables
    _, ((count, gross),) = pg_query(
        synced.server, f"select count(*), sum(gross_amount) from {MARTS}.fct_sales"
    )
    assert count == synced.postgres.synced.rows["sales"]
    assert isinstance(gross, Decimal) and gross > 0


# Every parent table the sync loads and dlt's loads table; attendees declare no freshness (only changed
# ones are read), child tables neither.
FRESHNESS_CHECKED = (
    "_dlt_loads",
    "affiliations",
    "community_commenters",
    "community_top_posts",
    "deliveries",
    "enrollments",
    "events",
    "fiscal_documents",
    "lesson_comments",
    "product_campaigns",
    "product_partners",
    "products",
    "sales",
    "subscriptions",
    "transfers",
    "webhook_origins",
)


def test_source_freshness_of_the_fresh_sync_passes_on_both_engines(synced: Synced, tmp_path: Path) -> None:
    loaded = tables_in(lambda sql: pg_query(synced.server, sql), RAW)
    for name, engine in (("postgres", synced.postgres), ("duckdb", synced.duckdb)):
        tables = raw_tables(engine.pipeline)
        assert tables == loaded, name
        freshness = source_freshness(engine.pipeline, tables, target_path=tmp_path / name)
        assert freshness.ran, freshness.output[-3000:]
        assert {t.table: t.status for t in freshness.tables} == dict.fromkeys(FRESHNESS_CHECKED, "pass")
        assert all(t.warn_after == "26 hours" for t in freshness.tables), name
        assert freshness.summary() == ["source freshness: 16 of 16 raw tables fresh."]


# ------------------------------------------------------------------------------ `platform-sync models`

REPOSITORY = Path(__file__).resolve().parents[3]


def platform_sync(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The real command, in `cwd` (its own `.dlt/`), with this checkout's code."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from pipelines.cli.main import main; sys.exit(main())", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPOSITORY), **env},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_models_refuses_a_destination_without_raw_tables(synced: Synced, tmp_path: Path) -> None:
    server = synced.server
    # after a sync into PostgreSQL, `models` with the default destination looks at a DuckDB file that
    # does not exist: refused, and the file is not created
    default = platform_sync(["models"], tmp_path)
    assert default.returncode == 2, default.stdout + default.stderr
    database_file = tmp_path / "platform_sync.duckdb"
    assert (
        f"no raw tables in the dataset 'platform_raw' of the duckdb database {database_file}"
        in default.stderr
    )
    assert not (tmp_path / "platform_sync.duckdb").exists()
    assert "source freshness" not in default.stdout

    # the right server, a dataset where a run loaded nothing: only dlt's tables and the run log
    server.psql(
        DATABASE,
        "create schema nothing_loaded; create table nothing_loaded._dlt_loads (load_id text); "
        "create table nothing_loaded._platform_sync_runs (resource text)",
    )
    other = platform_sync(["models", "--destination", "postgres", "--dataset", "nothing_loaded"], tmp_path)
    assert other.returncode == 2, other.stdout + other.stderr
    assert (
        f"no raw tables in the dataset 'nothing_loaded' of the postgres database {DATABASE} on "
        f"{server.host}:{server.port}"
    ) in other.stderr
    assert server.password not in other.stdout + other.stderr


def test_models_says_when_the_server_cannot_be_reached(synced: Synced, tmp_path: Path) -> None:
    server = synced.server
    closed_port = free_port()
    wrong = server.credentials(DATABASE).replace(f":{server.port}/", f":{closed_port}/")
    run = platform_sync(["models", "--destination", "postgres"], tmp_path, **{CREDENTIALS_ENV: wrong})
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"cannot reach the postgres database {DATABASE} on {server.host}:{closed_port}" in run.stderr
    assert server.password not in run.stdout + run.stderr


@pytest.fixture
def stale_transfers(synced: Synced) -> Iterator[float]:
    """The raw transfers as if the last run that brought one was two days ago; restored after."""
    table = f"{RAW}.transfers"
    _, load_ids = pg_query(synced.server, f"select distinct _dlt_load_id from {table}")
    assert len(load_ids) == 1
    two_days_ago = time.time() - 48 * 3600
    synced.server.psql(DATABASE, f"update {table} set _dlt_load_id = '{two_days_ago:.6f}'")
    yield two_days_ago
    synced.server.psql(DATABASE, f"update {table} set _dlt_load_id = '{load_ids[0][0]}'")


def test_models_builds_on_postgres_and_reports_source_freshness(
    synced: Synced, stale_transfers: float, tmp_path: Path
) -> None:
    target = tmp_path / "target"
    run = platform_sync(
        ["models", "--destination", "postgres", "--select", "stg_platform__transfers"],
        tmp_path,
        DBT_TARGET_PATH=str(target),
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr
    results = json.loads((target / "run_results.json").read_text())["results"]
    assert {(r["unique_id"], r["status"]) for r in results if r["unique_id"].startswith("model.")} == {
        ("model.platform_sync.stg_platform__transfers", "success")
    }
    # every parent table the sync loaded and dlt's loads table, attendees excepted (no freshness)
    lines = run.stdout.splitlines()
    summary = lines.index("source freshness: 15 of 16 raw tables fresh:")
    stale = re.fullmatch(
        r"  transfers: stale, last loaded (\S+ \d\d:\d\d) UTC \((\d+\.\d) hours ago; warn after 26 hours\)",
        lines[summary + 1],
    )
    assert stale, lines[summary + 1]
    loaded_at = dt.datetime.fromtimestamp(stale_transfers, dt.UTC).strftime("%Y-%m-%d %H:%M")
    assert stale.groups() == (loaded_at, "48.0")
    assert lines[summary + 2 :] == []
    assert synced.server.password not in run.stdout + run.stderr


def test_the_dashboard_shows_the_same_pages_on_postgres_as_on_duckdb(synced: Synced) -> None:
    """Every page of `platform-sync dashboard` rendered from the PostgreSQL warehouse equals the same page
    rendered from the DuckDB one, figure for figure (the health page: its load times and ids differ)."""
    from plotly.utils import PlotlyJSONEncoder

    from dashboard import DuckDbSnapshot, render_page
    from dashboard.app import pages
    from dashboard.filters import Filters
    from dashboard.warehouse import for_pipeline

    on_postgres = for_pipeline(synced.postgres.pipeline)
    on_duckdb = DuckDbSnapshot(synced.duckdb_path)
    first, last = duck_query(synced.duckdb_path, f"select min(paid_on), max(paid_on) from {MARTS}.fct_sales")[
        1
    ][0]
    period = Filters(first, last)
    try:
        for page in pages(RAW):
            shown = {
                engine: json.dumps(
                    render_page(warehouse, page, period), cls=PlotlyJSONEncoder, sort_keys=True
                )
                for engine, warehouse in (("postgres", on_postgres), ("duckdb", on_duckdb))
            }
            for engine, text in shown.items():
                assert "page-error" not in text and "No data yet" not in text, (
                    engine,
                    page.path,
                    text[:2000],
                )
            if page.path != "/health":
                # equal as values: PostgreSQL's sum of integers is numeric (1.0 in JSON), DuckDB's integer
                assert json.loads(shown["postgres"]) == json.loads(shown["duckdb"]), first_difference(
                    json.loads(shown["postgres"]), json.loads(shown["duckdb"]), page.path
                )
            else:
                assert '"kpi-tables"' in shown["postgres"] and '"table-last-loaded"' in shown["postgres"]
    finally:
        on_duckdb.close()


def first_difference(ours: Any, theirs: Any, path: str) -> str:
    """Where two rendered pages first differ, for the failure message."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(ours.keys() | theirs.keys()):
            if ours.get(key) != theirs.get(key):
                return first_difference(ours.get(key), theirs.get(key), f"{path}/{key}")
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for index, (mine, other) in enumerate(zip(ours, theirs, strict=True)):
            if mine != other:
                return first_difference(mine, other, f"{path}[{index}]")
    return f"{path}: {ours!r:.300} != {theirs!r:.300}"


def test_the_run_and_freshness_records_load_into_postgres(synced: Synced) -> None:
    """What the command records after a sync (`pipelines/sync/runs.py`) merges into PostgreSQL too: one
    freshness row per table, replaced by the next record, and one run row per resource per run."""
    from pipelines.sync.runs import outcome_rows, record_run, run_started_at

    result = synced.postgres_again
    # a dataset of its own: the raw dataset is compared table for table with DuckDB's
    pipeline = dlt.pipeline(
        pipeline_name="records_check",
        pipelines_dir=synced.postgres.pipeline.pipelines_dir,
        destination=synced.postgres.pipeline.destination,
        dataset_name="records_check",
    )
    rows = outcome_rows(result, None, run_started_at())
    # two runs' records: the same outcomes, the second run stamped a second later than the first
    later = [{**row, "run_started_at": row["run_started_at"] + dt.timedelta(seconds=1)} for row in rows]
    for records in (rows, later):
        assert record_run(pipeline, records, result.freshness)
    _, freshness = pg_query(
        synced.server,
        "select table_name, refresh, not_fetched from records_check._platform_freshness order by 1",
    )
    assert [row[0] for row in freshness] == sorted(row["table_name"] for row in result.freshness)
    assert {row[1] for row in freshness} >= {"incremental", "full scan, read every run"}
    _, runs = pg_query(
        synced.server,
        "select count(*), count(distinct run_started_at) from records_check._platform_sync_runs",
    )
    assert runs == [(2 * len(result.freshness), 2)]


def test_one_writer_per_postgres_dataset_whatever_the_pipelines_folder(postgres_env, tmp_path: Path) -> None:
    """The advisory lock decides (issue 53): two pipelines folders (two machines, two containers) keep
    lock files that know nothing of each other, and the second writer of one dataset is refused."""
    from pipelines.sync.lock import LockHeld, run_lock

    def pipeline(folder: str) -> dlt.Pipeline:
        return dlt.pipeline(
            pipeline_name="platform_sync",
            destination="postgres",
            dataset_name="locked_raw",
            pipelines_dir=str(tmp_path / folder),
        )

    first, second = pipeline("a"), pipeline("b")
    with run_lock(first, "write"):
        with pytest.raises(LockHeld, match="the dataset locked_raw on postgres .* is in use by another run"):
            with run_lock(second, "write"):
                pass
        with pytest.raises(LockHeld):
            with run_lock(second, "read"):
                pass
    with run_lock(first, "read"), run_lock(second, "read"):  # readers share
        with pytest.raises(LockHeld):
            with run_lock(pipeline("c"), "write"):
                pass
    with run_lock(second, "write"):  # released: the next writer gets it
        pass
