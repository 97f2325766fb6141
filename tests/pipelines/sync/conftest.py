"""Fixtures of the whole-sync tests: a sandbox of the e2e world and a DuckDB pipeline in the test's folder
(formerly tests/e2e), and one throwaway PostgreSQL server per test session (per xdist worker; the
PostgreSQL destination's tests share an xdist group, so one worker runs them all and starts it once;
formerly tests/postgres). The fault matrix (faults/) has its own `sandbox` and `reference`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dlt
import pytest

from sandbox.running import SandboxHandle, running_sandbox
from tests.support.postgres_server import PostgresServer, running_postgres
from tests.support.sync_helpers import E2E_SCALE, E2E_TIME_SCALE


@pytest.fixture
def sandbox() -> Iterator[SandboxHandle]:
    with running_sandbox(seed=3, scale=E2E_SCALE, time_scale=E2E_TIME_SCALE) as handle:
        yield handle


@pytest.fixture
def make_pipeline(tmp_path: Path):  # type: ignore[no-untyped-def]
    def factory(name: str = "platform_sync") -> dlt.Pipeline:
        return dlt.pipeline(
            pipeline_name=name,
            destination=dlt.destinations.duckdb(str(tmp_path / "warehouse.duckdb")),
            dataset_name="platform_raw",
            pipelines_dir=str(tmp_path / "pipelines"),
        )

    return factory


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server
