"""Out of memory ends the run (issue 53): the real command under an address-space limit (`ulimit -v`)
fails with one line naming memory and the settings to change, exit status 1, and no process of it left.

Found: under `ulimit -v` 600 MB a sync printed "generator already executing" and never exited (a thread of
dlt's extract pool waited forever), its helper process with it; at 900 MB it said "can't start new
thread". The limits here are the command's own address space once it has imported what a sync runs with,
measured on this machine, plus a margin the sync's threads outgrow in its first seconds (a thread's stack
alone is 8 MB of address space). Not much lower: with less than about 120 MB above its imports, glibc
itself ends the process when a new thread's thread-local data cannot be allocated ("cannot allocate
memory for thread-local data: ABORT", exit status 127), before any Python code can say anything.
"""

from __future__ import annotations

import errno
import itertools
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dlt
import psutil
import pytest
from dlt.pipeline.exceptions import PipelineStepFailed

from pipelines.sync import out_of_memory
from pipelines.sync.load_failure import failure_line
from sandbox.running import running_sandbox
from tests.support.cli import PLATFORM_SYNC, PROJECT_ROOT, cli_env, in_folder
from tests.support.sync_helpers import source_options

MB = 2**20
# Above the command's address space after its imports; with either, the sync failed in its extract (a
# thread that could not start) and, before issue 53's fix, hung after its failure line or said "can't
# start new thread".
MARGINS_MB = (150, 250)
EXITS_WITHIN = 120  # seconds: a guard; the run fails in its first seconds


def address_space_after_imports() -> int:
    """The address space (bytes) of the command's interpreter once it has imported the command and the
    libraries a sync loads (their threads included: BLAS starts one per core)."""
    code = (
        "import pipelines.cli.main, duckdb, pyarrow.parquet\n"
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmSize:')))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True
    )
    return int(found.stdout) * 1024


def alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def in_group(group: int) -> list[psutil.Process]:
    """The live processes of a process group (the command's children stay in its group)."""
    found = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == group and alive(process):
                found.append(process)
        except (ProcessLookupError, psutil.NoSuchProcess):
            continue
    return found


@pytest.fixture(scope="module")
def world() -> Iterator[dict[str, object]]:
    with running_sandbox(seed=3, scale=3000, time_scale=600) as sandbox:
        # pages of 10 records: a walk reaches its 4th page, where a helper process starts, in its first second
        yield source_options(sandbox, sandbox.token(), items_per_page=10, decode_workers=1)


@pytest.mark.parametrize("margin_mb", MARGINS_MB, ids=[f"+{margin} MB" for margin in MARGINS_MB])
def test_out_of_memory_ends_the_run_with_one_line_and_no_process_left(
    world: dict[str, object], tmp_path: Path, margin_mb: int
) -> None:
    limit = address_space_after_imports() + margin_mb * MB
    env = in_folder(cli_env(tmp_path, world), tmp_path)

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    with (tmp_path / "stdout").open("wb") as stdout, (tmp_path / "stderr").open("wb") as stderr:
        sync = subprocess.Popen(
            [PLATFORM_SYNC, "sync", "--no-progress"],
            env=env,
            cwd=tmp_path,
            stdout=stdout,
            stderr=stderr,
            preexec_fn=limited,
            start_new_session=True,  # its own process group: its children, wherever they are
        )
    seen: dict[int, psutil.Process] = {}
    try:
        deadline = time.monotonic() + EXITS_WITHIN
        while sync.poll() is None and time.monotonic() < deadline:
            for child in in_group(sync.pid):
                seen.setdefault(child.pid, child)
            time.sleep(0.05)
        exited = sync.poll() is not None
        left = in_group(sync.pid)
        end = time.monotonic() + 10  # children notice their parent's end within a second
        while left and time.monotonic() < end:
            time.sleep(0.1)
            left = in_group(sync.pid)
    finally:
        for process in in_group(sync.pid):
            process.send_signal(signal.SIGKILL)
        if sync.poll() is None:
            sync.kill()
        sync.wait()
    err = (tmp_path / "stderr").read_text()
    assert exited, f"the command did not exit within {EXITS_WITHIN} s under {limit // MB} MB:\n{err[-3000:]}"
    assert sync.returncode == 1, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    lines = err.strip().splitlines()
    assert len(lines) == 1, err[-3000:]
    assert "out of memory" in lines[0] and f"address-space limit of {limit // MB} MB (ulimit -v)" in lines[0]
    assert "memory_limit" in lines[0] and "[extract] workers" in lines[0]
    assert [process.pid for process in left] == []
    assert [pid for pid, process in seen.items() if alive(process)] == []  # the helpers it had


# --- the mechanisms alone, each in a process of its own ---

# A command that leaves behind a thread that never ends (as dlt's extract pool did), then returns 1.
STUCK_THREAD = """
import sys, threading
from pipelines.cli.exit_guard import run_then_end
def command():
    threading.Thread(target=threading.Event().wait, name="never-ends").start()
    print("said how it ended", flush=True)
    return 1
sys.exit(run_then_end(command, own_process=True, grace=0.5))
"""
# A helper process that cannot start its watcher thread (out of memory), tied to its parent all the same.
# The parent prints the helper's pid once the helper is tied, then waits forever.
NO_THREAD_HELPER = """
import subprocess, sys, time
code = '''
import threading, time
def refused(self):
    raise RuntimeError("can't start new thread")
threading.Thread.start = refused
from sources.platform.fastpath.lifeline import end_with_parent
end_with_parent(use_prctl=False)
print("tied", flush=True)
time.sleep(600)
'''
child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
print(child.pid, child.stdout.readline().strip(), flush=True)
time.sleep(600)
"""


def _program(code: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True
    )


def test_a_thread_that_never_ends_does_not_keep_the_command_alive() -> None:
    command = _program(STUCK_THREAD)
    try:
        out, err = command.communicate(timeout=60)  # a guard: without the exit guard, it never exits
    finally:
        command.kill()
    assert (command.returncode, out, err) == (1, "said how it ended\n", "")


def test_a_helper_that_cannot_start_its_watcher_thread_still_ends_with_its_parent() -> None:
    parent = _program(NO_THREAD_HELPER)
    child: psutil.Process | None = None
    try:
        assert parent.stdout is not None
        pid, said = parent.stdout.readline().split()
        child = psutil.Process(int(pid))
        assert said == "tied"
        time.sleep(0.5)
        assert alive(child)  # it runs, watching its parent
        parent.kill()
        parent.wait(timeout=10)
        deadline = time.monotonic() + 10
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(child)
    finally:
        parent.kill()
        if child is not None and alive(child):
            child.kill()
    assert parent.stderr is not None and "Traceback" not in parent.stderr.read()


def _chained(*errors: Exception) -> Exception:
    """The last of `errors`, each raised while the one before it was handled (its context)."""
    for earlier, later in itertools.pairwise(errors):
        later.__context__ = earlier
    return errors[-1]


@pytest.mark.parametrize(
    "error",
    [
        # what dlt raised under ulimit -v: the thread's error behind the one of closing the generators
        _chained(
            RuntimeError("can't start new thread"),
            ValueError("In processing pipe `sales`: extraction of resource `sales` caused an exception"),
            ValueError("generator already executing"),
        ),
        OSError(errno.ENOMEM, "Cannot allocate memory"),
        ExceptionGroup("walks", [ValueError("a walk"), MemoryError()]),
    ],
    ids=["thread not started, then a generator", "ENOMEM", "MemoryError in a group"],
)
def test_a_step_that_ran_out_of_memory_is_said_as_such(tmp_path: Path, error: Exception) -> None:
    pipeline = dlt.pipeline(pipeline_name="memory_line", pipelines_dir=str(tmp_path), destination="duckdb")
    line = failure_line(PipelineStepFailed(pipeline, "extract", None, error))
    assert line.startswith("sync failed in the extract step: out of memory; give the sync more memory")
    assert "memory_limit" in line and "[extract] workers" in line and "\n" not in line


@pytest.mark.parametrize(("limit", "is_memory"), [(600 * MB, True), (None, False)])
def test_a_library_that_cannot_be_mapped_is_out_of_memory_only_under_an_address_space_limit(
    monkeypatch: pytest.MonkeyPatch, limit: int | None, is_memory: bool
) -> None:
    """Seen under `ulimit -v` (one run in three here): dlt's writer imported pyarrow.parquet late, the loader
    could not map it, and the step's error was "generator already executing" before that ImportError,
    which the command said as an error of its own instead of memory. Without a limit the same words mean
    something else (a library on a noexec mount)."""
    monkeypatch.setattr(out_of_memory, "address_space_limit", lambda: limit)
    error = _chained(
        ImportError(
            "/venv/lib/python3.11/site-packages/pyarrow/_parquet.cpython-311-x86_64-linux-gnu.so: "
            "failed to map segment from shared object"
        ),
        ValueError("generator already executing"),
    )
    assert out_of_memory.ran_out_of_memory(error) is is_memory


@pytest.mark.parametrize(("raised", "printed"), [("MemoryError()", False), ("ValueError('a bug')", True)])
def test_a_thread_that_fails_at_its_start_is_quiet_only_when_out_of_memory(
    raised: str, printed: bool
) -> None:
    """Seen in CI under `ulimit -v`: a thread whose start-up ran out of memory made Python print
    "Exception ignored in thread started by: <object repr() failed>" and "MemoryError:" before the
    command's one line. The command's hook (`quiet_when_out_of_memory`) keeps those quiet; any other
    exception Python can only print is still printed."""
    # the main thread waits until the hook has had the thread's exception: no sleep that a slow machine
    # could outlast
    program = (
        "import _thread, sys, threading\n"
        "from pipelines.sync.out_of_memory import quiet_when_out_of_memory\n"
        "handled = threading.Event()\n"
        "def hook(unraisable):\n"
        "    quiet_when_out_of_memory(unraisable)\n"
        "    handled.set()\n"
        "sys.unraisablehook = hook\n"
        "def start():\n"
        f"    raise {raised}\n"
        "_thread.start_new_thread(start, ())\n"
        "assert handled.wait(50), 'the thread never reached the hook'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, cwd=PROJECT_ROOT
    )
    assert done.returncode == 0, done.stderr
    assert ("Exception ignored in thread started by" in done.stderr) is printed, done.stderr
    assert ("a bug" in done.stderr) is printed
