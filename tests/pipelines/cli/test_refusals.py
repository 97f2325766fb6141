"""A refused command changes nothing (issue 28): a command that exits 2 leaves the pipeline's working
folder (state, schemas, trace) and the warehouse byte for byte as they were."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pipelines.cli import extras
from pipelines.sync.platform_pipeline import make_pipeline
from sources.platform_client.errors import ConfigurationError
from tests.support.cli import run_cli

# The run locks (pipelines/sync/lock.py: the working folder's, the DuckDB file's) are coordination files, not
# state: a command refused after taking them leaves them with no holder (`{"holders": []}`), as any
# finished command does.
LOCK_SUFFIXES = (".lock", ".held")  # a lock file and its companion (pipelines/sync/lock.py)


def snapshot(*folders: Path) -> dict[str, bytes]:
    """Every file under `folders` (the working folders, the warehouse), but the run locks."""
    return {
        str(path): path.read_bytes()
        for folder in folders
        for path in sorted(folder.rglob("*"))
        if path.is_file() and path.suffix not in LOCK_SUFFIXES
    }


@pytest.fixture
def synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A working folder and a warehouse as a sync leaves them (one table), and the environment of the
    commands run on them."""
    database = tmp_path / "warehouse.duckdb"
    monkeypatch.setenv("DESTINATION__DUCKDB__CREDENTIALS", str(database))
    pipeline = make_pipeline()
    pipeline.run([{"id": 1}], table_name="products").raise_on_failed_jobs()
    assert Path(pipeline.working_dir).is_relative_to(tmp_path / ".dlt" / "pipelines")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION__"))}
    env["DESTINATION__DUCKDB__CREDENTIALS"] = str(database)
    env["SOURCES__PLATFORM__BASE_URL"] = "http://127.0.0.1:9"  # never reached: every command is refused
    env["SOURCES__PLATFORM__ACCESS_TOKEN"] = "not-used"
    return env


REFUSED = {
    "models into a destination without credentials": ["models", "--destination", "bigquery"],
    "sync into a destination without credentials": ["sync", "--no-progress", "--destination", "bigquery"],
    "sync into a destination dlt does not know": ["sync", "--no-progress", "--destination", "duckbd"],
    "sync of a resource that does not exist": ["sync", "--no-progress", "--resources", "prodcts"],
}


@pytest.mark.parametrize("args", list(REFUSED.values()), ids=list(REFUSED))
def test_a_refused_command_changes_nothing(tmp_path: Path, synced: dict[str, str], args: list[str]) -> None:
    before = snapshot(tmp_path)
    done = run_cli(args, synced, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert snapshot(tmp_path) == before


def test_an_unknown_source_setting_changes_nothing(tmp_path: Path, synced: dict[str, str]) -> None:
    before = snapshot(tmp_path)
    misspelled = {**synced, "SOURCES__PLATFORM__SALES_MAX_REQUEST": "5"}
    done = run_cli(["sync", "--no-progress"], misspelled, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "sales_max_request" in done.stderr and "did you mean sales_max_requests" in done.stderr
    assert snapshot(tmp_path) == before


def test_a_missing_extra_is_named_with_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(extras.EXTRA_MODULES, "dashboard", "platform_sync_not_installed_module")
    with pytest.raises(ConfigurationError) as refused:
        extras.require_extra("dashboard", "platform-sync dashboard")
    assert str(refused.value) == (
        "platform-sync dashboard needs the dashboard extra, which is not installed: "
        "pip install 'platform-sync[dashboard]' (or `make demo` / `make install` in a checkout)"
    )
    monkeypatch.undo()
    extras.require_extra("dashboard", "platform-sync dashboard")  # installed wherever this runs: no refusal


def test_the_dashboard_command_without_its_extra_exits_2(tmp_path: Path) -> None:
    """`platform-sync dashboard` where Dash cannot be imported: one line, exit 2."""
    blocker = tmp_path / "blocker"
    blocker.mkdir()
    # `None` in sys.modules: Python's own way to make a module not importable
    (blocker / "sitecustomize.py").write_text("import sys\nsys.modules['dash'] = None\n")
    env = {**os.environ, "PYTHONPATH": str(blocker)}
    done = run_cli(["dashboard"], env, tmp_path, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "configuration error: platform-sync dashboard needs the dashboard extra, which is not installed: "
        "pip install 'platform-sync[dashboard]' (or `make demo` / `make install` in a checkout)"
    )
