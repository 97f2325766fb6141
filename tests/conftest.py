"""Every test keeps dlt's working folders to itself: never the real `~/.dlt` nor a folder shared with
another worktree's tests running on the same machine.

`DLT_DATA_DIR` (where dlt, and so `platform-sync`, keeps pipelines: `pipelines/sync/working_folder.py`) is
set for the whole session at import, before any fixture of any scope runs, and to `<tmp_path>/.dlt` for
each test, so that a command run with `cwd=tmp_path` finds its working folder in `tmp_path/.dlt/pipelines`
as a project folder would. Subprocesses inherit it with the environment.
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
from pathlib import Path

import pytest

# What each test costs in CPU, where psutil is installed (`dev`; the matrix's cells install without it)
pytest_plugins = ["tests.support.cpu_meter"] if importlib.util.find_spec("psutil") else []

_SESSION_DATA_DIR = tempfile.mkdtemp(prefix="platform-sync-tests-dlt-")
os.environ["DLT_DATA_DIR"] = _SESSION_DATA_DIR
os.environ.pop("PIPELINES_DIR", None)
# A command run from the checkout (cwd=PROJECT_ROOT) must not move the checkout's own ./.dlt/pipelines
# (pipelines/sync/working_folder.py); tests/pipelines/sync/test_working_folder.py clears it to test the move.
os.environ["PLATFORM_SYNC_KEEP_LEGACY_FOLDER"] = "1"
# Tests talk only to servers they start on loopback: dlt's anonymous usage telemetry (on by default, an
# HTTPS call to dltHub at the end of each run) is off for every test and the commands they start.
os.environ["RUNTIME__DLTHUB_TELEMETRY"] = "false"


def pytest_sessionstart(session: pytest.Session) -> None:
    """A worker of the whole suite: every dbt run of its tests reads one saved parse of the project when
    dbt finds it fits (tests/support/dbt_parse.py). A run of a few tests (the matrix's) does not pay
    for it."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from tests.support.dbt_parse import share_one_parse

        share_one_parse(Path(_SESSION_DATA_DIR) / "partial_parse.msgpack")


@pytest.fixture(autouse=True)
def _own_dlt_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DLT_DATA_DIR", str(tmp_path / ".dlt"))
