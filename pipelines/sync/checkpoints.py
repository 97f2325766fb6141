"""Durable progress (issue 48): a long run loads what it has at checkpoints, so a kill loses one at most.

Sale details are the long part of a run (one request per sale, 30 a minute). The run is split into
passes, each one `pipeline.run` with its own load and state commit: the first pass runs the selected
resources as one run did, with its sale details cut at `checkpoint_requests`; then passes of `sales`
alone go on with what the first left pending (the warehouse is the sales ledger, `store_sale_ids.py`),
`checkpoint_requests` each, until the run's budget of sale details (`run_budget.py`) is spent or
nothing is left to fetch.
The passes share the run's `RunReport` and, through it, `SalePasses`: a later pass does not request what
an earlier one did, and the run's budget and re-verification share are the run's, not each pass's.

A kill at any moment loses at most the pass that runs (its extract commits nothing; a package being
loaded is finished by the next run, `finish_pending_packages`); the next run goes on from the state the
last finished pass committed. `checkpoint_requests = 0` runs the whole run in one pass, as before.

The setting: `checkpoint_requests` under `[sync]` in .dlt/config.toml, or `SYNC__CHECKPOINT_REQUESTS`.
Unset, a pass is `DEFAULT_CHECKPOINT_REQUESTS` sale details, or as many as the sale details' rate limit
allows in a minute when that is more (issue 45: at limits raised for an account, or scaled in a test
world, passes of 150 would stop the details for a load every few seconds; a minute of requests keeps the
loads a small share of the run, and a kill still loses at most a minute of them).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dlt
from dlt.common.pipeline import LoadInfo
from dlt.extract import DltSource

from pipelines.sync.load_memory import run_within_memory
from sources.platform.report import RunReport, SalePasses
from sources.platform.run_budget import waiting_line
from sources.platform_client.errors import ConfigurationError

logger = logging.getLogger("platform_sync.pipeline")

CHECKPOINT_SETTING = "sync.checkpoint_requests"
# Sale details per pass: five minutes at the API's 30 a minute (unset: at least a minute at the limit).
DEFAULT_CHECKPOINT_REQUESTS = 150
SALES = "sales"


def checkpoint_requests(value: Any = None) -> int | None:
    """The configured checkpoint (`value`, else `[sync] checkpoint_requests`): a whole number of sale
    details, 0 for none, None when unset (the default: `Checkpoints.of`); a ConfigurationError in one
    line on anything else."""
    if value is None:
        value = dlt.config.get(CHECKPOINT_SETTING)
    if value is None:
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        number = -1
    if number < 0 or isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ConfigurationError(
            f"checkpoint_requests must be a whole number of sale details (0: no checkpoints), not {value!r}"
        )
    return number


@dataclass
class Checkpoint:
    """One finished pass: its load, the rows it loaded per table, its sale details."""

    load_id: str | None
    rows: dict[str, int]
    sale_details: int
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class Checkpoints:
    """The passes of a run that finished (loaded, their state committed): what a kill would keep."""

    size: int  # sale details per pass; 0: one pass
    kept: list[Checkpoint] = field(default_factory=list)
    # the size is the default: a pass is at least a minute of sale details at their rate limit
    at_least_a_minute: bool = False

    @classmethod
    def of(cls, configured: int | None) -> Checkpoints:
        """The checkpoints of a configured size (`checkpoint_requests`), or of the default's."""
        if configured is None:
            return cls(DEFAULT_CHECKPOINT_REQUESTS, at_least_a_minute=True)
        return cls(configured)

    @property
    def rows(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for checkpoint in self.kept:
            for table, count in checkpoint.rows.items():
                total[table] = total.get(table, 0) + count
        return dict(sorted(total.items()))

    @property
    def seconds(self) -> dict[str, float]:
        total: dict[str, float] = {}
        for checkpoint in self.kept:
            for step, seconds in checkpoint.seconds.items():
                total[step] = total.get(step, 0.0) + seconds
        return total

    @property
    def sale_details(self) -> int:
        return sum(checkpoint.sale_details for checkpoint in self.kept)

    def kept_line(self) -> str:
        """What the finished checkpoints kept, for an interrupted run's summary."""
        count = len(self.kept)
        if not count:
            return "checkpoints kept: none (the run was interrupted in its first pass)"
        rows = sum(self.rows.values())
        return (
            f"checkpoints kept: {count} ({rows:,} rows loaded, {self.sale_details:,} sale details); "
            "the next run goes on from the last one"
        )


def run_in_passes(
    pipeline: dlt.Pipeline,
    make_source: Callable[[bool], DltSource],
    report: RunReport,
    checkpoints: Checkpoints,
    after_pass: Callable[[], None],
    run_options: dict[str, Any],
) -> LoadInfo | None:
    """Run the first pass (`make_source(True)`: the selected resources), then passes of `sales` alone
    (`make_source(False)`) while the run has sale details left to fetch; `after_pass` after each load.
    The last pass's load info."""
    passes = SalePasses(checkpoints.size, checkpoints.at_least_a_minute) if checkpoints.size > 0 else None
    report.sale_passes = passes
    options = dict(run_options)
    load_info = _one_pass(pipeline, make_source(True), passes, checkpoints, after_pass, options)
    options.pop("refresh", None)  # a full refresh drops the tables once, before the first pass
    while passes is not None and _another_pass(passes, report):
        load_info = _one_pass(pipeline, make_source(False), passes, checkpoints, after_pass, options)
    if passes is not None and passes.waiting:
        budget = report.sale_details_pace.max_requests_per_run if report.sale_details_pace else 0
        report.warn(waiting_line(passes.waiting, budget))
    return load_info


def _one_pass(
    pipeline: dlt.Pipeline,
    source: DltSource,
    passes: SalePasses | None,
    checkpoints: Checkpoints,
    after_pass: Callable[[], None],
    options: dict[str, Any],
) -> LoadInfo | None:
    spent = passes.spent if passes is not None else 0
    if passes is not None:
        passes.last = None
    load_info = run_within_memory(pipeline, source, **options)
    load_ids = list(load_info.loads_ids) if load_info is not None else []
    details = (passes.spent - spent) if passes is not None else 0
    checkpoint = Checkpoint(
        load_ids[-1] if load_ids else None, pass_rows(pipeline), details, step_seconds(pipeline)
    )
    checkpoints.kept.append(checkpoint)  # loaded with its state: kept, whatever comes next
    after_pass()
    if passes is not None:
        logger.info("checkpoint %d loaded: %d sale details", len(checkpoints.kept), details)
    return load_info


def _another_pass(passes: SalePasses, report: RunReport) -> bool:
    """Whether the run has sale details left: the last pass was cut by its checkpoint and the run's budget
    has some left, or the re-verification cycle took its whole share of the pass and has more in the
    run's (then a pass for the cycle alone)."""
    if passes.last is None or SALES in report.failed or SALES in report.skipped:
        return False
    budget, spent, reserve, reverified = passes.last
    run_budget = report.sale_details_pace.max_requests_per_run if report.sale_details_pace else 0
    if spent == 0 or passes.spent >= run_budget:
        return False
    if spent >= budget:
        passes.cycle_only = False
        return True
    cycle = report.sales_cycle
    cycle_left = (cycle.per_run - passes.reverified) if cycle is not None else 0
    if reserve > 0 and reverified >= reserve and cycle_left > 0:
        passes.cycle_only = True
        return True
    return False


def pass_rows(pipeline: dlt.Pipeline) -> dict[str, int]:
    """The data rows the last `pipeline.run` normalized, per table."""
    trace = pipeline.last_trace
    info = trace.last_normalize_info if trace else None
    if info is None:
        return {}
    return {table: count for table, count in sorted(info.row_counts.items()) if not table.startswith("_dlt")}


def step_seconds(pipeline: dlt.Pipeline) -> dict[str, float]:
    """Seconds of the last `pipeline.run`'s extract, normalize and load."""
    trace = pipeline.last_trace
    if trace is None:
        return {}
    steps: dict[str, float] = {}
    for step in trace.steps:
        if step.step in ("extract", "normalize", "load") and step.finished_at and step.started_at:
            steps[step.step] = (step.finished_at - step.started_at).total_seconds()
    return steps
