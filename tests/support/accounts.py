"""Three sandbox worlds as three accounts of one project folder: `.dlt/config.toml` lists them, each
token is its own environment variable (ACCOUNTS__<NAME>__ACCESS_TOKEN)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import tomlkit

from sandbox.options import catalog_source_options
from sandbox.running import SandboxHandle
from tests.support.forked_command import run_command
from tests.support.warehouses import RUN_STAMPS

CLI = [sys.executable, "-m", "pipelines.cli"]
PROJECT_ROOT = Path(__file__).resolve().parents[2]
SCALE = 100
TIME_SCALE = 600.0
SEEDS = {"acme": 11, "beta": 12, "gamma": 13}


@dataclass
class World:
    name: str
    sandbox: SandboxHandle
    token: str

    def settings(self) -> dict[str, Any]:
        """The account's table of `.dlt/config.toml`: the sandbox's address and the ids of its world."""
        return {
            "base_url": self.sandbox.base_url,
            "start_date": "2020-01-01",
            **catalog_source_options(self.sandbox.catalog()),
            "rate_limit_time_scale": TIME_SCALE,
        }


def base_env(folder: Path) -> dict[str, str]:
    """The environment of a command run in `folder` as a project of its own: no inherited source or
    destination settings, dlt's data folder inside it."""
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION__", "ACCOUNTS__"))
    }
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    env["DLT_DATA_DIR"] = str(folder / ".dlt")
    env["DESTINATION__DUCKDB__CREDENTIALS"] = str(folder / "warehouse.duckdb")
    return env


def accounts_project(
    folder: Path, worlds: Mapping[str, World], tokens: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`folder/.dlt/config.toml` with an [accounts.<name>] table per world; the environment with each
    account's token (`tokens` overrides some)."""
    (folder / ".dlt").mkdir(parents=True, exist_ok=True)
    document = tomlkit.document()
    document["accounts"] = {name: world.settings() for name, world in worlds.items()}
    (folder / ".dlt" / "config.toml").write_text(tomlkit.dumps(document))
    env = base_env(folder)
    for name, world in worlds.items():
        env[f"ACCOUNTS__{name.upper()}__ACCESS_TOKEN"] = (tokens or {}).get(name, world.token)
    return env


def single_account_env(folder: Path, world: World) -> dict[str, str]:
    """Today's single-account setup of `world`: [sources.platform] from the environment."""
    import json

    folder.mkdir(parents=True, exist_ok=True)
    env = base_env(folder)
    for key, value in {**world.settings(), "access_token": world.token}.items():
        env[f"SOURCES__PLATFORM__{key.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_command(CLI, args, env, cwd, timeout=600)


def schema_tables(path: Path, schema: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every data table of `schema` (not dlt's nor the `_platform_*` run tables): its rows without dlt's
    row and load ids, nor the times that stamp a run (`RUN_STAMPS`), sorted."""
    stamps = RUN_STAMPS
    tables: dict[str, list[tuple[Any, ...]]] = {}
    with duckdb.connect(str(path), read_only=True) as connection:
        names = connection.execute(
            "select table_name from information_schema.tables where table_schema = ? "
            "and table_name not like '\\_%' escape '\\' order by table_name",
            [schema],
        ).fetchall()
        for (table,) in names:
            columns = connection.execute(
                "select column_name from information_schema.columns where table_schema = ? "
                "and table_name = ? order by column_name",
                [schema, table],
            ).fetchall()
            kept = [c for (c,) in columns if not c.startswith("_dlt_") and c not in stamps]
            select = ", ".join(f'"{c}"' for c in kept)
            tables[table] = connection.execute(
                f'select {select} from "{schema}"."{table}" order by all'
            ).fetchall()
    return tables
