"""The fault matrix, process side (issue 15): the real command killed with kill -9 in each step, and two
runs at once; a clean rerun of the command must then end exact against the reference sync."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sandbox.running import SandboxHandle
from tests.pipelines.sync.test_lock import wait_for_holder
from tests.support.cli import PLATFORM_SYNC, cli_env, in_folder, run_cli
from tests.support.faults import Reference
from tests.support.sync_helpers import source_options
from tests.support.warehouses import assert_exact

FOLDER = Path(".dlt") / "pipelines" / "platform_sync"


def packages(cwd: Path, where: str) -> list[Path]:
    """The load packages in one of the pipeline folder's places (`normalize/extracted`, `load/new`,
    `load/normalized`, `load/loaded`)."""
    place = cwd / FOLDER / where
    return sorted(p for p in place.iterdir() if p.is_dir()) if place.is_dir() else []


MOMENTS: dict[str, Callable[[Path, SandboxHandle], bool]] = {
    # a hundred requests answered, nothing extracted yet: fetching
    "extract": lambda cwd, sandbox: (
        sandbox.stats()["total"] >= 100 and not packages(cwd, "normalize/extracted")
    ),
    # normalize writes its files into load/new; once done, the package moves to load/normalized
    "normalize": lambda cwd, sandbox: bool(packages(cwd, "load/new")),
    "load": lambda cwd, sandbox: bool(packages(cwd, "load/normalized")),
}


def kill_when(sync: subprocess.Popen[str], moment: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert sync.poll() is None, "the run ended before the moment to kill it"
        if moment():
            sync.send_signal(signal.SIGKILL)
            sync.wait()
            return
        time.sleep(0.003)
    raise AssertionError("the moment to kill never came")


@pytest.mark.parametrize("step", list(MOMENTS))
def test_kill_9_in_each_step_then_a_rerun_ends_exact(
    tmp_path: Path, sandbox: SandboxHandle, reference: Reference, step: str
) -> None:
    env = cli_env(tmp_path, source_options(sandbox, sandbox.token()))
    sync = subprocess.Popen([PLATFORM_SYNC, "sync", "--no-progress"], env=env, cwd=tmp_path, text=True)
    kill_when(sync, lambda: MOMENTS[step](tmp_path, sandbox))
    # killed in that step: nothing of it finished
    if step == "extract":
        assert packages(tmp_path, "normalize/extracted") == []
    if step == "normalize":
        assert packages(tmp_path, "normalize/extracted") and not packages(tmp_path, "load/normalized")
    if step == "load":
        assert packages(tmp_path, "load/normalized") and not packages(tmp_path, "load/loaded")

    sandbox.reset_stats()
    rerun = run_cli(["sync", "--no-progress"], env, tmp_path)

    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    # a full run: the incremental resources were read (dlt alone only loads the pending package)
    requests = sandbox.stats()["operations"]
    assert requests.get("list_subscriptions", {}).get("200", 0) > 0
    assert requests.get("list_fiscal_documents", {}).get("200", 0) > 0
    if step != "extract":  # the pending package is loaded first, and the log says so
        assert "a previous run did not finish" in rerun.stderr
    assert packages(tmp_path, "normalize/extracted") == packages(tmp_path, "load/normalized") == []
    assert_exact(str(tmp_path / "warehouse.duckdb"), reference.database)


@pytest.mark.parametrize("place", ["same folder", "two folders, one DuckDB file"])
def test_two_runs_at_once_then_a_rerun_ends_exact(
    tmp_path: Path, sandbox: SandboxHandle, reference: Reference, place: str
) -> None:
    first_dir = tmp_path / "a"
    second_dir = first_dir if place == "same folder" else tmp_path / "b"
    first_dir.mkdir()
    second_dir.mkdir(exist_ok=True)
    database = tmp_path / "warehouse.duckdb"
    options = source_options(sandbox, sandbox.token())
    # The first run's client keeps to 30 sale details per 3 s: busy for seconds, long enough to overlap.
    slow = in_folder(cli_env(tmp_path, {**options, "rate_limit_time_scale": 20}, database), first_dir)
    first = subprocess.Popen(
        [PLATFORM_SYNC, "sync", "--no-progress"], env=slow, cwd=first_dir, stdout=subprocess.PIPE, text=True
    )
    try:
        wait_for_holder(first_dir / ".dlt" / "pipelines" / "platform_sync.lock", first.pid)
        second_env = in_folder(cli_env(tmp_path, options, database), second_dir)
        second = run_cli(["sync", "--no-progress"], second_env, second_dir)
        assert first.poll() is None, "the first run ended before the second was tried"
    finally:
        out, _ = first.communicate(timeout=300)
    assert second.returncode == 2, second.stdout + second.stderr
    assert "is in use" in second.stderr
    assert first.returncode == 0, out

    rerun = run_cli(["sync", "--no-progress"], second_env, second_dir)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert_exact(str(database), reference.database)
