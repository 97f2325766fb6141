"""The Dagster definitions under Dagster's own daemon (issue 50): the schedule's tick starts a run per
account, and the sensor `platform_models_after_the_accounts` then builds the models once, with no person
starting anything. Two sandbox worlds as two accounts into one DuckDB file (runs one at a time: Dagster's
queued run coordinator with `max_concurrent_runs: 1`, as docs/accounts.md advises for one DuckDB file);
the cron every minute (`PLATFORM_SYNC_CRON`), so the first tick comes within a minute."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest

from sandbox.running import running_sandbox
from tests.support.accounts import SCALE, TIME_SCALE, World, accounts_project
from tests.support.cli import PROJECT_ROOT
from tests.support.warehouses import MODELS_ONLY_ENV

pytestmark = [pytest.mark.xdist_group("dagster_daemon"), pytest.mark.timeout(900)]

DAGSTER = str(Path(sys.executable).with_name("dagster"))
DAEMON = str(Path(sys.executable).with_name("dagster-daemon"))
DEFINITIONS = PROJECT_ROOT / "schedules" / "dagster" / "definitions.py"
WORLDS = {"acme": 21, "beta": 22}
INSTANCE = """
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    max_concurrent_runs: 1
telemetry:
  enabled: false
"""
PATIENCE = 600.0  # seconds for the tick, two syncs and a build on a busy machine


def marts_accounts(warehouse: Path) -> set[str]:
    """The accounts the marts' sales hold (none before the models were built)."""
    if not warehouse.exists():
        return set()
    try:
        with duckdb.connect(str(warehouse), read_only=True) as connection:
            rows = connection.execute("select distinct account from marts.fct_sales").fetchall()
    except duckdb.Error:  # not built yet, or a run holds the file
        return set()
    return {str(row[0]) for row in rows}


def runs(home: Path) -> list[dict[str, Any]]:
    """The instance's runs: job, status, partition and what started them."""
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home)) as instance:
        return [
            {
                "job": run.job_name,
                "status": run.status.value,
                "partition": run.tags.get("dagster/partition"),
                "schedule": run.tags.get("dagster/schedule_name"),
                "sensor": run.tags.get("dagster/sensor_name"),
            }
            for run in instance.get_runs()
        ]


def settled(home: Path) -> bool:
    """Both accounts' runs and a build by the sensor ended, and nothing is queued or running. Read from
    Dagster's instance only: the test opens the DuckDB file once everything is done (a reader holding it
    while a run loads would fail that run)."""
    busy = {"QUEUED", "NOT_STARTED", "STARTING", "STARTED"}
    seen = runs(home)
    if any(run["status"] in busy for run in seen):
        return False
    synced = {run["partition"] for run in seen if run["job"] == "platform_sync_accounts"}
    built = [run for run in seen if run["sensor"] == "platform_models_after_the_accounts"]
    return synced == set(WORLDS) and bool(built)


def schedule(action: str, env: dict[str, str], project: Path) -> None:
    """`dagster schedule start|stop` of the accounts' schedule, as a person runs it."""
    done = subprocess.run(
        [DAGSTER, "schedule", action, "platform_sync_accounts_hourly", "-f", str(DEFINITIONS)],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_the_schedule_ticks_a_run_per_account_and_the_sensor_builds_the_models(tmp_path):
    home, project = tmp_path / "dagster_home", tmp_path / "project"
    home.mkdir()
    (home / "dagster.yaml").write_text(INSTANCE)
    with contextlib.ExitStack() as stack:
        handles = {
            name: stack.enter_context(running_sandbox(seed=seed, scale=SCALE, time_scale=TIME_SCALE))
            for name, seed in WORLDS.items()
        }
        worlds = {name: World(name, handle, handle.token()) for name, handle in handles.items()}
        env = {
            **accounts_project(project, worlds),
            **MODELS_ONLY_ENV,
            "DAGSTER_HOME": str(home),
            "PLATFORM_SYNC_CRON": "* * * * *",
        }
        schedule("start", env, project)
        log = (tmp_path / "daemon.log").open("w")
        daemon = subprocess.Popen(
            [DAEMON, "run", "-f", str(DEFINITIONS)], env=env, cwd=project, stdout=log, stderr=log
        )
        try:
            deadline, ticked = time.monotonic() + PATIENCE, False
            while time.monotonic() < deadline and not settled(home):
                if not ticked and len(runs(home)) >= len(WORLDS):
                    # one tick's runs: the cron of every minute would queue more each minute, and the
                    # models wait for the accounts' runs to be done (none in progress)
                    schedule("stop", env, project)
                    ticked = True
                time.sleep(5)
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
            log.close()
    seen = runs(home)
    daemon_log = (tmp_path / "daemon.log").read_text()[-4000:]
    assert marts_accounts(project / "warehouse.duckdb") == set(WORLDS), (seen, daemon_log)
    syncs = [run for run in seen if run["job"] == "platform_sync_accounts"]
    assert sorted(run["partition"] for run in syncs) == sorted(WORLDS), seen  # one tick: a run per account
    assert {run["status"] for run in syncs} == {"SUCCESS"}, seen
    assert {run["schedule"] for run in syncs} == {"platform_sync_accounts_hourly"}, seen
    built = [run for run in seen if run["sensor"] == "platform_models_after_the_accounts"]
    assert any(run["status"] == "SUCCESS" for run in built), seen
    assert not any(run["status"] == "FAILURE" for run in seen), seen
    with duckdb.connect(str(project / "warehouse.duckdb"), read_only=True) as connection:
        for name in WORLDS:
            loaded = connection.execute(
                f"select count(*) from platform_raw_{name}._platform_sync_runs where status = 'loaded'"
            ).fetchone()
            assert loaded is not None and loaded[0] > 0, name
