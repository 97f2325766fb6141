"""Clean processes (issue 15): the helper processes of the extract (`offload.py`) and dlt's normalize
workers end when the sync ends, however it ends: killed with kill -9 or SIGTERM in the middle of the
step that runs them. The sync's stdout then reaches its end (`platform-sync sync | cat` returns)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import pytest

from sandbox.running import running_sandbox
from tests.support.cli import PLATFORM_SYNC, cli_env
from tests.support.sync_helpers import source_options


def children(pid: int) -> dict[int, str]:
    """The processes whose parent is `pid`, with their command lines."""
    found: dict[int, str] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # ended meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found[int(entry)] = cmdline
    return found


def reaches_end(stream: IO[bytes], timeout: float) -> bool:
    """Whether the end of a pipe's output comes within `timeout` (every writer closed it)."""
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([stream], [], [], left)
        if ready and os.read(stream.fileno(), 65536) == b"":
            return True
    return False


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for_child(
    sync: subprocess.Popen[bytes], kind: str, log: Path, timeout: float = 60
) -> dict[int, str]:
    """The sync's children once one of `kind` runs: a helper runs `serve_stdio`, a forked normalize
    worker has the sync's own command line."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and sync.poll() is None:
        found = children(sync.pid)
        if any(("serve_stdio" in cmd) == (kind == "helper") for cmd in found.values()):
            return found
        time.sleep(0.01)
    raise AssertionError(f"no {kind} was seen while the sync ran (exit {sync.poll()}): {log.read_text()}")


@pytest.mark.parametrize("kind", ["helper", "normalize worker"])
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill -9", "SIGTERM"])
def test_children_end_with_the_sync(tmp_path: Path, kind: str, how: signal.Signals) -> None:
    # Pages of 10 records: the lists have pages enough for the helper to start (from a walk's 4th page).
    with running_sandbox(seed=3, scale=300, time_scale=600) as sandbox:
        options = source_options(sandbox, sandbox.token(), items_per_page=10, decode_workers=1)
        env = {**cli_env(tmp_path, options), "NORMALIZE__WORKERS": "2"}
        sync = subprocess.Popen(
            [PLATFORM_SYNC, "sync", "--no-progress"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=(tmp_path / "stderr.log").open("wb"),
        )
        try:
            seen = wait_for_child(sync, kind, log=tmp_path / "stderr.log")
            sync.send_signal(how)
            assert sync.stdout is not None
            assert reaches_end(sync.stdout, timeout=10)  # no process holds the sync's stdout open
            sync.wait(timeout=10)
            deadline = time.monotonic() + 5
            while any(alive(pid) for pid in seen) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert [cmd for pid, cmd in seen.items() if alive(pid)] == []
        finally:
            for pid in [sync.pid, *children(sync.pid)]:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


# A parent that starts a child which would wait forever, prints the child's pid, and waits too.
FORKED_WORKER = """
import multiprocessing, sys, time
from pipelines.sync.parallelism import workers_end_with_the_sync
workers_end_with_the_sync()
child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(600,))
child.start()
print(child.pid, flush=True)
time.sleep(600)
"""
# The helper's input is the test's pipe, which the test keeps open: its end never comes, only the
# parent's end can end the helper. The parent is killed before the helper has even started.
STARTED_HELPER = """
import os, subprocess, sys, time
from sources.platform.fastpath.offload import PARENT_PID_VARIABLE
code = "from sources.platform.fastpath.offload import serve_stdio; serve_stdio()"
env = {**os.environ, PARENT_PID_VARIABLE: str(os.getpid())}
child = subprocess.Popen([sys.executable, "-c", code], env=env)
print(child.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.parametrize("program", [FORKED_WORKER, STARTED_HELPER], ids=["forked worker", "helper"])
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM], ids=["kill -9", "SIGTERM"])
def test_a_child_that_would_wait_forever_ends_with_its_parent(program: str, how: signal.Signals) -> None:
    """The mechanism alone, with children that never end by themselves (no pipe from the parent to end
    their input): without `lifeline.end_with_parent` they outlive the parent and hold its stdout."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[4])}
    parent = subprocess.Popen(
        [sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env
    )
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        time.sleep(0.3)
        assert alive(child)
        parent.send_signal(how)
        parent.wait(timeout=10)
        assert reaches_end(parent.stdout, timeout=5)  # the child let go of the parent's stdout
        deadline = time.monotonic() + 5
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child)
    finally:
        for pid in (parent.pid, child if "child" in locals() else None):
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
