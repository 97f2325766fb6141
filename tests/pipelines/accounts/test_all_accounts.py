"""`platform-sync sync --all-accounts`: three sandbox worlds as three accounts into one DuckDB file. Each
account's raw tables equal a single-account sync of its world, and so do its rows of the marts; one
account's wrong token fails it alone; a full refresh or a `forget` of one account leaves the others'
rows as they were."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import duckdb
import pytest

from sources.platform_client.operations import OPERATIONS
from tests.support.accounts import (
    SEEDS,
    World,
    accounts_project,
    run_cli,
    schema_tables,
    single_account_env,
)
from tests.support.airflow import DATE, airflow, airflow_env, task_states
from tests.support.warehouses import MODELS_ONLY_ENV

pytestmark = [pytest.mark.xdist_group("accounts"), pytest.mark.timeout(900)]

MARTS = "marts"
# Mart columns that stamp the build or the load, not the data: when the departures were first and last
# seen and in which load (load ids are times), and response times observed between builds.
BUILD_STAMPS = frozenset({"first_seen_at", "last_seen_at", "last_load_id"})


@pytest.fixture(scope="module")
def references(worlds: dict[str, World], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each world synced alone as today's single account (dataset platform_raw), and its models built; the
    three at once (each its own folder, warehouse and world), as the suite's time is short."""

    def single(name: str, world: World, folder: Path) -> Path:
        env = {**single_account_env(folder, world), "DBT_TARGET_PATH": str(folder / "target")}
        env.update(MODELS_ONLY_ENV)  # the marts' rows, not dbt's tests
        result = run_cli(["sync", "--no-progress"], env, folder)
        assert result.returncode == 0, result.stdout + result.stderr
        built = run_cli(["models"], env, folder)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr
        return folder / "warehouse.duckdb"

    folders = {name: tmp_path_factory.mktemp(f"single-{name}") for name in worlds}
    with ThreadPoolExecutor(max_workers=len(worlds)) as pool:
        done = {name: pool.submit(single, name, world, folders[name]) for name, world in worlds.items()}
        return {name: future.result() for name, future in done.items()}


@pytest.fixture(scope="module")
def together(worlds: dict[str, World], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """The three worlds as three accounts of one project, synced with --all-accounts, models built."""
    folder = tmp_path_factory.mktemp("accounts")
    env = {**accounts_project(folder, worlds), "DBT_TARGET_PATH": str(folder / "target")}
    synced = run_cli(["sync", "--all-accounts", "--no-progress"], env, folder)
    built = run_cli(["models"], env, folder)
    return folder / "warehouse.duckdb", (synced, built)


def test_all_accounts_load_each_world_as_its_single_account_sync(together, references):
    warehouse, (synced, _) = together
    assert synced.returncode == 0, synced.stdout + synced.stderr
    for name in SEEDS:
        assert f"\n{name:40} {0:>12}  loaded" in synced.stdout
    assert "all 3 accounts loaded (exit status 0)." in synced.stdout
    for name in SEEDS:
        loaded = schema_tables(warehouse, f"platform_raw_{name}")
        expected = schema_tables(references[name], "platform_raw")
        assert sorted(loaded) == sorted(expected), name
        for table, rows in expected.items():
            assert loaded[table] == rows, f"{name}.{table}"
    assert "platform_raw" not in _schemas(warehouse)  # no account is the default one here


def test_each_accounts_rows_of_the_marts_equal_its_single_account_marts(together, references):
    warehouse, (_, built) = together
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr
    marts = _tables(warehouse, MARTS)
    assert len(marts) == 16
    for name in SEEDS:
        for mart in marts:
            mine = _mart_rows(warehouse, mart, name)
            alone = _mart_rows(references[name], mart, "default")
            assert mine == alone, f"{mart} of {name}"
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        accounts = connection.execute("select distinct account from marts.fct_sales order by 1").fetchall()
    assert accounts == [(name,) for name in sorted(SEEDS)]


def test_one_accounts_token_scope_refresh_or_forget_never_reach_the_others(
    worlds, references, tmp_path: Path
):
    # beta's token is not one of its world (401 on every request); gamma's lacks the products' scope (403)
    without_products = sorted({s for op in OPERATIONS for s in op.scopes} - {"store_products_read"})
    tokens = {"beta": "not-a-token-of-this-world", "gamma": worlds["gamma"].sandbox.token(without_products)}
    env = accounts_project(tmp_path, worlds, tokens=tokens)
    result = run_cli(["sync", "--all-accounts", "--accounts-at-once", "2", "--no-progress"], env, tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"\n{'acme':40} {0:>12}  loaded" in result.stdout
    assert f"\n{'beta':40} {1:>12}  FAILED" in result.stdout
    assert f"\n{'gamma':40} {3:>12}  PARTIAL" in result.stdout
    assert "account beta: FAILED: the access token was rejected" in result.stderr
    assert "ACCOUNTS__BETA__ACCESS_TOKEN" in result.stderr
    skipped = [
        line
        for line in result.stderr.splitlines()
        if line.startswith("account gamma: ") and "skipped" in line
    ]
    assert len(skipped) == 1 and "products" in skipped[0] and "store_products_read" in skipped[0], (
        result.stderr
    )
    assert "Traceback" not in result.stderr
    warehouse = tmp_path / "warehouse.duckdb"
    assert schema_tables(warehouse, "platform_raw_acme") == schema_tables(references["acme"], "platform_raw")
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        outcomes = connection.execute(
            "select status, message from platform_raw_beta._platform_sync_runs"
        ).fetchall()
        gamma = dict(
            connection.execute(
                "select resource, status from platform_raw_gamma._platform_sync_runs"
            ).fetchall()
        )
    # every resource failed, but sales, which reads the ids the others found: none (as for one account)
    assert {status for status, message in outcomes if message != "0 rows"} == {"failed"}
    assert ("loaded", "0 rows") in outcomes
    assert _tables(warehouse, "platform_raw_beta") == []
    assert gamma["products"] == "skipped" and gamma["subscriptions"] == "loaded"

    # one account again, from scratch: the other's rows stay as they were, load ids included
    gamma_before = _raw_rows(warehouse, "platform_raw_gamma")
    refreshed = run_cli(["sync", "--account", "acme", "--full-refresh", "--no-progress"], env, tmp_path)
    assert refreshed.returncode == 0, refreshed.stdout + refreshed.stderr
    assert f"\n{'acme':40} {0:>12}  loaded" in refreshed.stdout and "gamma" not in refreshed.stdout
    assert _raw_rows(warehouse, "platform_raw_gamma") == gamma_before
    assert schema_tables(warehouse, "platform_raw_acme") == schema_tables(references["acme"], "platform_raw")

    # a person forgotten in acme only
    email = _first_buyer_email(warehouse, "platform_raw_acme")
    forgot = run_cli(["forget", "--account", "acme", "--email", email], env, tmp_path)
    assert forgot.returncode == 0, forgot.stdout + forgot.stderr
    assert "platform_raw_acme" in forgot.stdout
    assert (
        _count(warehouse, "select count(*) from platform_raw_acme.sales where buyer__email = ?", email) == 0
    )
    assert _raw_rows(warehouse, "platform_raw_gamma") == gamma_before


def test_the_airflow_accounts_dag_run_loads_each_account_and_fails_the_run_on_a_revoked_one(
    worlds, references, tmp_path: Path
):
    """The Airflow DAG `platform_sync_accounts`, run by `airflow dags test` in Airflow's virtualenv
    (tests/support/airflow.py), on the three worlds as three accounts, beta's token not one of its world:
    acme's and gamma's raw tables and marts equal their single-account syncs, beta's task fails alone,
    the models are built on the others (`all_done`), and the run fails (`accounts_loaded`
    upstream_failed) instead of looking green."""
    project = tmp_path / "project"
    project_env = accounts_project(project, worlds, tokens={"beta": "not-a-token-of-this-world"})
    tokens = {key: value for key, value in project_env.items() if key.startswith("ACCOUNTS__")}
    env = airflow_env(tmp_path, project, {**tokens, **MODELS_ONLY_ENV})
    run = airflow(["dags", "test", "platform_sync_accounts", DATE], env, tmp_path)
    states = task_states(tmp_path, "platform_sync_accounts")
    assert states == {
        ("accounts", -1): "success",
        ("sync_account", 0): "success",
        ("sync_account", 1): "failed",
        ("sync_account", 2): "success",
        ("models", -1): "success",
        ("accounts_loaded", -1): "upstream_failed",
    }, run.stdout[-3000:] + run.stderr[-3000:]
    assert "account beta: FAILED: the access token was rejected" in run.stdout + run.stderr
    warehouse = project / "platform_sync.duckdb"
    assert _tables(warehouse, "platform_raw_beta") == []
    for name in ("acme", "gamma"):
        reference = references[name]
        assert schema_tables(warehouse, f"platform_raw_{name}") == schema_tables(reference, "platform_raw")
        for mart in _tables(warehouse, MARTS):
            assert _mart_rows(warehouse, mart, name) == _mart_rows(reference, mart, "default"), (name, mart)


def _schemas(path: Path) -> set[str]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return {
            name
            for (name,) in connection.execute(
                "select schema_name from information_schema.schemata"
            ).fetchall()
        }


def _tables(path: Path, schema: str) -> list[str]:
    with duckdb.connect(str(path), read_only=True) as connection:
        rows = connection.execute(
            "select table_name from information_schema.tables where table_schema = ? "
            "and table_name not like '\\_%' escape '\\' order by 1",
            [schema],
        ).fetchall()
    return [name for (name,) in rows]


def _mart_rows(path: Path, mart: str, account: str) -> list[tuple[Any, ...]]:
    """The mart's rows of `account`, without the account column nor the build's stamps, sorted."""
    with duckdb.connect(str(path), read_only=True) as connection:
        columns = connection.execute(
            "select column_name from information_schema.columns where table_schema = ? and table_name = ? "
            "order by column_name",
            [MARTS, mart],
        ).fetchall()
        kept = [c for (c,) in columns if c != "account" and c not in BUILD_STAMPS]
        select = ", ".join(f'"{c}"' for c in kept)
        return connection.execute(
            f"select {select} from {MARTS}.{mart} where account = ? order by all", [account]
        ).fetchall()


def _raw_rows(path: Path, schema: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of `schema`, dlt's included, every column (load ids too), sorted."""
    with duckdb.connect(str(path), read_only=True) as connection:
        names = connection.execute(
            "select table_name from information_schema.tables where table_schema = ?", [schema]
        ).fetchall()
        return {
            table: connection.execute(f'select * from "{schema}"."{table}" order by all').fetchall()
            for (table,) in names
        }


def _first_buyer_email(path: Path, schema: str) -> str:
    with duckdb.connect(str(path), read_only=True) as connection:
        row = connection.execute(
            f"select min(buyer__email) from {schema}.sales where buyer__email is not null"
        ).fetchone()
    assert row is not None and row[0]
    return str(row[0])


def _count(path: Path, sql: str, *params: Any) -> int:
    with duckdb.connect(str(path), read_only=True) as connection:
        row = connection.execute(sql, list(params)).fetchone()
    assert row is not None
    return int(row[0])
