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

from tests.ops.conftest import PROJECT_ROOT

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


def dag_import(tmp_path, folder) -> dict[str, object]:
    env = {
        "PATH": "/usr/bin:/bin",
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "PLATFORM_SYNC_PROJECT_DIR": str(tmp_path),
        "DESTINATION__DUCKDB__CREDENTIALS": str(tmp_path / "warehouse.duckdb"),
        "PYTHONPATH": str(PROJECT_ROOT),
    }
    result = subprocess.run(
        [str(overlay_python()), "-c", IMPORT.format(folder=str(folder))],
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
