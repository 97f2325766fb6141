"""The soak: many simulated days of scheduled syncs against the unruly world, then a fresh full sync.

`run_soak(settings, work)` serves the unruly sandbox world (docs/contracts.md part 2) in a process of its
own, syncs it into one DuckDB once a simulated day (`days` advances of 24 h, a run before the first and
after each), and then syncs the final world from scratch into another DuckDB with an unbounded sale
budget: the reference. `bench.soak_compare.divergence` compares the two. With `full_refresh=True` every
scheduled run re-reads everything instead (the contender of the benchmark's soak section).

The schedule's settings are the source's own (docs/contracts.md part 3): a small `sales_max_requests`
and a `sales_reverify_share`, so that the re-verification cycle is a few runs long and shows. A day
passes between runs, more than any `rescan_hours`, so every run is told to `rescan` (our clock does not
move with the world's). The ids the API cannot list are configured from the catalog before each run, as
a user adds new events; the sale ids of the world at its start are configured too (a user's own order
list), so that sales found by no other channel are known.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import dlt

from pipelines.sync.platform_pipeline import sync
from sandbox.options import catalog_source_options
from sandbox.running import SandboxHandle, running_sandbox_process
from sandbox.world.sales import SALE_BASE

DAY = 86400.0
UNBOUNDED = 1_000_000  # the reference's sale budget: every discovered sale in one run


@dataclass(frozen=True)
class SoakSettings:
    seed: int = 5
    scale: int = 300
    days: int = 20  # the unruly world's moves all fall in its first 20 days
    sales_max_requests: int = 100
    sales_reverify_share: float = 0.5
    time_scale: float = 600.0  # rate-limit windows of 0.1 s: the limits bind, the runs stay quick
    full_refresh: bool = False

    @property
    def reverify_per_run(self) -> int:
        """Sales re-verified by the cycle each run (docs/contracts.md part 3, `sales_reverify_share`)."""
        return math.ceil(self.sales_reverify_share * self.sales_max_requests)

    def cycle_runs(self, known_sales: int) -> int:
        """Runs within which every known sale is fetched again, as the settings promise."""
        return math.ceil(known_sales / self.reverify_per_run)


@dataclass
class SoakRun:
    clock: str  # the world's clock at the run (ISO 8601)
    requests: int
    by_operation: dict[str, int]
    rows: dict[str, int]
    failed: dict[str, str]
    skipped: dict[str, str]
    partial: bool


@dataclass
class SoakResult:
    settings: SoakSettings
    scheduled: str  # DuckDB path
    reference: str  # DuckDB path
    runs: list[SoakRun] = field(default_factory=list)
    reference_requests: int = 0

    def figures(self) -> dict[str, Any]:
        return {
            "settings": asdict(self.settings),
            "runs": [asdict(run) for run in self.runs],
            "reference_requests": self.reference_requests,
        }


def soak_options(
    handle: SandboxHandle, token: str, settings: SoakSettings, **overrides: Any
) -> dict[str, Any]:
    """The source options of a scheduled run (the catalog read now)."""
    return {
        "base_url": handle.base_url,
        "access_token": token,
        "start_date": "2020-01-01",
        # lesson comments as one whole list: only then can a deleted one be marked (contracts part 3)
        **catalog_source_options(handle.catalog(), by_course=False),
        "sale_ids": [str(SALE_BASE + i) for i in range(settings.scale)],
        "rate_limit_time_scale": settings.time_scale,
        "sales_max_requests": settings.sales_max_requests,
        "sales_reverify_share": settings.sales_reverify_share,
        **overrides,
    }


def _pipeline(path: Path, name: str) -> dlt.Pipeline:
    return dlt.pipeline(
        pipeline_name=name,
        destination=dlt.destinations.duckdb(str(path)),
        dataset_name="platform_raw",
        pipelines_dir=str(path.parent / f"{name}-pipelines"),
    )


def _run(handle: SandboxHandle, pipeline: dlt.Pipeline, options: dict[str, Any], full: bool) -> SoakRun:
    clock = handle.catalog()["clock"]
    handle.reset_stats()
    result = sync(pipeline, full_refresh=full, source_options=options)
    stats = handle.stats()
    operations = {name: sum(answers.values()) for name, answers in stats["operations"].items()}
    report = result.report
    return SoakRun(
        clock=clock,
        requests=sum(n for name, n in operations.items() if name != "token_exchange"),
        by_operation=operations,
        rows=dict(result.rows),
        failed={k: str(v) for k, v in report.failed.items()},
        skipped={k: str(v) for k, v in report.skipped.items()},
        partial=bool(result.is_partial),
    )


def run_soak(settings: SoakSettings, work: Path, log: Any = None) -> SoakResult:
    """The scheduled runs and the reference sync; `log(text)` hears of each run."""
    work.mkdir(parents=True, exist_ok=True)
    result = SoakResult(settings, str(work / "scheduled.duckdb"), str(work / "reference.duckdb"))
    with running_sandbox_process(
        seed=settings.seed, scale=settings.scale, time_scale=settings.time_scale, unruly=True
    ) as handle:
        token = handle.token()
        scheduled = _pipeline(Path(result.scheduled), "soak_scheduled")
        for day in range(settings.days + 1):
            if day:
                handle.advance(DAY)
            options = soak_options(handle, token, settings, rescan=True)
            run = _run(handle, scheduled, options, settings.full_refresh and day > 0)
            result.runs.append(run)
            if log is not None:
                log(f"soak day {day}: {run.requests} requests, failed {sorted(run.failed) or 'none'}")
        reference = _pipeline(Path(result.reference), "soak_reference")
        options = soak_options(handle, token, settings, sales_max_requests=UNBOUNDED)
        result.reference_requests = _run(handle, reference, options, False).requests
    return result
