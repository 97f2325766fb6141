"""Airflow DAGs: the sync as `platform-sync sync` runs it, then the dbt models, hourly.

Copy this file into the DAGs folder of an Airflow (3.x) whose workers run with the project installed
(`pip install 'platform-sync[airflow]'`) and with the project folder as their working directory, or
set `PLATFORM_SYNC_PROJECT_DIR` to it: every task changes to that folder first, so `.dlt/` there holds
the configuration, the working folder follows the command line's rule and the DuckDB file is the one
`platform-sync sync` run there would load. Secrets come from `.dlt/secrets.toml` or the environment
(`SOURCES__PLATFORM__ACCESS_TOKEN`, destination credentials), as for `platform-sync sync`.

`platform_sync` (one account) runs one task, `sync`, then `models`. The task runs the command line's own
path (`pipelines.accounts.sync_account` for the account `default`): its run lock, its checkpoints (a
task killed by a timeout keeps the passes that finished, `checkpoint_requests`), its outcome table, and
its verdict: the task fails where `platform-sync sync` exits 1 or 2 (a rejected token, nothing loaded, a
bad setting, the warehouse held by another writer) and logs a warning where it exits 3 (partial).

With accounts configured (`[accounts.<name>]`, docs/accounts.md), the DAG `platform_sync_accounts`
maps a task per account (dynamic task mapping: `sync_account.expand(account=accounts())`, the list read
from the configuration when each run starts, so a new account needs no change here), at most
`ACCOUNTS_AT_ONCE` of a run at once; each runs `platform-sync sync` for its account only, so a revoked
token fails that account's task alone. The models build once after all of them (`all_done`: an
account that failed keeps its previous rows), never one build per account; then `accounts_loaded`, which
runs only when every account's task succeeded, so that a run with a failed account is a failed run (its
task red, the others' rows and the marts built). No account configured fails the run's first task:
a run that syncs nothing is not green. (One build, because two `dbt build`s into the same schemas at
once would replace the same tables under each other.) Several accounts at once need a server
destination (one DuckDB file has one writer process): `PLATFORM_SYNC_DESTINATION=postgres` in the
workers' environment, as `--destination` for the command line.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pendulum
from airflow.sdk import dag, task

logger = logging.getLogger("platform_sync.airflow")
ACCOUNTS_AT_ONCE = 3  # accounts of one run synced at once (each has its own rate budget at the API)

# dlt's Airflow secrets provider is on wherever Airflow is installed: it asks Airflow for every setting no
# other provider has (a Variable lookup each), and in every process dlt starts for the sync it imports and
# initializes Airflow again. Under an orchestrator dlt spawns its normalize workers (no fork), so each pass
# paid that import twice: the accounts DAG of tests/pipelines/accounts took 130 CPU-seconds with it on, 55
# with it off (2026-12-07). This DAG reads secrets as `platform-sync sync` does (.dlt/secrets.toml, the
# environment); to keep them in Airflow Variables, set PROVIDERS__ENABLE_AIRFLOW_SECRETS=true in the
# workers' environment (that choice wins over this default).
os.environ.setdefault("PROVIDERS__ENABLE_AIRFLOW_SECRETS", "false")


def _destination() -> str:
    """The accounts' warehouse, as `--destination` names it (PLATFORM_SYNC_DESTINATION, default duckdb)."""
    return os.environ.get("PLATFORM_SYNC_DESTINATION", "duckdb")


def _project_dir() -> Path:
    return Path(os.environ.get("PLATFORM_SYNC_PROJECT_DIR", os.getcwd()))


def _sync(account: str, command: str) -> None:
    """`platform-sync sync` for one account (`default`: the single-account setup, `[sources.platform]`)
    in the project folder: fails as it exits 1 or 2, warns as it exits 3."""
    from pipelines.accounts import DEFAULT_ACCOUNT, account_named, find_account, sync_account
    from pipelines.sync.platform_pipeline import prepare_process

    os.chdir(_project_dir())
    prepare_process()
    chosen = account_named(account) if account == DEFAULT_ACCOUNT else find_account(account)
    run = sync_account(chosen, destination=_destination(), command=command)
    if run.exit_status in (1, 2):
        raise RuntimeError(f"account {account}: {run.message or f'exit status {run.exit_status}'}")
    if run.exit_status == 3:
        logger.warning("account %s: partial run: %s", account, run.message)


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

    @task
    def sync() -> None:
        """`platform-sync sync`, in the project folder."""
        from pipelines.accounts import DEFAULT_ACCOUNT

        _sync(DEFAULT_ACCOUNT, "airflow platform_sync")

    @task
    def models() -> None:
        from pipelines.dbt.runner import run_models
        from pipelines.sync.lock import run_lock
        from pipelines.sync.platform_pipeline import make_pipeline

        os.chdir(_project_dir())
        pipeline = make_pipeline()  # the models need only the destination, from the project's config
        with run_lock(pipeline, "read", command="airflow platform_models"):
            result = run_models(pipeline)
        if not result.success:
            raise RuntimeError("dbt build failed: see the task log")

    sync() >> models()


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
        """The configured accounts' names, read when the run starts; none fails the run (a run that syncs
        nothing must not look green)."""
        from pipelines.accounts import configured_accounts

        os.chdir(_project_dir())
        names = [account.name for account in configured_accounts()]
        if not names:
            raise RuntimeError(
                f"no [accounts.<name>] in {_project_dir() / '.dlt'} nor in the environment: configure the "
                "accounts there (docs/accounts.md), or run the DAG platform_sync for one account"
            )
        return names

    @task(max_active_tis_per_dagrun=ACCOUNTS_AT_ONCE)
    def sync_account(account: str) -> None:
        """`platform-sync sync` for one account: fails as it exits 1 or 2, warns as it exits 3."""
        _sync(account, f"airflow {account}")

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

    @task(trigger_rule="all_success")
    def accounts_loaded() -> None:
        """Reached only when every account's sync succeeded: an account that failed leaves it
        upstream_failed, so the run fails, after the models were built on the others."""

    synced = sync_account.expand(account=accounts())
    built = models()
    synced >> built
    [synced, built] >> accounts_loaded()


platform_sync_accounts()
