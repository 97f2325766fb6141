"""One dbt parse per test worker, read by every dbt run of its tests (issue 46).

A `dbt build` parses the whole project first (about 4.5 CPU-seconds of its 8 for the models alone) unless
it finds a saved parse made with the same profile connection, command-line vars and project environment
variables. `platform-sync models` runs dbt beside the DuckDB file with the file's name as the profile's path
(`pipelines/dbt/runner.py`), so every test warehouse named `warehouse.duckdb` has the same connection.
A worker of the suite points dbt's `DBT_PARTIAL_PARSE_FILE_PATH` at its file for the whole session
(`tests/conftest.py`) and makes it in the background as it starts. Until it is there, or where the
connection or the environment differ (other file names, the accounts' datasets), dbt parses in full as
before: its own check decides, so a stale or foreign parse is never used.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from pipelines.dbt.runner import DBT_PROFILES_DIR, DBT_PROJECT_DIR

WAREHOUSE_NAME = "warehouse.duckdb"  # the name most test warehouses have
_ENTRY_POINT = "import sys; from dbt.cli.main import cli; sys.exit(cli())"


def dbt_parse(
    target: Path, workdir: Path, duckdb_path: str = WAREHOUSE_NAME, raw_schema: str = "platform_raw"
) -> subprocess.CompletedProcess[str]:
    """`dbt parse` of the project into `target`, run in `workdir` as `platform-sync models` runs dbt on a
    DuckDB file at `duckdb_path` whose raw tables are in `raw_schema`; nothing of this process's dbt or
    platform-sync settings leaks in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLATFORM_SYNC_", "DBT_"))}
    env.update(
        PLATFORM_SYNC_DUCKDB_PATH=duckdb_path,
        PLATFORM_SYNC_RAW_SCHEMA=raw_schema,
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        DBT_LOG_PATH=str(workdir / "logs"),
    )
    command = [sys.executable, "-c", _ENTRY_POINT, "parse", "--project-dir", str(DBT_PROJECT_DIR)]
    command += ["--profiles-dir", str(DBT_PROFILES_DIR), "--target-path", str(target)]
    return subprocess.run(
        command, cwd=workdir, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def save_parse(destination: Path) -> None:
    """`dbt parse` as `platform-sync models` runs dbt on a DuckDB `warehouse.duckdb` of the dataset
    `platform_raw` without accounts; its partial parse file moved to `destination` in one step."""
    with tempfile.TemporaryDirectory(prefix="platform-sync-dbt-parse-") as folder:
        target = Path(folder) / "target"
        done = dbt_parse(target, Path(folder))
        saved = target / "partial_parse.msgpack"
        if done.returncode == 0 and saved.exists():
            os.replace(saved, destination)


def share_one_parse(destination: Path) -> threading.Thread:
    """Point this process's dbt runs (and its children's) at `destination`, and make it in the
    background. Until it is made, the file is empty: dbt fails to read it, says so at debug level, and
    parses in full (dbt refuses a `DBT_PARTIAL_PARSE_FILE_PATH` that does not exist)."""
    destination.write_bytes(b"")
    os.environ["DBT_PARTIAL_PARSE_FILE_PATH"] = str(destination)
    thread = threading.Thread(target=save_parse, args=(destination,), name="dbt-parse", daemon=True)
    thread.start()
    return thread
