"""The runnable pipeline: the `platform` source into a dlt destination (DuckDB by default)."""

from __future__ import annotations

import datetime as dt
import importlib.util
import logging
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dlt
from dlt.common.pipeline import LoadInfo
from dlt.common.runtime.collector import Collector
from dlt.destinations.impl.duckdb.configuration import DuckDbCredentials

from pipelines.sync.checkpoints import Checkpoints, checkpoint_requests, run_in_passes
from pipelines.sync.coverage import sales_coverage, sales_verification
from pipelines.sync.defaults import set_value
from pipelines.sync.deletions import deletion_time, mark_deletions
from pipelines.sync.load_failure import transactional_loads
from pipelines.sync.load_memory import run_within_memory
from pipelines.sync.memory import bound_writer_buffers, releasing_memory
from pipelines.sync.orphans import remove_orphans
from pipelines.sync.parallelism import parallel_normalize
from pipelines.sync.privacy_guard import check_privacy
from pipelines.sync.progress import SyncProgress
from pipelines.sync.root_keys import add_root_keys
from pipelines.sync.run_client import RunClient
from pipelines.sync.run_history import recent_run_starts
from pipelines.sync.state_check import follow_the_warehouse
from pipelines.sync.working_folder import (
    adopt_legacy_folder,
    claim,
    claimed_by,
    folder_of_its_own,
    pipelines_dir_for,
    set_aside_damaged_state,
    warehouse_place,
)
from sources.platform import RunReport, platform_source
from sources.platform.departures import load_tables_as
from sources.platform.freshness import table_freshness
from sources.platform.resources import STREAMS
from sources.platform.retired import all_retired_rows
from sources.platform_client.errors import ConfigurationError

logger = logging.getLogger("platform_sync.pipeline")

PIPELINE_NAME = "platform_sync"
DATASET_NAME = "platform_raw"
DEFAULT_DESTINATION = "duckdb"
# Beyond its memory limit DuckDB spills to a temporary folder next to the database; without insertion
# order it loads large files in bounded memory. 128MB keeps the load step's peak well below 256MB's in
# about the same time (bench/README.md).
DUCKDB_LOAD_SETTINGS: dict[str, Any] = {"memory_limit": "128MB", "preserve_insertion_order": False}


@dataclass
class SyncResult:
    """What one sync did: rows per table, requests per operation, time per step, what went wrong."""

    load_info: LoadInfo | None
    rows: dict[str, int]
    requests: dict[str, int]
    seconds: dict[str, float]
    report: RunReport
    extra: dict[str, Any] = field(default_factory=dict)
    # One row per resource of the run: how fresh its table is (`sources/platform/freshness.py`).
    freshness: list[dict[str, Any]] = field(default_factory=list)
    # One row per channel that names sales (`coverage.py`), and the ids retired so far (`retired.py`: the
    # rows of `_platform_retired_ids`, which the sync's own load writes, and those the state holds).
    coverage: list[dict[str, Any]] = field(default_factory=list)
    retired: list[dict[str, Any]] = field(default_factory=list)
    # Rows newly marked deleted per table (`deletions.py`).
    deleted: dict[str, int] = field(default_factory=dict)

    @property
    def is_partial(self) -> bool:
        return self.report.is_partial


def make_pipeline(
    destination: str = DEFAULT_DESTINATION,
    dataset_name: str = DATASET_NAME,
    pipelines_dir: str | Path | None = None,
    progress: bool | Collector = False,
    pipeline_name: str = PIPELINE_NAME,
) -> dlt.Pipeline:
    """The pipeline, with its working folder where dlt keeps pipelines (`pipelines_dir`, `DLT_DATA_DIR`,
    `~/.dlt/pipelines`: `pipelines/sync/working_folder.py`), one per destination and dataset; a working
    folder that an earlier version kept in `./.dlt/pipelines` is moved there first.

    With DuckDB and no credentials configured, the file is `platform_sync.duckdb` in the folder the
    command runs from (where `.dlt/` is read), and a relative path configured is taken from that folder
    too (`_bounded_duckdb`): never from the folder a machine-wide working folder was first used from.

    `progress`: a collector (the command line's `SyncProgress`), or True for dlt's own log lines.
    `pipeline_name`: another pipeline of the same warehouse (an account's, `pipelines/accounts/`): its
    own working folder and state, the same DuckDB file `platform_sync.duckdb` unless one is configured.
    """
    display: Collector | None
    if isinstance(progress, Collector):
        display = progress
    else:
        # memory figures need psutil, which the lean install (`pip install platform-sync`) leaves out
        stats = importlib.util.find_spec("psutil") is not None
        log = dlt.progress.log(log_period=5, logger=sys.stderr, dump_system_stats=stats)
        display = log if progress else None
    options: dict[str, Any] = {
        "pipelines_dir": str(pipelines_dir or working_folder(destination, dataset_name, pipeline_name)),
        "progress": releasing_memory(display),
    }
    target: Any = _bounded_duckdb() if destination == "duckdb" else destination
    set_aside_damaged_state(Path(options["pipelines_dir"]), pipeline_name)
    pipeline = dlt.pipeline(
        pipeline_name=pipeline_name, destination=target, dataset_name=dataset_name, **options
    )
    place = warehouse_place(pipeline)
    owner = claimed_by(pipeline)
    if place is None or owner is None or owner == place:
        return pipeline
    # the folder holds another warehouse's state: its cursors would skip this one's data
    own = folder_of_its_own(pipeline, place)
    # Said as a warning when the folder is made, then at info level: a second checkout's every command
    # repeated it (issue 51). It names dlt's command that shows this warehouse's pipeline.
    logger.log(
        logging.INFO if (own / pipeline_name).exists() else logging.WARNING,
        "the working folder %s holds the state of another warehouse (%s): this one (%s) uses %s "
        "(dlt's tools: `dlt pipeline --pipelines-dir %s %s info`)",
        pipeline.working_dir,
        owner,
        place,
        own / pipeline_name,
        own,
        pipeline_name,
    )
    options["pipelines_dir"] = str(own)
    set_aside_damaged_state(own, pipeline_name)
    return dlt.pipeline(pipeline_name=pipeline_name, destination=target, dataset_name=dataset_name, **options)


def working_folder(
    destination: str = DEFAULT_DESTINATION,
    dataset_name: str = DATASET_NAME,
    pipeline_name: str = PIPELINE_NAME,
) -> Path:
    """The `pipelines_dir` of the pipeline into `destination`/`dataset_name`, with an earlier version's
    `./.dlt/pipelines` working folder moved into it (`pipelines/sync/working_folder.py`). An account's
    pipeline (`pipeline_name`) has dlt's folder for the dataset named after it, and no legacy folder."""
    if pipeline_name != PIPELINE_NAME:  # one dataset per account's pipeline: the destination decides
        own = (DEFAULT_DESTINATION, dataset_name)
        return pipelines_dir_for(pipeline_name, destination, dataset_name, own)
    folder = pipelines_dir_for(PIPELINE_NAME, destination, dataset_name, (DEFAULT_DESTINATION, DATASET_NAME))
    adopt_legacy_folder(PIPELINE_NAME, folder, destination, dataset_name)
    return folder


# The longest table or column name dlt makes on DuckDB (longer ones it shortens with a hash, as it does on
# PostgreSQL at 63): a table's name is also the name of its files in dlt's load packages, which most file
# systems cut at 255 bytes. DuckDB's own limit (65,536) let a record's 300-character key holding a list
# make a child table whose file could not be written, and the normalize of the whole run failed. Our
# longest names today: 52 characters.
MAX_IDENTIFIER_LENGTH = 200


def _bounded_duckdb() -> Any:
    """DuckDB into the run folder's own file, with `DUCKDB_LOAD_SETTINGS` under whatever `global_config`
    the user configured.

    The file: the database configured as usual (`destination.duckdb.credentials`: a path or `duckdb:///`
    string, or its fields, in config.toml, secrets.toml or the environment), else `platform_sync.duckdb`.
    A relative path, and the default, are taken from dlt's run folder (where `.dlt/` is read: the folder
    the command runs from), passed as the destination's `local_dir`. Without it dlt takes them from the
    folder a working folder was *first* used from (its state's `initial_cwd`), and with the working
    folder in dlt's machine-wide `pipelines_dir` (`working_folder.py`) a second checkout on the same
    machine would load into the first one's file, or fail on it once that checkout is deleted. The
    default is named after the sync's pipeline (`pipeline_name`), so an account's pipeline
    (`pipelines/accounts/`) shares the file: dlt would name one after each.

    DuckDB keeps what it loads cached up to its memory limit, 80% of the machine's memory by default:
    the sync's memory would grow with the data.
    """
    configured: Any = dlt.config.get("destination.duckdb.credentials")
    # a string is parsed here (a credentials instance takes no string from config); fields resolve as usual
    credentials = DuckDbCredentials(configured) if isinstance(configured, str) else DuckDbCredentials()
    settings: dict[str, Any] = (
        dlt.config.get("destination.duckdb.credentials.global_config", expected_type=dict) or {}
    )
    credentials.global_config = {**DUCKDB_LOAD_SETTINGS, **settings}
    # One load job at a time: DuckDB runs them in this process under one memory limit, where parallel
    # jobs only compete for it (and fail with out-of-memory errors that dlt then retries).
    return dlt.destinations.duckdb(
        credentials=credentials,
        max_parallel_load_jobs=1,
        max_identifier_length=MAX_IDENTIFIER_LENGTH,
        local_dir=os.path.abspath(dlt.current.run_context().local_dir),
        pipeline_name=PIPELINE_NAME,
    )


def check_resource_names(names: Sequence[str]) -> list[str]:
    """Fail before any request on a resource name that does not exist, listing the valid ones."""
    unknown = [name for name in names if name not in STREAMS]
    if unknown:
        raise ConfigurationError(
            f"unknown resource(s) {', '.join(unknown)}; the resources are: {', '.join(STREAMS)}"
        )
    return list(names)


def sync(
    pipeline: dlt.Pipeline,
    resources: Sequence[str] | None = None,
    full_refresh: bool = False,
    source_options: Mapping[str, Any] | None = None,
    checkpoints: Checkpoints | None = None,
) -> SyncResult:
    """Extract, normalize and load the selected resources (all by default) and say what happened.

    The run loads in passes of `checkpoint_requests` sale details each (`pipelines/sync/checkpoints.py`),
    whoever calls it (the command line, the accounts, Dagster, Airflow): `checkpoints` given, its size
    and its `kept` say which passes finished while it runs (the command line reads them on a signal);
    without, the configured size (`[sync] checkpoint_requests`, 0: one pass; unset, 150 or a minute of
    sale details at their rate limit)."""
    selected = check_resource_names(resources) if resources else None
    # a bad setting: one line, before any request
    kept = checkpoints if checkpoints is not None else Checkpoints.of(checkpoint_requests())
    report = RunReport()
    display = pipeline.collector
    if isinstance(display, SyncProgress):
        display.watch(report)
    if follow_the_warehouse(pipeline):  # the warehouse is behind the folder: its state, restored now
        pipeline.sync_destination()
    # The source asks this pipeline's destination for the renewals due while it is built
    # (`store_renewals.py`), so it must be dlt's current pipeline then, not the last one created (the
    # runs table's).
    pipeline.activate()
    options = dict(source_options or {})
    # the interval between runs, from the run records (failed runs included), for the run's budget
    if "run_starts" not in options:
        options["run_starts"] = recent_run_starts(pipeline)
    source = platform_source(report=report, **options)
    if selected:
        source = source.with_resources(*selected)
    if report.privacy is not None:
        check_privacy(pipeline, report.privacy.settings, full_refresh)
    prepare_process()
    transactional_loads(pipeline)
    add_root_keys(pipeline)  # child tables appended before their snapshots were merged (2026-12-06)
    started = time.monotonic()
    run_options: dict[str, Any] = {"loader_file_format": file_format(pipeline)}
    load_tables_as(source, run_options["loader_file_format"])
    if full_refresh:
        run_options["refresh"] = "drop_sources"
    finish_pending_packages(pipeline, run_options["loader_file_format"])
    deleted: dict[str, int] = {}
    sql = RunClient(pipeline)  # the run's own statements share one client (run_client.py)
    place: list[str | None] = [None]  # where the warehouse is: the same for every pass once resolved
    reforgotten = [0]  # people blanked again by the passes before the last (each pass has its scrubber)

    def make_source(first: bool) -> Any:
        if first:
            return source
        if report.privacy is not None:
            reforgotten[0] += report.privacy.reforgotten
        report.departures.next_pass()  # this pass's load carries the departures its sales bring
        pipeline.activate()  # as for the first: the source reads this pipeline's state while built
        clock = report.run_clock  # the run's: its start stamps the run's rows and deletions
        later = platform_source(report=report, **options).with_resources("sales")
        report.run_clock = clock
        load_tables_as(later, run_options["loader_file_format"])
        return later

    def after_pass() -> None:
        if place[0] is None:  # asked again at each pass until the destination's settings resolve
            place[0] = warehouse_place(pipeline)
        claim(pipeline, place[0])  # this folder's state is now this warehouse's
        remove_orphans(pipeline, sql)  # child rows a load killed half-way left, its package lost with it
        for table, count in mark_deletions(pipeline, report, deletion_time(report), sql).items():
            deleted[table] = deleted.get(table, 0) + count

    load_info = run_in_passes(pipeline, make_source, report, kept, after_pass, run_options)
    total = time.monotonic() - started
    _note_forgotten_again(report, reforgotten[0])
    source_state = pipeline.state.get("sources", {}).get(source.name, {})
    # on the clock of the run's stamp (`runclock.RunClock.now`), as the run records it is read with
    checked_at = report.run_clock.now() if report.run_clock is not None else dt.datetime.now(dt.UTC)
    # the warehouse's `_platform_retired_ids` (written by the load), with what the state still holds
    retired = all_retired_rows(pipeline, source_state, sql)
    retired_sales = {row["id"] for row in retired if row["kind"] == "sale"}
    return SyncResult(
        load_info=load_info,
        rows=kept.rows,
        requests=dict(report.requests),
        seconds={**kept.seconds, "total": total},
        report=report,
        freshness=table_freshness(
            source_state, report, selected or list(STREAMS), checked_at, sales_verification(pipeline, sql)
        ),
        coverage=sales_coverage(pipeline, report.configured_sale_ids, retired_sales, checked_at, sql),
        retired=retired,
        deleted=deleted,
        extra={"checkpoints": len(kept.kept)} if kept.size else {},
    )


def _note_forgotten_again(report: RunReport, earlier_passes: int = 0) -> None:
    """One line for the run: the people blanked again on the way in, by every pass of the run."""
    count = earlier_passes + (report.privacy.reforgotten if report.privacy is not None else 0)
    if count:
        report.warn(
            f"{count} records named people forgotten earlier (`platform-sync forget`): "
            "the platform sent them again; their personal fields were blanked on the way in"
        )


def finish_pending_packages(pipeline: dlt.Pipeline, loader_file_format: Any) -> LoadInfo | None:
    """Load what a run that was killed or failed left in the pipeline folder, if anything.

    dlt's `run` would load those packages and return without extracting (a recovery run that synced
    nothing new and said it was fine); finished first, the sync then runs as usual, from the state
    the pending package carried."""
    if not pipeline.has_pending_data:
        return None
    logger.warning(
        "a previous run did not finish: loading what it left in %s first, then syncing as usual",
        pipeline.working_dir,
    )
    return run_within_memory(pipeline, None, loader_file_format=loader_file_format)


def prepare_process() -> None:
    """The dlt settings a sync runs with (dlt configuration only); for runners that call `pipeline.run`
    themselves (the Airflow DAG in schedules/airflow). Settings that change the whole process are our
    command line's (`pipelines/sync/process_settings.py`)."""
    _keep_packed_row_ids()
    bound_writer_buffers()
    parallel_normalize()


def _keep_packed_row_ids() -> None:
    """Rows that the source yields as Arrow tables bring their own `_dlt_id` and `_dlt_load_id`
    (`fastpath/columnar.py`): dlt must not add a second `_dlt_id` (`add_dlt_id` is off by default, but a
    config may turn it on). Set here rather than only in .dlt/config.toml, which a scheduler may run
    without."""
    set_value("normalize.parquet_normalizer.add_dlt_id", False)


def file_format(pipeline: dlt.Pipeline) -> Any:
    """Parquet where the destination takes it: an order of magnitude faster to load than SQL inserts."""
    capabilities = pipeline.destination.capabilities()
    return "parquet" if "parquet" in capabilities.supported_loader_file_formats else None
