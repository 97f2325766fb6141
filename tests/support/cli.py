"""The real command as a scheduler runs it: `.venv/bin/platform-sync` in a subprocess, config from the
environment, against a small sandbox on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.forked_command import run_command

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The installed console script, as cron or a workflow runs it (same virtualenv as the tests).
PLATFORM_SYNC = str(Path(sys.executable).with_name("platform-sync"))


def cli_env(tmp_path: Path, options: dict[str, object], database: Path | None = None) -> dict[str, str]:
    """The environment of a run: no inherited platform or destination settings, the warehouse in
    `tmp_path` (or `database`), the source's options as SOURCES__PLATFORM__* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION__"))}
    env["DESTINATION__DUCKDB__CREDENTIALS"] = str(database or tmp_path / "warehouse.duckdb")
    for key, value in options.items():
        env[f"SOURCES__PLATFORM__{key.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env


def in_folder(env: dict[str, str], folder: Path) -> dict[str, str]:
    """`env` for a command run from `folder` as from a project of its own: dlt's data folder (the
    pipelines' working folders, pipelines/sync/working_folder.py) in `folder/.dlt`. (tests/conftest.py gives
    each test one, `tmp_path/.dlt`, which the commands run from `tmp_path` use.)"""
    return {**env, "DLT_DATA_DIR": str(folder / ".dlt")}


def run_cli(
    args: list[str], env: dict[str, str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`platform-sync ARGS` run to its end, forked from a process that has imported it
    (`tests/support/forked_command.py`)."""
    return run_command([PLATFORM_SYNC], args, env, cwd, timeout)
