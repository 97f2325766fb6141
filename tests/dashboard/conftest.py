"""A small sandbox world synced into DuckDB with its models built, and `platform-sync dashboard` serving it
from a subprocess on a free loopback port (a process of its own, as when a person runs it beside a
scheduled sync)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt
import duckdb
import httpx
import pytest

from pipelines.dbt.runner import run_models
from pipelines.sync.platform_pipeline import sync
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from sandbox.running import SandboxHandle, running_sandbox
from tests.support.sync_helpers import source_options
from tests.support.warehouses import MODELS_ONLY

SEED, SCALE = 2, 300  # ~170 sales, every mart filled; sync and dbt build take ~15 s
DRIFT = 0.02  # an API that departs from its spec now and then, as the real one does: Data health shows it
TIME_SCALE = 600.0
CONSOLE_SCRIPT = Path(sys.executable).parent / "platform-sync"


@dataclass
class World:
    folder: Path
    database: Path
    pipeline: dlt.Pipeline
    sandbox: SandboxHandle

    def sync_and_build(self) -> Any:
        """Sync the sandbox again (what a scheduled `platform-sync sync` does), then `dbt build`."""
        started_at = run_started_at()
        synced = sync(self.pipeline, source_options=source_options(self.sandbox, self.sandbox.token()))
        outcomes = outcome_rows(synced, None, started_at)
        record_run(self.pipeline, outcomes, synced.freshness, synced.coverage, synced.retired)
        built = run_models(
            self.pipeline, "build", extra_args=MODELS_ONLY, target_path=self.folder / "target", echo=False
        )
        return synced, built

    def rows(self, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """The marts as SQL sees them, on a short read-only connection, with UTC days as the models."""
        with duckdb.connect(str(self.database), read_only=True) as connection:
            connection.execute("set TimeZone = 'UTC'")
            return connection.execute(sql, params or []).fetchall()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("dashboard-world")
    database = folder / "platform_sync.duckdb"
    pipeline = dlt.pipeline(
        pipeline_name="platform_sync",
        destination=dlt.destinations.duckdb(str(database)),
        dataset_name="platform_raw",
        pipelines_dir=str(folder / "pipelines"),
    )
    with running_sandbox(seed=SEED, scale=SCALE, time_scale=TIME_SCALE, drift=DRIFT) as sandbox:
        world = World(folder, database, pipeline, sandbox)
        # Two scheduled runs three days apart (of the world's clock): the builds see lesson comments
        # answered in between (an observed response time) and keep the subscriptions' price versions.
        for days in (0, 3):
            sandbox.advance(days * 86400)
            synced, built = world.sync_and_build()
            assert not synced.report.failed
            assert built.success, built.output[-3000:]
        yield world


@dataclass
class Dashboard:
    url: str
    process: subprocess.Popen[str]
    log: Path


def start_dashboard(database: Path, folder: Path) -> Dashboard:
    """`platform-sync dashboard` on a free port, reading `database` as dlt's configured DuckDB file."""
    port = _free_port()
    log = folder / f"dashboard-{port}.log"
    env = {**os.environ, "DESTINATION__DUCKDB__CREDENTIALS": str(database)}
    process = subprocess.Popen(
        [str(CONSOLE_SCRIPT), "dashboard", "--host", "127.0.0.1", "--port", str(port)],
        cwd=folder,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the dashboard exited: {log.read_text()[-3000:]}")
        try:
            if httpx.get(url + "/", timeout=2).status_code == 200:
                return Dashboard(url, process, log)
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    process.kill()
    raise RuntimeError(f"the dashboard did not answer in 60 s: {log.read_text()[-3000:]}")


@pytest.fixture(scope="module")
def dashboard(world: World) -> Iterator[Dashboard]:
    served = start_dashboard(world.database, world.folder)
    try:
        yield served
    finally:
        served.process.terminate()
        served.process.wait(timeout=30)


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go: PLATFORM_SYNC_SCREENSHOTS if set (e.g. docs/), else the tests' tmp dir."""
    chosen = os.environ.get("PLATFORM_SYNC_SCREENSHOTS")
    folder = Path(chosen) if chosen else tmp_path_factory.mktemp("dashboard-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    print(f"\ndashboard screenshots in {folder}")
    return folder


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
