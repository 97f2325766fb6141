"""The Airflow DAG passes Airflow's own DAG import (a DagBag of schedules/airflow) with the sync task
group of dlt's helper followed by the models.

Airflow is not in the dev environment (see the `airflow` extra in pyproject.toml): the check runs in a
virtualenv of its own, `.venv/airflow-overlay`, that sees every package of `.venv` and adds Airflow
(about 20 s to build once, from PyPI; kept for the next runs).
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.cli import PROJECT_ROOT

pytestmark = pytest.mark.xdist_group("airflow")
OVERLAY = Path(sys.prefix) / "airflow-overlay"
AIRFLOW = "apache-airflow>=3,<4"  # as the `airflow` extra

IMPORT = """
import json
from airflow.dag_processing.dagbag import DagBag
bag = DagBag(dag_folder={folder!r})
dag = bag.dags.get("platform_sync")
print(json.dumps({{
    "errors": bag.import_errors,
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


def overlay_python() -> Path:
    """The overlay's interpreter, building the overlay first if needed (one builder at a time)."""
    python = OVERLAY / "bin" / "python"
    stamp = OVERLAY / ".installed"
    OVERLAY.parent.mkdir(parents=True, exist_ok=True)
    with open(OVERLAY.parent / "airflow-overlay.lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if not stamp.exists():
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(OVERLAY)], check=True)
            purelib = subprocess.run(
                [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            # .venv's packages (and their .pth files: the editable install) behind the overlay's own
            dev = sysconfig.get_paths()["purelib"]
            Path(purelib, "dev-venv.pth").write_text(f"import site; site.addsitedir({dev!r})\n")
            pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", AIRFLOW]
            subprocess.run(pip, check=True, timeout=600)
            stamp.touch()
    return python


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


def test_dag_imports_with_the_sync_group_then_the_models(tmp_path):
    found = dag_import(tmp_path, PROJECT_ROOT / "schedules" / "airflow")
    assert found["errors"] == {}
    assert found["tasks"] == {"platform_sync.platform_sync": ["models"], "models": []}
    assert found["max_active_runs"] == 1
    assert found["schedule"] == "17 * * * *"


def test_dag_import_reports_a_broken_dag(tmp_path):
    # the check above can fail: a DAG file with an error is reported, not skipped
    folder = tmp_path / "dags"
    folder.mkdir()
    source = (PROJECT_ROOT / "schedules" / "airflow" / "platform_sync_dag.py").read_text()
    (folder / "platform_sync_dag.py").write_text(source.replace('decompose="none"', 'decompose="sideways"'))
    found = dag_import(tmp_path, folder)
    assert found["tasks"] is None
    assert "sideways" in str(found["errors"])


def test_the_accounts_dag_maps_a_sync_task_per_configured_account(tmp_path):
    # the configuration names two accounts: the list task reads them, the sync is mapped over that list
    # (a task instance per account), and the models follow all of them once. Under Airflow dlt reads
    # `.dlt/` from the DAGs folder (its task group sets DLT_PROJECT_DIR to it): AIRFLOW_HOME/dags here
    settings = tmp_path / "airflow" / "dags" / ".dlt"
    settings.mkdir(parents=True)
    (settings / "config.toml").write_text(
        "[accounts.acme]\nevent_ids = []\n\n[accounts.beta_store]\ncommunity_ids = [12]\n"
    )
    found = dag_import(tmp_path, PROJECT_ROOT / "schedules" / "airflow", MAPPING)
    assert found["errors"] == {}
    assert found["tasks"] == {"accounts": ["sync_account"], "sync_account": ["models"], "models": []}
    assert found["mapped"] == {"accounts": False, "sync_account": True, "models": False}
    assert found["expanded_from"] == {"account": "accounts"}  # the argument `account`, from its list
    assert found["mapped_over"] == ["accounts"]
    assert found["at_once"] == 3
    assert found["models_trigger_rule"] == "all_done"
    assert found["accounts"] == ["acme", "beta_store"]
