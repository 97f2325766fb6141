"""Airflow DAG: the sync with dlt's Airflow helper (`PipelineTasksGroup`), then the dbt models, hourly.

Copy this file into the DAGs folder of an Airflow (3.x) whose workers run with the project installed
(`pip install 'platform-sync[airflow]'`) and with the project folder as their working directory, or
set `PLATFORM_SYNC_PROJECT_DIR` to it: the pipeline's working folder is `.dlt/pipelines` there and
`.dlt/` holds its configuration. Secrets come from `.dlt/secrets.toml` or the environment
(`SOURCES__PLATFORM__ACCESS_TOKEN`, destination credentials), as for `platform-sync sync`.

The helper runs `pipeline.run` itself; the task group below wraps it so that the run takes the
product's run lock (a second run, from cron or by hand, exits at once instead of writing alongside)
and applies the sync's settings, and it fails the task as `platform-sync sync` exits 1: a rejected
token, or no resource loaded. A partial run (some resources skipped or failed) is logged as a warning.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pendulum
from airflow.sdk import dag, task
from dlt.extract.source import DltSource
from dlt.helpers.airflow_helper import PipelineTasksGroup

logger = logging.getLogger("platform_sync.airflow")


def _project_dir() -> Path:
    return Path(os.environ.get("PLATFORM_SYNC_PROJECT_DIR", os.getcwd()))


class PlatformSource:
    """Builds the source when the task runs (config is read then, not when the DAG is parsed) and keeps
    its run report, to judge the run afterwards."""

    def __init__(self) -> None:
        from sources.platform import RunReport

        self.report = RunReport()

    def __call__(self) -> DltSource:
        from sources.platform import RunReport, platform_source

        self.report = RunReport()
        return platform_source(report=self.report)


class OneWriterTasksGroup(PipelineTasksGroup):
    """dlt's task group, with the run lock held around each run (dlt 1.31's `_run` is where the task
    calls `pipeline.run`)."""

    def _run(self, pipeline: Any, data: Any, *args: Any, **kwargs: Any) -> None:
        from pipelines.sync.lock import run_lock
        from pipelines.sync.platform_pipeline import prepare_process

        os.chdir(_project_dir())
        prepare_process()
        with run_lock(pipeline, "write", command="airflow platform_sync", lock_dir=_lock_dir()):
            super()._run(pipeline, data, *args, **kwargs)
        if isinstance(data, PlatformSource):
            _judge(data)


def _judge(source: PlatformSource) -> None:
    """Fail the task where `platform-sync sync` exits 1; warn where it exits 3."""
    from sources.platform.resources import STREAMS
    from sources.platform_client.errors import REAUTHORIZE_HINT

    report = source.report
    if any(REAUTHORIZE_HINT in reason for reason in report.failed.values()):
        raise RuntimeError(
            "the access token was rejected: authorize again (`platform-sync auth --code CODE`)"
        )
    due = [name for name in STREAMS if name not in report.not_due]
    if due and all(name in report.failed or name in report.skipped for name in due):
        raise RuntimeError(
            f"no resource was loaded: failed {sorted(report.failed)}, skipped {sorted(report.skipped)}"
        )
    if report.is_partial:
        logger.warning("partial run: skipped %s, failed %s", sorted(report.skipped), sorted(report.failed))


def _lock_dir() -> Path:
    """Where `platform-sync sync` in the project folder keeps its locks: the DAG takes the same ones."""
    return _project_dir() / ".dlt" / "pipelines"


def _pipeline() -> Any:
    """The pipeline in the working folder dlt's task group made for this worker (DLT_DATA_DIR, set when
    the group is created): the incremental state is restored from the destination when it is empty."""
    from pipelines.sync.platform_pipeline import make_pipeline

    return make_pipeline(pipelines_dir=Path(os.environ["DLT_DATA_DIR"]) / "pipelines")


@dag(
    dag_id="platform_sync",
    schedule="17 * * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 0},
    tags=["platform-sync", "dlt", "dbt"],
)
def platform_sync() -> None:
    """Sync, then `dbt build` on what was loaded."""
    group = OneWriterTasksGroup(
        "platform_sync",
        use_data_folder=False,
        wipe_local_data=False,  # the working folder keeps state and pending packages between runs
        use_task_logger=True,
    )
    from pipelines.sync.platform_pipeline import file_format

    pipeline = _pipeline()
    sync_tasks = group.add_run(
        pipeline, PlatformSource(), decompose="none", loader_file_format=file_format(pipeline)
    )

    @task
    def models() -> None:
        from pipelines.dbt.runner import run_models
        from pipelines.sync.lock import run_lock
        from pipelines.sync.platform_pipeline import make_pipeline

        os.chdir(_project_dir())
        pipeline = make_pipeline()  # the models need only the destination, from the project's config
        with run_lock(pipeline, "read", command="airflow platform_models", lock_dir=_lock_dir()):
            result = run_models(pipeline)
        if not result.success:
            raise RuntimeError("dbt build failed: see the task log")

    sync_tasks[-1] >> models()


platform_sync()
