"""The Airflow DAGs pass Airflow's own DAG import (a DagBag of schedules/airflow): the sync task followed
by the models, and a sync task mapped over the configured accounts; and `platform_sync` runs task by task
as workers run it. In Airflow's virtualenv of its own (tests/support/airflow.py). The accounts' DAG run:
tests/pipelines/accounts/test_all_accounts.py, beside the single-account syncs it is compared with.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import duckdb
import pytest
import tomlkit

from pipelines.sync.checkpoints import Checkpoints
from pipelines.sync.platform_pipeline import sync
from sandbox.running import running_sandbox
from tests.support.airflow import AIRFLOW_CHECKPOINT, DATE, airflow, airflow_env, overlay_python
from tests.support.cli import PROJECT_ROOT
from tests.support.faults import pipeline_in

pytestmark = pytest.mark.xdist_group("airflow")

IMPORT = """
import json, os
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder={folder!r})
dag = bag.dags.get("platform_sync")
print(json.dumps({{
    "errors": bag.import_errors,
    "airflow_secrets": os.environ.get("PROVIDERS__ENABLE_AIRFLOW_SECRETS"),
    "tasks": {{t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks}} if dag else None,
    "max_active_runs": dag.max_active_runs if dag else None,
    "schedule": str(dag.schedule) if dag else None,
}}))
"""


MAPPING = """
import json
from airflow.dag_processing.dagbag import DagBag
from airflow.sdk.definitions.mappedoperator import MappedOperator
bag = DagBag(dag_folder={folder!r})
dag = bag.dags["platform_sync_accounts"]
mapped = dag.get_task("sync_account")
print(json.dumps({{
    "errors": bag.import_errors,
    "tasks": {{t.task_id: sorted(t.downstream_task_ids) for t in dag.tasks}},
    "mapped": {{t.task_id: isinstance(t, MappedOperator) for t in dag.tasks}},
    "expanded_from": {{k: v.operator.task_id for k, v in mapped.op_kwargs_expand_input.value.items()}},
    "mapped_over": sorted(t.task_id for t in mapped.iter_mapped_dependencies()),
    "at_once": mapped.partial_kwargs.get("max_active_tis_per_dagrun"),
    "models_trigger_rule": str(dag.get_task("models").trigger_rule.value),
    "accounts": dag.get_task("accounts").python_callable(),
}}))
"""


def dag_import(tmp_path, folder, script: str = IMPORT) -> dict[str, object]:
    env = {
        "PATH": "/usr/bin:/bin",
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "PLATFORM_SYNC_PROJECT_DIR": str(tmp_path),
        "DESTINATION__DUCKDB__CREDENTIALS": str(tmp_path / "warehouse.duckdb"),
        "PYTHONPATH": str(PROJECT_ROOT),
    }
    result = subprocess.run(
        [str(overlay_python()), "-c", script.format(folder=str(folder))],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_dag_imports_with_the_sync_task_then_the_models(tmp_path):
    found = dag_import(tmp_path, PROJECT_ROOT / "schedules" / "airflow")
    assert found["errors"] == {}
    assert found["tasks"] == {"sync": ["models"], "models": []}
    assert found["max_active_runs"] == 1
    assert found["schedule"] == "17 * * * *"
    # dlt's Airflow secrets provider off unless the workers' environment says otherwise: with it on, every
    # process dlt starts for a sync imports Airflow again (the DAG file's comment)
    assert found["airflow_secrets"] == "false"


def test_dag_import_reports_a_broken_dag(tmp_path):
    # the check above can fail: a DAG file with an error is reported, not skipped
    folder = tmp_path / "dags"
    folder.mkdir()
    source = (PROJECT_ROOT / "schedules" / "airflow" / "platform_sync_dag.py").read_text()
    (folder / "platform_sync_dag.py").write_text(
        source.replace('trigger_rule="all_done"', 'trigger_rule="sideways"')
    )
    found = dag_import(tmp_path, folder)
    assert found["tasks"] is None
    assert "sideways" in str(found["errors"])


def test_the_accounts_dag_maps_a_sync_task_per_configured_account(tmp_path):
    # the configuration names two accounts: the list task reads them, the sync is mapped over that list
    # (a task instance per account), and the models follow all of them once. The tasks read `.dlt/` from
    # the project folder (PLATFORM_SYNC_PROJECT_DIR), as the DAG's first paragraph says
    settings = tmp_path / ".dlt"
    settings.mkdir(parents=True)
    (settings / "config.toml").write_text(
        "[accounts.acme]\nevent_ids = []\n\n[accounts.beta_store]\ncommunity_ids = [12]\n"
    )
    found = dag_import(tmp_path, PROJECT_ROOT / "schedules" / "airflow", MAPPING)
    assert found["errors"] == {}
    assert found["tasks"] == {
        "accounts": ["sync_account"],
        "sync_account": ["accounts_loaded", "models"],
        "models": ["accounts_loaded"],
        "accounts_loaded": [],
    }
    assert found["mapped"] == {
        "accounts": False,
        "sync_account": True,
        "models": False,
        "accounts_loaded": False,
    }
    assert found["expanded_from"] == {"account": "accounts"}  # the argument `account`, from its list
    assert found["mapped_over"] == ["accounts"]
    assert found["at_once"] == 3
    assert found["models_trigger_rule"] == "all_done"
    assert found["accounts"] == ["acme", "beta_store"]


def test_each_task_in_its_own_process_syncs_in_passes_into_the_project_then_builds_the_models(tmp_path):
    """The DAG `platform_sync` task by task as workers run them, each `airflow tasks test` a process of its
    own (AIRFLOW_HOME on SQLite, `.dlt/` in PLATFORM_SYNC_PROJECT_DIR as the DAG's first paragraph says):
    the sync task loads the project's own DuckDB file in passes of `checkpoint_requests`, its raw tables
    equal a sync of the same world from code, and the models task, in the next process, builds the marts
    on that file."""
    from tests.support.sync_helpers import source_options, warehouse_tables

    project = tmp_path / "project"
    (project / ".dlt").mkdir(parents=True)
    with running_sandbox(seed=11, scale=100, time_scale=600.0) as sandbox:
        token = sandbox.token()
        settings = source_options(sandbox, token)
        settings.pop("access_token")
        config = tomlkit.document()
        config.add("sources", {"platform": settings})
        (project / ".dlt" / "config.toml").write_text(tomlkit.dumps(config))
        env = airflow_env(tmp_path, project, {"SOURCES__PLATFORM__ACCESS_TOKEN": token})
        sandbox.reset_stats()
        synced = airflow(["tasks", "test", "platform_sync", "sync", DATE], env, tmp_path)
        assert synced.returncode == 0, synced.stdout[-3000:] + synced.stderr[-3000:]
        details = int(sum(sandbox.stats()["operations"].get("sale_details", {}).values()))
        built = airflow(["tasks", "test", "platform_sync", "models", DATE], env, tmp_path)
        assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
        reference = tmp_path / "reference"
        options = source_options(sandbox, token)
        sync(pipeline_in(reference), source_options=options, checkpoints=Checkpoints(0))
    database = project / "platform_sync.duckdb"  # the project's file, not a temporary folder's
    with duckdb.connect(str(database), read_only=True) as connection:
        loads = connection.execute("select count(*) from platform_raw._dlt_loads where status = 0").fetchone()
        marts = connection.execute("select count(*) from marts.fct_sales").fetchone()
        sales = connection.execute("select count(*) from platform_raw.sales").fetchone()
        recorded = connection.execute(
            "select count(*) from platform_raw._platform_sync_runs where status = 'loaded'"
        ).fetchone()
    passes = math.ceil(details / AIRFLOW_CHECKPOINT)
    assert passes >= 2 and loads == (passes + 1,)  # the passes, then the run's record
    assert sales is not None and sales[0] > 0 and marts == sales
    assert recorded is not None and recorded[0] > 0

    def data(path: Path) -> dict[str, Any]:
        return {k: v for k, v in warehouse_tables(str(path)).items() if not k.startswith("_platform")}

    assert data(database) == data(reference / "warehouse.duckdb")
