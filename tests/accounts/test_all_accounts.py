"""`platform-sync sync --all-accounts`: three sandbox worlds as three accounts into one DuckDB file, each
account's raw tables equal to a single-account sync of its world; one account's wrong token fails it
alone."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.accounts.conftest import (
    SEEDS,
    World,
    accounts_project,
    run_cli,
    schema_tables,
    single_account_env,
)

pytestmark = pytest.mark.xdist_group("accounts")


@pytest.fixture(scope="module")
def references(worlds: dict[str, World], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    """Each world synced alone, as today's single account (dataset platform_raw)."""
    tables = {}
    for name, world in worlds.items():
        folder = tmp_path_factory.mktemp(f"single-{name}")
        result = run_cli(["sync", "--no-progress"], single_account_env(folder, world), folder)
        assert result.returncode == 0, result.stdout + result.stderr
        tables[name] = schema_tables(folder / "warehouse.duckdb", "platform_raw")
    return tables


def test_all_accounts_load_each_world_as_its_single_account_sync(worlds, references, tmp_path: Path):
    env = accounts_project(tmp_path, worlds)
    result = run_cli(["sync", "--all-accounts", "--no-progress"], env, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in SEEDS:
        assert f"\n{name:40} {0:>12}  loaded" in result.stdout
    assert "all 3 accounts loaded (exit status 0)." in result.stdout
    warehouse = tmp_path / "warehouse.duckdb"
    for name in SEEDS:
        loaded = schema_tables(warehouse, f"platform_raw_{name}")
        assert sorted(loaded) == sorted(references[name]), name
        for table, rows in references[name].items():
            assert loaded[table] == rows, f"{name}.{table}"
    assert "platform_raw" not in _schemas(warehouse)  # no account is the default one here


def test_a_wrong_token_fails_its_account_alone(worlds, references, tmp_path: Path):
    env = accounts_project(tmp_path, worlds, tokens={"beta": "not-a-token-of-this-world"})
    result = run_cli(["sync", "--all-accounts", "--accounts-at-once", "2", "--no-progress"], env, tmp_path)
    assert result.returncode == 3, result.stdout + result.stderr
    assert f"\n{'beta':40} {1:>12}  FAILED" in result.stdout
    assert f"\n{'acme':40} {0:>12}  loaded" in result.stdout
    assert f"\n{'gamma':40} {0:>12}  loaded" in result.stdout
    assert "account beta: FAILED: the access token was rejected" in result.stderr
    assert "ACCOUNTS__BETA__ACCESS_TOKEN" in result.stderr
    assert "Traceback" not in result.stderr
    warehouse = tmp_path / "warehouse.duckdb"
    for name in ("acme", "gamma"):
        assert schema_tables(warehouse, f"platform_raw_{name}") == references[name], name
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        outcomes = connection.execute(
            "select status, message from platform_raw_beta._platform_sync_runs"
        ).fetchall()
        data_tables = connection.execute(
            "select count(*) from information_schema.tables where table_schema = 'platform_raw_beta' "
            "and table_name not like '\\_%' escape '\\'"
        ).fetchone()
    # every resource failed, but sales, which reads the ids the others found: none (as for one account)
    assert {status for status, message in outcomes if message != "0 rows"} == {"failed"}
    assert ("loaded", "0 rows") in outcomes
    assert data_tables == (0,)


def _schemas(path: Path) -> set[str]:
    with duckdb.connect(str(path), read_only=True) as connection:
        return {
            name
            for (name,) in connection.execute(
                "select schema_name from information_schema.schemata"
            ).fetchall()
        }
