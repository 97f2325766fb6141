"""dlt's own pipeline tools on the project's pipeline, as a dlt user runs them: the working folder is where
dlt keeps pipelines (`DLT_DATA_DIR`, here `tmp_path/.dlt` from tests/conftest.py), so plain
`dlt pipeline platform_sync info` finds it (issue 28)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb

from sandbox.running import running_sandbox
from tests.support.cli import cli_env, run_cli
from tests.support.sync_helpers import source_options

DLT = str(Path(sys.executable).with_name("dlt"))
PIPELINE = ["pipeline", "platform_sync"]


def dlt_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [DLT, "--non-interactive", *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def tables(database: Path) -> set[str]:
    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.execute(
            "select table_name from information_schema.tables where table_schema = 'platform_raw'"
        ).fetchall()
    return {row[0] for row in rows}


def test_info_trace_and_drop_work_from_the_project_folder(tmp_path):
    database = tmp_path / "warehouse.duckdb"
    args = ["sync", "--no-progress", "--resources", "products,transfers"]
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        # every full scan waits for rescan_hours, however cheap: the dropped table's is what is read
        options = source_options(sandbox, sandbox.token(), rate_limit_time_scale=600, scan_budget_share=0)
        env = cli_env(tmp_path, options)
        env["RUNTIME__DLTHUB_TELEMETRY"] = "false"
        assert run_cli(args, env, tmp_path).returncode == 0
        with duckdb.connect(str(database), read_only=True) as connection:
            transfers = connection.execute("select count(*) from platform_raw.transfers").fetchone()

        info = dlt_cli([*PIPELINE, "info"], env, tmp_path)
        assert info.returncode == 0, info.stdout + info.stderr
        assert "Found pipeline platform_sync in" in info.stdout
        assert "transfers" in info.stdout and "platform_raw" in info.stdout

        by_data_dir = dlt_cli(
            ["pipeline", "platform_sync", "info"], {**env, "DLT_DATA_DIR": ".dlt"}, tmp_path
        )
        assert "Found pipeline platform_sync in .dlt/pipelines" in by_data_dir.stdout, by_data_dir.stderr
        # without either, dlt looks in its per-user folder (kept out of the way here) and finds nothing
        elsewhere = {**env, "DLT_DATA_DIR": str(tmp_path / "nowhere")}
        untold = dlt_cli(["pipeline", "platform_sync", "info"], elsewhere, tmp_path)
        assert "No local pipeline state found" in untold.stdout + untold.stderr

        trace = dlt_cli([*PIPELINE, "trace"], env, tmp_path)
        assert trace.returncode == 0, trace.stdout + trace.stderr
        assert (
            "extract" in trace.stdout and "load" in trace.stdout and "platform_sync_runs" not in trace.stdout
        )

        drop = dlt_cli(["--yes", *PIPELINE, "drop", "transfers"], env, tmp_path)
        assert drop.returncode == 0, drop.stdout + drop.stderr
        assert "transfers" not in tables(database) and "products" in tables(database)

        # the next sync reads the dropped table again, though its full scan is not due by the clock
        again = run_cli(args, env, tmp_path)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "products: not due" in again.stdout and "transfers: not due" not in again.stdout
        with duckdb.connect(str(database), read_only=True) as connection:
            assert connection.execute("select count(*) from platform_raw.transfers").fetchone() == transfers
