"""What a benchmark ran on, for the head of its figures: package versions, commit, DuckDB's memory limit.

Absolute times mean little without them: a report names the versions and commit it measured, and whether
the code under test changed while it ran.
"""

from __future__ import annotations

import subprocess
from typing import Any

from bench import harness


def duckdb_memory_limit() -> str:
    """The memory limit `make_pipeline` sets for DuckDB (a configured `global_config` would override it)."""
    from pipelines.sync.platform_pipeline import DUCKDB_LOAD_SETTINGS

    return str(DUCKDB_LOAD_SETTINGS["memory_limit"])


def versions() -> dict[str, str]:
    """Installed versions of the packages the figures depend on ("-" when one is missing)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for package in ("dlt", "duckdb", "pyarrow", "httpx", "pydantic", "dbt-core", "dbt-duckdb", "requests"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "-"
    return found


def git_state() -> dict[str, Any]:
    """The commit, and whether sources/, pipelines/ or sandbox/ differ from it (read at start and at end)."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", *args],
            cwd=harness.ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--", "sources", "pipelines", "sandbox")),
    }
