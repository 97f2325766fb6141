"""`_platform_sync_runs`: one row per resource per run, with exact statuses, messages and requests."""

from __future__ import annotations

from typing import Any

import duckdb

from sandbox.running import running_sandbox
from sources.platform_client.operations import OPERATIONS
from tests.support.cli import cli_env, run_cli
from tests.support.sync_helpers import source_options

ARGS = ["sync", "--no-progress", "--resources", "products,transfers,subscriptions"]


def runs(database: str) -> list[tuple[object, ...]]:
    """The rows by run, the runs numbered in the order of their `run_started_at` (the sandbox's clock
    stands still between runs: each run's stamp is still later than the one before, `runclock.py`)."""
    with duckdb.connect(database, read_only=True) as connection:
        return connection.execute(
            "select dense_rank() over (order by run_started_at), resource, status, message, requests "
            "from platform_raw._platform_sync_runs order by run_started_at, resource"
        ).fetchall()


def requests_by_operation(stats: dict[str, Any]) -> dict[str, int]:
    """The sandbox counts answers per operation and status; the table counts requests per operation."""
    return {operation: sum(by_status.values()) for operation, by_status in stats["operations"].items()}


def test_each_run_appends_one_row_per_resource(tmp_path):
    database = str(tmp_path / "warehouse.duckdb")
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        transfers = next(op for op in OPERATIONS if op.name == "list_transfers")
        scopes = sorted({s for op in OPERATIONS for s in op.scopes} - set(transfers.scopes))
        # Every full scan waits for rescan_hours, however cheap (`not_due` rows)
        options = source_options(
            sandbox, sandbox.token(scopes), rate_limit_time_scale=600, scan_budget_share=0
        )

        sandbox.reset_stats()
        first = run_cli(ARGS, cli_env(tmp_path, options), tmp_path)
        assert first.returncode == 3, first.stdout + first.stderr
        first_requests = requests_by_operation(sandbox.stats())

        sandbox.reset_stats()
        options["access_token"] = sandbox.token()
        second = run_cli(ARGS, cli_env(tmp_path, options), tmp_path)
        assert second.returncode == 0, second.stdout + second.stderr
        second_requests = requests_by_operation(sandbox.stats())

        options["access_token"] = "revoked-or-mistyped"
        third = run_cli(ARGS, cli_env(tmp_path, options), tmp_path)
        assert third.returncode == 1, third.stdout + third.stderr

    with duckdb.connect(database, read_only=True) as connection:
        products, transfers_count, subscriptions = (
            connection.execute(f"select count(*) from platform_raw.{table}").fetchone()[0]  # type: ignore[index]
            for table in ("products", "transfers", "subscriptions")
        )
    rows = runs(database)
    assert [row[:3] for row in rows] == [
        (1, "products", "loaded"),
        (1, "subscriptions", "loaded"),
        (1, "transfers", "skipped"),
        (2, "products", "not_due"),
        (2, "subscriptions", "loaded"),
        (2, "transfers", "loaded"),
        (3, "products", "not_due"),
        (3, "subscriptions", "failed"),
        (3, "transfers", "failed"),  # its tail read (a list sent oldest first) asks with the token
    ]
    by_key = {(row[0], row[1]): row for row in rows}
    assert by_key[(1, "products")][3:] == (f"{products} rows", first_requests["list_products"])
    assert by_key[(1, "subscriptions")][4] == first_requests["list_subscriptions"] > 0
    assert by_key[(1, "transfers")][3].startswith("list_transfers needs the scope")
    assert by_key[(1, "transfers")][4] == first_requests["list_transfers"] == 1  # the 403 that told
    assert by_key[(2, "products")][3].startswith("last full scan ")
    assert by_key[(2, "products")][4] == 0 and "list_products" not in second_requests
    assert by_key[(2, "transfers")][3:] == (f"{transfers_count} rows", second_requests["list_transfers"])
    assert by_key[(2, "subscriptions")][4] == second_requests["list_subscriptions"]
    assert "access token was rejected" in by_key[(3, "subscriptions")][3]
    assert subscriptions > 0
    assert all("revoked-or-mistyped" not in str(row) for row in rows)
