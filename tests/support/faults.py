"""The fault matrix (issue 15): one small world, synced once cleanly as the reference (per test worker),
and each cell a sync of the same world through a fault, then a clean rerun that must end exact."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dlt

from pipelines.sync.platform_pipeline import SyncResult, sync
from sandbox.running import SandboxHandle, running_sandbox
from tests.support.sync_helpers import source_options
from tests.support.warehouses import assert_exact

SEED, SCALE = 3, 100  # about 230 requests, 5 s per sync here (2026-11-27)
TIME_SCALE = 600.0  # rate-limit windows of 0.1 s


@dataclass(frozen=True)
class Reference:
    """The clean sync of the world: its warehouse and its requests per operation."""

    database: str
    requests: dict[str, int]


def world(time_scale: float = TIME_SCALE) -> Any:
    """The sandbox of the reference's world (the time scale changes no answer, only the rate limits)."""
    return running_sandbox(seed=SEED, scale=SCALE, time_scale=time_scale)


def pipeline_in(folder: Path, name: str = "platform_sync") -> dlt.Pipeline:
    return dlt.pipeline(
        pipeline_name=name,
        destination=dlt.destinations.duckdb(str(folder / "warehouse.duckdb")),
        dataset_name="platform_raw",
        pipelines_dir=str(folder / "pipelines"),
    )


def database_of(pipeline: dlt.Pipeline) -> str:
    return str(pipeline.destination_client().config.credentials.database)  # type: ignore[attr-defined]


def run(
    pipeline: dlt.Pipeline, handle: SandboxHandle, token: str | None = None, **options: Any
) -> SyncResult:
    resources = options.pop("resources", None)
    return sync(
        pipeline, resources, source_options=source_options(handle, token or handle.token(), **options)
    )


def rerun_clean(pipeline: dlt.Pipeline, handle: SandboxHandle, reference: Reference) -> SyncResult:
    """Faults off, a fresh token, every resource: the warehouse must then equal the reference."""
    handle.set_faults(None)
    result = run(pipeline, handle)
    assert result.report.failed == {} and result.report.skipped == {}, result.report.failed
    assert_exact(database_of(pipeline), reference.database)
    return result
