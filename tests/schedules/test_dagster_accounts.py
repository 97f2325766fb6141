"""Three producer accounts, one PostgreSQL warehouse, through the Dagster definitions (issue 32).

Three sandbox worlds (three seeds, three tokens) are configured as the accounts `acme`, `beta` and
`gamma` in a project's `.dlt/config.toml`; the token of `gamma` is revoked by its sandbox at the first
request. Each account's partition is materialized by `dagster asset materialize --partition`, the three
started together (three runs at once, each with Dagster's multiprocess executor), then the models once.
`acme` and `beta` load and their raw tables and marts equal a single-account sync of the same world, row
for row; `gamma` fails alone. (`platform-sync sync --all-accounts` against single-account syncs, on DuckDB
and PostgreSQL, is tests/pipelines/accounts.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import dlt
import psycopg2
import pytest
import tomlkit

from pipelines.dbt.runner import run_models
from pipelines.sync.platform_pipeline import sync
from sandbox.running import SandboxHandle, running_sandbox
from tests.pipelines.sync.test_postgres_destination import canonical_rows
from tests.support.cli import PROJECT_ROOT
from tests.support.postgres_server import PostgresServer, running_postgres
from tests.support.sync_helpers import source_options
from tests.support.warehouses import MODELS_ONLY, RUN_STAMPS

# three syncs, two references and two dbt builds on PostgreSQL: minutes on a loaded machine
pytestmark = [pytest.mark.xdist_group("dagster_accounts"), pytest.mark.timeout(1200)]

DAGSTER = str(Path(sys.executable).with_name("dagster"))
DEFINITIONS = PROJECT_ROOT / "schedules" / "dagster" / "definitions.py"
SCALE, TIME_SCALE = 100, 600.0
WORLDS = {"acme": 2, "beta": 4, "gamma": 5}
REVOKED = "gamma"
LOADED = ("acme", "beta")
MARTS = "marts"
Query = Callable[[str], tuple[list[str], list[tuple[Any, ...]]]]


def write_project(folder: Path, sandboxes: dict[str, SandboxHandle], tokens: dict[str, str]) -> None:
    """The accounts in `.dlt/config.toml`, their tokens in `.dlt/secrets.toml`, as a user writes them."""
    config, secrets = tomlkit.document(), tomlkit.document()
    config["sources"] = {"platform": {"rate_limit_time_scale": TIME_SCALE}}
    config["accounts"] = {
        name: {k: v for k, v in source_options(handle, "").items() if k not in ("access_token",)}
        for name, handle in sandboxes.items()
    }
    secrets["accounts"] = {name: {"access_token": token} for name, token in tokens.items()}
    (folder / ".dlt").mkdir(parents=True, exist_ok=True)
    (folder / ".dlt" / "config.toml").write_text(tomlkit.dumps(config))
    (folder / ".dlt" / "secrets.toml").write_text(tomlkit.dumps(secrets))


def base_env(folder: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION__", "ACCOUNTS__"))
    }
    return {**env, "PYTHONPATH": str(PROJECT_ROOT), "DLT_DATA_DIR": str(folder / ".dlt" / "data")}


def pg(server: PostgresServer, database: str) -> Query:
    def query(sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        connection = psycopg2.connect(
            host=server.host, port=server.port, user=server.user, password=server.password, dbname=database
        )
        try:
            with connection.cursor() as cursor:
                cursor.execute(sql)
                return [c[0] for c in cursor.description or []], list(cursor.fetchall())
        finally:
            connection.close()

    return query


def tables(query: Query, schema: str) -> list[str]:
    _, rows = query(
        "select table_name from information_schema.tables where table_schema = "
        f"'{schema}' and table_name not like '!_%' escape '!' order by table_name"
    )
    return [str(row[0]) for row in rows]


def plain(value: Any) -> Any:
    """A JSON column's value as one text on both engines (psycopg2 decodes it, DuckDB gives the text)."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True, separators=(",", ":"))
    return value


def raw_rows(query: Query, schema: str) -> dict[str, list[tuple[str, ...]]]:
    """Every data table of `schema`: its rows without dlt's columns and the run's stamps, canonical."""
    found = {}
    for table in tables(query, schema):
        names, rows = query(f"select * from {schema}.{table}")
        # by column name: two engines' tables may have gained their columns in another order
        kept = sorted(
            (i for i, n in enumerate(names) if not n.startswith("_dlt") and n not in RUN_STAMPS),
            key=lambda i: names[i],
        )
        found[table] = canonical_rows([tuple(plain(row[i]) for i in kept) for row in rows])
    return found


def mart_rows(query: Query, account: str | None) -> dict[str, list[tuple[str, ...]]]:
    """Every mart's rows (of `account` only, when given), without the `account` column, canonical."""
    found = {}
    for mart in tables(query, MARTS):
        where = f" where account = '{account}'" if account else ""
        names, rows = query(f"select * from {MARTS}.{mart}{where}")
        kept = sorted((i for i, n in enumerate(names) if n != "account"), key=lambda i: names[i])
        found[mart] = canonical_rows([tuple(plain(row[i]) for i in kept) for row in rows])
    return found


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    with running_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def sandboxes() -> Iterator[dict[str, SandboxHandle]]:
    with ExitStack() as stack:
        handles = {
            name: stack.enter_context(
                running_sandbox(
                    seed=seed,
                    scale=SCALE,
                    time_scale=TIME_SCALE,
                    faults="revoke_after=1" if name == REVOKED else None,
                )
            )
            for name, seed in WORLDS.items()
        }
        yield handles


def materialize(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [DAGSTER, "asset", "materialize", "-f", str(DEFINITIONS), *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_three_accounts_in_one_postgres_warehouse_through_dagster_partitions(
    sandboxes: dict[str, SandboxHandle],
    postgres: PostgresServer,
    tmp_path: Path,
) -> None:
    server = postgres
    tokens = {name: handle.token() for name, handle in sandboxes.items()}
    project = tmp_path / "project"
    write_project(project, sandboxes, tokens)
    warehouse = server.create_database("accounts_warehouse")
    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {
        **base_env(project),
        "DAGSTER_HOME": str(home),
        "PLATFORM_SYNC_DESTINATION": "postgres",
        "DESTINATION__POSTGRES__CREDENTIALS": server.credentials(warehouse),
        # three runs at once, each loading up to [load] workers jobs on connections of their own (dlt's
        # default 20): within the test server's 40 connections (docs/scale.md)
        "LOAD__WORKERS": "5",
    }

    # the instance's storage made once, before three processes use it at once (each would create it)
    migrated = subprocess.run(
        [DAGSTER, "instance", "migrate"], env=env, cwd=project, capture_output=True, text=True, timeout=300
    )
    assert migrated.returncode == 0, migrated.stdout[-3000:] + migrated.stderr[-3000:]
    # the three partitions at once, each a run of its own with the multiprocess executor
    runs = {
        name: materialize(["--select", "group:platform_raw", "--partition", name], env, project)
        for name in WORLDS
    }
    outputs = {name: run.communicate(timeout=900)[0] for name, run in runs.items()}
    for name in LOADED:
        assert runs[name].returncode == 0, outputs[name][-5000:]
        assert "RUN_SUCCESS" in outputs[name]
        assert "multiprocess" in outputs[name], outputs[name][-3000:]
    assert runs[REVOKED].returncode != 0
    assert "RUN_FAILURE" in outputs[REVOKED]
    assert f"account {REVOKED}:" in outputs[REVOKED] and "rejected" in outputs[REVOKED], outputs[REVOKED][
        -3000:
    ]
    for name, token in tokens.items():
        assert all(token not in output for output in outputs.values()), name

    models = materialize(["--select", "group:platform_models"], env, project)
    models_output = models.communicate(timeout=900)[0]
    assert models.returncode == 0, models_output[-5000:]

    dagster = pg(server, warehouse)
    schemas = {name: f"platform_raw_{name}" for name in WORLDS}
    runs_of = {
        name: dagster(f"select resource, status from {schemas[name]}._platform_sync_runs")[1]
        for name in LOADED
    }
    assert all(rows and {status for _, status in rows} == {"loaded"} for rows in runs_of.values()), runs_of
    assert tables(dagster, schemas[REVOKED]) == []  # nothing of gamma's was loaded

    # each loaded account equals a single-account sync (and build) of its world, row for row
    for name in LOADED:
        reference_db = server.create_database(f"reference_{name}")
        pipeline = dlt.pipeline(
            pipeline_name="platform_sync",
            destination=dlt.destinations.postgres(credentials=server.credentials(reference_db)),
            dataset_name="platform_raw",
            pipelines_dir=str(tmp_path / f"reference_{name}"),
        )
        handle = sandboxes[name]
        synced = sync(
            pipeline, source_options=source_options(handle, handle.token(), rate_limit_time_scale=TIME_SCALE)
        )
        assert synced.report.failed == {}
        target = tmp_path / f"target_{name}"
        built = run_models(pipeline, "build", extra_args=MODELS_ONLY, target_path=target, echo=False)
        assert built.success, built.output[-3000:]
        reference = pg(server, reference_db)
        ours = raw_rows(dagster, schemas[name])
        assert ours == raw_rows(reference, "platform_raw"), name
        assert len(ours["sales"]) > 0
        their_marts = mart_rows(reference, None)
        assert mart_rows(dagster, name) == their_marts, name
        assert len(their_marts["fct_sales"]) == len(ours["sales"])
    _, ((others,),) = dagster(f"select count(*) from {MARTS}.fct_sales where account not in ('acme', 'beta')")
    assert others == 0


INSPECT = """
import json, sys
import dagster as dg
sys.path.insert(0, {folder!r})
import definitions as d
repo = d.defs.get_repository_def()
schedule = repo.get_schedule_def("platform_sync_accounts_hourly")
from datetime import datetime, timezone
tick = dg.build_schedule_context(
    scheduled_execution_time=datetime(2026, 11, 26, 13, 17, tzinfo=timezone.utc), repository_def=repo
)
requests = list(schedule.evaluate_tick(tick).run_requests or [])
models = [a for a in repo.asset_graph.get_all_asset_keys() if a.path[-1] == "fct_sales"]
node = repo.asset_graph.get(models[0])
print(json.dumps({{
    "partitions": d.ACCOUNT_PARTITIONS.get_partition_keys(),
    "jobs": sorted(job.name for job in repo.get_all_jobs() if not job.name.startswith("__")),
    "requests": [(r.partition_key, r.run_key) for r in requests],
    "raw_partitioned": repo.asset_graph.get(dg.AssetKey("dlt_platform_sales")).partitions_def is not None,
    "models_partitioned": node.partitions_def is not None,
    "models_condition": node.automation_condition.get_label() if node.automation_condition else None,
    "sensors": {{s.name: s.job_name for s in repo.sensor_defs}},
}}))
"""


def test_the_definitions_have_a_partition_and_an_hourly_run_per_configured_account(tmp_path: Path) -> None:
    # the accounts of the configuration, nothing in code: a partition each, a run each at every tick of
    # the schedule; the models one unpartitioned build after them
    project = tmp_path / "project"
    (project / ".dlt").mkdir(parents=True)
    (project / ".dlt" / "config.toml").write_text(
        "[accounts.acme]\nevent_ids = []\n\n[accounts.beta_store]\ncommunity_ids = [12]\n"
    )
    env = {**base_env(project), "DAGSTER_HOME": str(tmp_path)}
    script = INSPECT.format(folder=str(DEFINITIONS.parent))
    found = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=project, capture_output=True, text=True, timeout=600
    )
    assert found.returncode == 0, found.stderr[-3000:]
    figures = json.loads(found.stdout.strip().splitlines()[-1])
    assert figures["partitions"] == ["acme", "beta_store"]
    assert figures["jobs"] == ["build_models", "platform_sync_accounts"]
    assert figures["requests"] == [
        ["acme", "acme:2026-11-26T13:17:00+00:00"],
        ["beta_store", "beta_store:2026-11-26T13:17:00+00:00"],
    ]
    assert figures["raw_partitioned"] is True
    assert figures["models_partitioned"] is False
    # the models: no condition of their own, the whole build by the sensor after the accounts' runs
    # (tests/schedules/test_dagster_daemon.py runs it under the daemon)
    assert figures["models_condition"] is None
    assert figures["sensors"] == {"platform_models_after_the_accounts": "build_models"}
