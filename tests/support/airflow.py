"""Airflow in the tests: a virtualenv of its own, `.venv/airflow-overlay`, that sees every package of `.venv`
and adds Airflow (Airflow is not in the dev environment: see the `airflow` extra in pyproject.toml; built
once, kept for the next runs), and the commands a worker or a person runs with it."""

from __future__ import annotations

import contextlib
import fcntl
import sqlite3
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.support.cli import PROJECT_ROOT

OVERLAY = Path(sys.prefix) / "airflow-overlay"
AIRFLOW = "apache-airflow>=3,<4"  # as the `airflow` extra
AIRFLOW_CHECKPOINT = 20  # sale details per pass: the test worlds' sales are several passes
DATE = "2026-12-06"


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


def airflow_env(tmp_path: Path, project: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """A worker's environment: a throwaway AIRFLOW_HOME (SQLite metadata, migrated here), the DAGs folder,
    the project folder, and `env` (the settings, the tokens); nothing else inherited."""
    settings = {
        **(env or {}),
        "PATH": f"{OVERLAY / 'bin'}:/usr/bin:/bin",
        "AIRFLOW_HOME": str(tmp_path / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(PROJECT_ROOT / "schedules" / "airflow"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "PLATFORM_SYNC_PROJECT_DIR": str(project),
        "SYNC__CHECKPOINT_REQUESTS": str(AIRFLOW_CHECKPOINT),
        "PYTHONPATH": str(PROJECT_ROOT),
    }
    airflow(["db", "migrate"], settings, tmp_path)
    return settings


def airflow(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """`airflow ARGS` in a process of its own, as a worker or a person runs it."""
    return subprocess.run(
        [str(overlay_python()), "-m", "airflow", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def task_states(tmp_path: Path, dag_id: str) -> dict[tuple[str, int], str]:
    """The states of the DAG's task instances (task, map index) in the Airflow metadata database."""
    with contextlib.closing(sqlite3.connect(tmp_path / "airflow" / "airflow.db")) as connection:
        rows = connection.execute(
            "select task_id, map_index, state from task_instance where dag_id = ?", [dag_id]
        ).fetchall()
    return {(task, index): state for task, index, state in rows}
