"""Airflow DAG: the sync with dlt's Airflow helper (`PipelineTasksGroup`), then the dbt models, hourly.

Copy this file into the DAGs folder of an Airflow (3.x) whose workers run with the project installed
(`pip install 'platform-sync[airflow]'`) and with the project folder as their working directory, or
set `PLATFORM_SYNC_PROJECT_DIR` to it: the pipeline's working folder is `.dlt/pipelines` there and
`.dlt/` holds its configuration. Secrets come from `.dlt/secrets.toml` or the environment
(`SOURCES__PLATFORM__ACCESS_TOKEN`, destination credentials), as for `platform-sync sync`.

With accounts configured (`[accounts.<name>]`, docs/accounts.md), the DAG `platform_sync_accounts`
maps a task per account (dynamic task mapping: `sync_account.expand(account=accounts())`, the list read
from the configuration when each run starts, so a new account needs no change here), at most
`ACCOUNTS_AT_ONCE` of a run at once; each runs `platform-sync sync` for its account only, so a revoked
token fails that account's task alone. The accounts are dlt configuration like the rest: under Airflow,
dlt reads `.dlt/config.toml` and `.dlt/secrets.toml` from the DAGs folder (dlt's task group sets
`DLT_PROJECT_DIR` to it) or Airflow's variables `dlt_config_toml` / `dlt_secrets_toml`, and the
environment (`ACCOUNTS__<NAME>__ACCESS_TOKEN`). The models build once after all of them (`all_done`: an
account that failed keeps its previous rows), never one build per account: two `dbt build`s into the same
schemas at once would replace the same tables under each other. Several accounts at once need a server
destination (one DuckDB file has one writer process): `PLATFORM_SYNC_DESTINATION=postgres` in the
workers' environment, as `--destination` for the command line.

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
ACCOUNTS_AT_ONCE = 3  # accounts of one run synced at once (each has its own rate budget at the API)


def _destination() -> str:
    """The accounts' warehouse, as `--destination` names it (PLATFORM_SYNC_DESTINATION, default duckdb)."""
    return os.environ.get("PLATFORM_SYNC_DESTINATION", "duckdb")


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


@dag(
    dag_id="platform_sync_accounts",
    schedule="17 * * * *",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 0},
    tags=["platform-sync", "dlt", "dbt", "accounts"],
)
def platform_sync_accounts() -> None:
    """A mapped task per configured account, then `dbt build` once over every account's dataset."""

    @task
    def accounts() -> list[str]:
        """The configured accounts' names, read when the run starts."""
        from pipelines.accounts import configured_accounts

        os.chdir(_project_dir())
        return [account.name for account in configured_accounts()]

    @task(max_active_tis_per_dagrun=ACCOUNTS_AT_ONCE)
    def sync_account(account: str) -> None:
        """`platform-sync sync` for one account: fails as it exits 1 or 2, warns as it exits 3."""
        from pipelines.accounts import find_account
        from pipelines.accounts import sync_account as sync_one
        from pipelines.sync.platform_pipeline import prepare_process

        os.chdir(_project_dir())
        prepare_process()
        run = sync_one(find_account(account), destination=_destination(), command=f"airflow {account}")
        if run.exit_status in (1, 2):
            raise RuntimeError(f"account {account}: {run.message or f'exit status {run.exit_status}'}")
        if run.exit_status == 3:
            logger.warning("account %s: partial run: %s", account, run.message)

    @task(trigger_rule="all_done")
    def models() -> None:
        import contextlib

        from pipelines.accounts import account_pipeline, configured_accounts
        from pipelines.dbt.runner import run_models
        from pipelines.sync.lock import run_lock

        os.chdir(_project_dir())
        pipelines = [account_pipeline(account, _destination()) for account in configured_accounts()]
        if not pipelines:
            return
        with contextlib.ExitStack() as readers:
            for pipeline in pipelines:
                readers.enter_context(run_lock(pipeline, "read", command="airflow platform_models"))
            result = run_models(pipelines[0])
        if not result.success:
            raise RuntimeError("dbt build failed: see the task log")

    sync_account.expand(account=accounts()) >> models()


platform_sync_accounts()
