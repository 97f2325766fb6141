"""Dagster definitions: the sync's resources (dagster-dlt) and the dbt models (dagster-dbt) as assets,
and an hourly schedule of both. (No `from __future__ import annotations` here: Dagster reads the
`context` parameter's annotation when the assets are defined.)

Run from the project folder, with the `dagster` extra installed. Every process Dagster starts (the code
location, each run, each step) reads `.dlt/` from the folder it runs in, so start Dagster there; set
`DAGSTER_HOME` to a folder of your own (Dagster keeps its runs, schedules and sensors there: without it
`dagster dev` keeps them in a temporary folder, gone when it stops); set `DLT_DATA_DIR` to where
the pipelines' working folders must be (else dlt's machine-wide default, `~/.dlt`, shared by every checkout
on the machine); and the tokens are read from `.dlt/secrets.toml` or the environment of the process that
starts Dagster (`SOURCES__PLATFORM__ACCESS_TOKEN`, `ACCOUNTS__<NAME>__ACCESS_TOKEN`), which its runs inherit.

    export DAGSTER_HOME=$PWD/.dagster DLT_DATA_DIR=$PWD/.dlt/data && mkdir -p $DAGSTER_HOME
    dagster dev -f schedules/dagster/definitions.py           # the UI, the schedule and the daemon
    # one account (no [accounts.*]): everything at once
    dagster asset materialize -f schedules/dagster/definitions.py --select '*'
    # with accounts: an account's partition, then the models once over every account
    dagster asset materialize -f schedules/dagster/definitions.py --select group:platform_raw --partition acme
    dagster asset materialize -f schedules/dagster/definitions.py --select group:platform_models

The sync assets run the same code as `platform-sync sync` (its run lock, its settings, its outcome
table); dagster-dlt only declares one asset per resource. A resource that fails or is skipped fails the
step after the others are materialized; a rejected token fails it too. The dbt models read the raw
tables under the run lock as a reader, as `platform-sync models` does.

Many accounts (`[accounts.<name>]` in `.dlt/config.toml`, docs/accounts.md): the sync's assets get one
partition per account, a `StaticPartitionsDefinition` built from the configuration when the code
location loads. A new account needs no code: add its table and token, and reload the code location
(`dagster dev` reloads it from the UI; a deployment, when its image or config map changes). Static
rather than dynamic partitions because the configuration is the one list of accounts: a sensor adding
dynamic partitions would keep a second list in Dagster's instance that can drift from it (an account
removed from the config would stay a partition that can only fail). A partition's run syncs that account
alone (`pipelines.accounts.sync_account`: its own pipeline, dataset, state, lock and rate limiter), so
runs of different accounts go on at once, on one machine or many; a revoked token fails that partition
only. Everything a step needs is read again in its process (configuration, the account's pipeline, dlt's
state restored from the destination when the worker's folder is empty): nothing is shared between steps
but the warehouse, so Dagster's multiprocess executor here, and its Kubernetes or Celery executors
(`Definitions(executor=...)`, or the run launcher of the deployment), run the same assets unchanged.

The dbt models are NOT partitioned: the marts read every account's dataset (a union view per raw table,
with an `account` column), and two `dbt build`s into the same schemas at once would replace the same
tables under each other. So there is one build, after the accounts' runs: the sensor
`platform_models_after_the_accounts` (running from the start, evaluated by the daemon every 30 s) runs
the job `build_models` (every model) once an account's run ended since the last build and none is
queued or running (an account that fails does not hold the build back, its previous rows stay in the
marts). The schedule (`platform_sync_accounts_hourly`, or `platform_sync_and_models_schedule` for
one account) is hourly at :17 (`PLATFORM_SYNC_CRON` sets another cron) and, as Dagster's schedules are,
off until started (`dagster schedule start NAME -f schedules/dagster/definitions.py`, or in the UI).
Put the models in a pool of one (`pool="platform_models"`, limit 1 in the deployment's concurrency
settings) and two builds never overlap even when started by hand.

`PLATFORM_SYNC_DESTINATION` (default `duckdb`) names the warehouse the assets load, as `--destination`
does for `platform-sync`. Several accounts' runs at once need a server destination (PostgreSQL...):
one DuckDB file has one writer process, and its run lock makes a second account's run fail at once
(`platform-sync sync --all-accounts` runs the accounts in one process for DuckDB). On a server
destination each account's run loads up to `[load] workers` jobs at once (dlt's default 20), each on its
own connection: size it (`LOAD__WORKERS` in the runs' environment) so that the runs at once times the
workers stay within the server's connections.
"""

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import dlt
from dagster import AssetExecutionContext
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, DbtProject, dbt_assets
from dagster_dlt import dlt_assets
from dlt.extract.source import DltSource

from pipelines.accounts import account_pipeline, configured_accounts, find_account, sync_account
from pipelines.dbt.runner import DBT_PROFILES_DIR, DBT_PROJECT_DIR, dbt_environment
from pipelines.sync.lock import run_lock
from pipelines.sync.platform_pipeline import DEFAULT_DESTINATION, make_pipeline, sync
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from sources.platform import platform_source
from sources.platform.resources import STREAMS

ASSET_PREFIX = "dlt_platform_"  # dagster-dlt's key: dlt_<source>_<resource>
RAW_GROUP, MODELS_GROUP = "platform_raw", "platform_models"
DESTINATION = os.environ.get("PLATFORM_SYNC_DESTINATION", DEFAULT_DESTINATION)
ACCOUNTS = configured_accounts()
ACCOUNT_PARTITIONS = dg.StaticPartitionsDefinition([a.name for a in ACCOUNTS]) if ACCOUNTS else None
# The pipeline dagster-dlt describes the assets with (its name, destination and dataset), in a working
# folder of this process's own: the code location loads in every process Dagster starts, several at once,
# and dlt wipes a working folder it finds without state before it creates the pipeline there, so loading
# the definitions never touches a real pipeline's folder (one account's process wiped another's while
# that one was being created). The pipelines that load are built when a step runs.
_DESCRIPTION_FOLDER = tempfile.TemporaryDirectory(prefix="platform-sync-dagster-")
PIPELINE_DESCRIPTION = (
    make_pipeline(
        DESTINATION,
        ACCOUNTS[0].dataset_name,
        pipelines_dir=_DESCRIPTION_FOLDER.name,
        pipeline_name=ACCOUNTS[0].pipeline_name,
    )
    if ACCOUNTS
    else make_pipeline(DESTINATION, pipelines_dir=_DESCRIPTION_FOLDER.name)
)
DBT_PROJECT = DbtProject(
    project_dir=DBT_PROJECT_DIR,
    profiles_dir=DBT_PROFILES_DIR,
    target_path=Path("target") / "dagster",  # under dbt_models/, git-ignored
)
# the virtualenv's dbt, which need not be on PATH under a scheduler
DBT_EXECUTABLE = str(Path(sys.executable).with_name("dbt"))


def _dbt(profiles_dir: Path = DBT_PROFILES_DIR, project: DbtProject = DBT_PROJECT) -> DbtCliResource:
    return DbtCliResource(project_dir=project, profiles_dir=str(profiles_dir), dbt_executable=DBT_EXECUTABLE)


def _spec_source() -> DltSource:
    """The source, only so that dagster-dlt can list its resources: the run builds its own from config.
    Placeholder address and token when none is configured yet (nothing is requested here)."""
    return platform_source(
        base_url=os.environ.get("SOURCES__PLATFORM__BASE_URL", "http://127.0.0.1:9"),
        access_token=os.environ.get("SOURCES__PLATFORM__ACCESS_TOKEN", "not-used-to-list-resources"),
    )


@dlt_assets(
    dlt_source=_spec_source(),
    dlt_pipeline=PIPELINE_DESCRIPTION,
    name="platform_sync",
    group_name=RAW_GROUP,
    partitions_def=ACCOUNT_PARTITIONS,
)
def platform_raw(context: AssetExecutionContext) -> Iterator[dg.MaterializeResult]:
    """`platform-sync sync` of the selected resources (of the partition's account), one materialization
    per resource."""
    selected = sorted(key.path[-1].removeprefix(ASSET_PREFIX) for key in context.selected_asset_keys)
    resources = selected if len(selected) < len(STREAMS) else None
    if context.has_partition_key:
        outcomes, failure = _sync_account(context.partition_key, resources)
    else:
        outcomes, failure = _sync_single(resources), ""
    problems = [row for row in outcomes if row["status"] in ("failed", "skipped")]
    for row in outcomes:
        if row["status"] in ("loaded", "not_due"):
            yield dg.MaterializeResult(
                asset_key=dg.AssetKey(ASSET_PREFIX + row["resource"]), metadata=_meta(row)
            )
    if problems or failure:
        names = ", ".join(f"{row['resource']} ({row['status']}: {row['message']})" for row in problems)
        raise dg.Failure(
            description="; ".join(part for part in (failure, names and f"not loaded: {names}") if part)
        )


def _sync_single(resources: list[str] | None) -> list[dict[str, Any]]:
    """The single-account setup (no accounts configured), as before accounts existed."""
    started_at = run_started_at()
    pipeline = make_pipeline(DESTINATION)
    with run_lock(pipeline, "write", command="dagster platform_sync"):
        result = sync(pipeline, resources)
        outcomes = outcome_rows(result, resources, started_at)
        record_run(pipeline, outcomes)
    return outcomes


def _sync_account(name: str, resources: list[str] | None) -> tuple[list[dict[str, Any]], str]:
    """One account's sync; its outcome rows, and the account's failure (a rejected token, a bad
    setting, its lock held) as one line, empty when it loaded or partly loaded."""
    run = sync_account(find_account(name), resources, destination=DESTINATION, command=f"dagster {name}")
    failed = run.exit_status in (1, 2)
    return (
        run.outcomes,
        f"account {name}: {run.message or f'exit status {run.exit_status}'}" if failed else "",
    )


def _meta(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"status": row["status"], "message": row["message"], "requests": row["requests"]}


class RawTablesFromDlt(DagsterDbtTranslator):
    """dbt's sources named after a resource are that resource's dlt asset. Child tables (`sales__items`)
    keep dbt's own key (one asset key cannot stand for two dbt sources): they are loaded with their
    resource, which the lineage shows through the staging models of the root tables."""

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        name = dbt_resource_props["name"]
        if dbt_resource_props["resource_type"] == "source" and name in STREAMS:
            return dg.AssetKey(ASSET_PREFIX + name)
        return super().get_asset_key(dbt_resource_props)

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        return MODELS_GROUP


def parsed_manifest(project: DbtProject = DBT_PROJECT) -> Path:
    """dbt's manifest, parsed again when a file of the dbt project is newer (`dbt parse` needs no
    connection). Parsed into a folder of this process's own, then moved into place in one step: the
    code location loads in every process Dagster starts (each partition's run, each step of the
    multiprocess executor), and one reading the manifest while another was writing it read it cut
    short (orjson: unexpected end of data)."""
    manifest = project.manifest_path
    folder = Path(project.project_dir)
    files = [
        p
        for p in folder.rglob("*.*")
        if p.suffix in (".sql", ".yml") and p.relative_to(folder).parts[0] not in ("target", "logs")
    ]
    if not manifest.exists() or max(p.stat().st_mtime for p in files) > manifest.stat().st_mtime:
        manifest.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=manifest.parent.parent, prefix=".parse-") as private:
            _dbt(project=project).cli(["parse", "--quiet"], target_path=Path(private)).wait()
            os.replace(Path(private) / "manifest.json", manifest)
    return manifest


@dbt_assets(
    manifest=parsed_manifest(),
    project=DBT_PROJECT,
    dagster_dbt_translator=RawTablesFromDlt(),
    pool=MODELS_GROUP,
)
def platform_models(context: AssetExecutionContext, dbt: DbtCliResource) -> Iterator[Any]:
    """`dbt build` on the pipeline's destination (the profile `platform-sync models` uses), over every
    configured account's dataset."""
    pipelines = (
        [account_pipeline(a, DESTINATION) for a in ACCOUNTS] if ACCOUNTS else [make_pipeline(DESTINATION)]
    )
    with _readers_of(pipelines), tempfile.TemporaryDirectory() as work:
        profiles_dir, env = dbt_environment(pipelines[0], Path(work))
        os.environ.update(env)  # the profile reads the database path and password from the environment
        yield from _dbt(profiles_dir).cli(["build"], context=context).stream()


@contextlib.contextmanager
def _readers_of(pipelines: list[dlt.Pipeline]) -> Iterator[None]:
    """The run lock of each account's pipeline (or the only one's) as a reader: a sync of this machine
    writing an account's tables makes the build fail at once instead of reading them half-loaded."""
    with contextlib.ExitStack() as stack:
        for pipeline in pipelines:
            stack.enter_context(run_lock(pipeline, "read", command="dagster platform_models"))
        yield


# The schedules' cron (hourly at :17 unless PLATFORM_SYNC_CRON says otherwise, e.g. "*/30 * * * *")
CRON = os.environ.get("PLATFORM_SYNC_CRON", "17 * * * *")


def _jobs_and_schedules() -> tuple[list[Any], list[dg.ScheduleDefinition]]:
    if not ACCOUNTS:
        everything = dg.define_asset_job("platform_sync_and_models", selection="*")
        return [everything], [dg.ScheduleDefinition(job=everything, cron_schedule=CRON)]
    accounts_job = dg.define_asset_job(
        "platform_sync_accounts",
        selection=dg.AssetSelection.groups(RAW_GROUP),
        partitions_def=ACCOUNT_PARTITIONS,
    )
    # not named platform_models: that is the dbt op's name, and a job may not share it
    models_job = dg.define_asset_job("build_models", selection=dg.AssetSelection.groups(MODELS_GROUP))

    @dg.schedule(job=accounts_job, cron_schedule=CRON, name="platform_sync_accounts_hourly")
    def every_account(context: dg.ScheduleEvaluationContext) -> Iterator[dg.RunRequest]:
        """A run per account, every hour: Dagster's run queue (its concurrency limits) spreads them."""
        tick = context.scheduled_execution_time.isoformat() if context.scheduled_execution_time else "now"
        for account in ACCOUNTS:
            yield dg.RunRequest(run_key=f"{account.name}:{tick}", partition_key=account.name)

    return [accounts_job, models_job], [every_account]


JOBS, SCHEDULES = _jobs_and_schedules()
ACCOUNTS_BUSY = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]
ACCOUNTS_DONE = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE]


def _sensors(jobs: list[Any]) -> list[dg.SensorDefinition]:
    """With accounts, the sensor that builds every model once the accounts' runs are done: a run of
    `build_models` when an account's run ended since the last build and none is queued or running. The
    whole build, not the models whose own sources changed (Dagster's automation conditions): a mart reads
    tables of several resources, and a first build of a subset failed on a table not built yet."""
    if not ACCOUNTS:
        return []
    models_job = next(job for job in jobs if job.name == "build_models")

    @dg.sensor(
        job=models_job,
        name="platform_models_after_the_accounts",
        minimum_interval_seconds=30,
        default_status=dg.DefaultSensorStatus.RUNNING,
    )
    def models_after_the_accounts(context: dg.SensorEvaluationContext) -> Any:
        def newest(statuses: list[dg.DagsterRunStatus]) -> Any:
            records = context.instance.get_run_records(
                filters=dg.RunsFilter(job_name="platform_sync_accounts", statuses=statuses), limit=1
            )
            return records[0].dagster_run if records else None

        if newest(ACCOUNTS_BUSY) is not None:
            return dg.SkipReason("accounts' runs are queued or running")
        done = newest(ACCOUNTS_DONE)
        if done is None or done.run_id == context.cursor:
            return dg.SkipReason("no account's run ended since the last build")
        context.update_cursor(done.run_id)
        return dg.RunRequest(run_key=f"after:{done.run_id}")

    return [models_after_the_accounts]


SENSORS = _sensors(JOBS)

defs = dg.Definitions(
    assets=[platform_raw, platform_models],
    jobs=JOBS,
    schedules=SCHEDULES,
    sensors=SENSORS,
    resources={"dbt": _dbt()},
)
