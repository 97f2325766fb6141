"""Ctrl-C and SIGTERM (issue 30): the real command, interrupted in the extract and in the load step, ends
with 130 / 143, one line saying how far it got, the summary, its locks released and no traceback; a
clean rerun then ends exact against the reference sync."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from sandbox.running import SandboxHandle
from tests.pipelines.sync.faults.test_kills import MOMENTS
from tests.support.cli import PLATFORM_SYNC, cli_env, run_cli
from tests.support.faults import Reference
from tests.support.sync_helpers import source_options
from tests.support.warehouses import assert_exact

LINE = "interrupted: {} loaded, nothing lost, the next run goes on from here"


def interrupt_when(
    sync: subprocess.Popen[str], moment: str, cwd: Path, sandbox: SandboxHandle, sig: int
) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert sync.poll() is None, "the run ended before the moment to interrupt it"
        if MOMENTS[moment](cwd, sandbox):
            sync.send_signal(sig)
            return
        time.sleep(0.003)
    raise AssertionError("the moment to interrupt never came")


def lock_holders(cwd: Path) -> dict[str, list[object]]:
    """The holders recorded in every lock file of the run (pipeline and DuckDB file)."""
    files = [*(cwd / ".dlt" / "pipelines").glob("*.lock"), *cwd.glob("*.duckdb.lock")]
    assert files
    return {path.name: json.loads(path.read_text() or '{"holders": []}')["holders"] for path in files}


@pytest.mark.parametrize(
    ("sig", "status", "step"),
    [
        (signal.SIGINT, 130, "extract"),
        (signal.SIGTERM, 143, "extract"),
        (signal.SIGINT, 130, "load"),
    ],
    ids=["ctrl-c-extract", "sigterm-extract", "ctrl-c-load"],
)
def test_interrupted_then_a_rerun_ends_exact(
    tmp_path: Path, sandbox: SandboxHandle, reference: Reference, sig: int, status: int, step: str
) -> None:
    env = cli_env(tmp_path, source_options(sandbox, sandbox.token()))
    sync = subprocess.Popen(
        [PLATFORM_SYNC, "sync", "--no-progress"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    interrupt_when(sync, step, tmp_path, sandbox, sig)
    stdout, stderr = sync.communicate(timeout=60)
    requests_at_exit = sandbox.stats()["total"]

    assert sync.returncode == status, stdout + stderr
    assert "Traceback" not in stdout + stderr and "generator already executing" not in stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert lines[-1].startswith("interrupted: ") and lines[-1].endswith(
        "loaded, nothing lost, the next run goes on from here"
    ), stderr
    if step == "extract":
        assert lines[-1] == LINE.format("0 tables"), stderr
        assert "rows read in the extract step were not loaded" in stdout
    assert stdout.rstrip().endswith(f"the run was INTERRUPTED (exit status {status}).")
    assert all(holders == [] for holders in lock_holders(tmp_path).values()), lock_holders(tmp_path)
    time.sleep(0.5)
    assert sandbox.stats()["total"] == requests_at_exit  # nothing asked after the process ended

    rerun = run_cli(["sync", "--no-progress"], env, tmp_path)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    if step == "load":
        assert "a previous run did not finish" in rerun.stderr
    assert_exact(str(tmp_path / "warehouse.duckdb"), reference.database)


def test_interrupted_with_json_logs_says_so_in_json(tmp_path: Path, sandbox: SandboxHandle) -> None:
    env = cli_env(tmp_path, source_options(sandbox, sandbox.token()))
    sync = subprocess.Popen(
        [PLATFORM_SYNC, "--log-format", "json", "sync", "--progress-interval", "1"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    interrupt_when(sync, "extract", tmp_path, sandbox, signal.SIGTERM)
    stdout, stderr = sync.communicate(timeout=60)
    assert sync.returncode == 143, stdout + stderr
    records = [json.loads(line) for line in stderr.splitlines()]  # every line is one JSON object
    assert records[-1]["event"] == "interrupted"
    assert records[-1]["message"] == LINE.format("0 tables")
    (summary,) = [json.loads(line) for line in stdout.splitlines()]
    assert summary["event"] == "summary" and summary["exit_status"] == 143
    assert summary["failure"] == "interrupted" and summary["step"] == "extract"
    assert summary["tables_loaded"] == [] and sum(summary["requests"].values()) > 0
