"""Three accounts into one PostgreSQL warehouse with `--all-accounts` (each account's dataset has its own
lock there), then `platform-sync models` once: every model test passes within each account, and each
account's sales in the marts are its raw sales."""

from __future__ import annotations

from pathlib import Path

import psycopg2
import pytest

from tests.support.accounts import SEEDS, World, accounts_project, run_cli
from tests.support.postgres_server import running_postgres

pytestmark = [pytest.mark.xdist_group("accounts"), pytest.mark.timeout(900)]


def test_all_accounts_into_postgres_and_the_models_over_them(worlds: dict[str, World], tmp_path: Path):
    with running_postgres() as server:
        database = server.create_database("accounts_warehouse")
        env = {
            **accounts_project(tmp_path, worlds),
            "DESTINATION__POSTGRES__CREDENTIALS": server.credentials(database),
            "DBT_TARGET_PATH": str(tmp_path / "target"),
        }
        synced = run_cli(
            ["sync", "--all-accounts", "--destination", "postgres", "--no-progress"], env, tmp_path
        )
        assert synced.returncode == 0, synced.stdout + synced.stderr
        assert "all 3 accounts loaded (exit status 0)." in synced.stdout
        built = run_cli(["models", "--destination", "postgres"], env, tmp_path)
        assert built.returncode == 0, built.stdout[-4000:] + built.stderr
        connection = psycopg2.connect(
            host=server.host, port=server.port, user=server.user, password=server.password, dbname=database
        )
        try:
            with connection.cursor() as cursor:
                raw = {}
                for name in SEEDS:
                    cursor.execute(f"select count(*), count(distinct id) from platform_raw_{name}.sales")
                    raw[name] = cursor.fetchone()
                cursor.execute(
                    "select account, count(*), count(distinct sale_id) from marts.fct_sales group by 1"
                )
                marts = {account: (count, distinct) for account, count, distinct in cursor.fetchall()}
        finally:
            connection.close()
    assert sorted(marts) == sorted(SEEDS)
    for name in SEEDS:
        assert raw[name][0] > 0 and raw[name][0] == raw[name][1], name
        assert marts[name] == raw[name], name
