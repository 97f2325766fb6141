"""The command line as a new process would run it, without paying a new process's imports each time.

Each `platform-sync` subprocess of the suite spent about 2 CPU-seconds importing dlt, pydantic and our
modules before it read its first argument (measured 2026-12-02: `platform-sync --help` 1.7 s of CPU), and
the suite starts a few hundred of them. A template process per test worker imports the command once; each
run is a fork of it that takes the run's environment, folder, arguments, standard streams and a fresh
dlt context (`Container.reset_main_thread`, what dlt's own process pools do in a worker), then runs
`pipelines.cli.main.main` as the console script does (`sys.exit(main())`: an escaping exception prints
its traceback and exits 1, atexit handlers run). A child is a real process: its exit status, its
signals, its own threads and subprocesses are its own.

What it does not cover, and the suite covers elsewhere: the console script itself and Python's start-up.
A run whose environment sets what only a process's start reads (`_AT_START`: a sitecustomize on
PYTHONPATH, MALLOC_ARENA_MAX, ...) differently from the suite's gets a new process.
The tests that send a command signals or read its output while it runs start the installed
`platform-sync` (`tests/support/cli.py` `PLATFORM_SYNC`), as do the version matrix's refusals
(`PLATFORM_SYNC_FORKED_COMMAND=0` turns forking off for a whole run).
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]

# Runs in the template process: imports, then one fork per request line; the replies go to a copy of
# its stdout, which no child keeps.
_TEMPLATE = r"""
import json, os, sys
replies = os.fdopen(os.dup(1), "w")
import pipelines.cli.main as command

def fresh_dlt_context():
    from dlt.common.configuration.container import Container
    reset = getattr(Container, "reset_main_thread", None)
    if reset is not None:
        reset()
        return
    from dlt.common.configuration.specs.config_section_context import ConfigSectionContext
    from dlt.common.configuration.specs.pluggable_run_context import PluggableRunContext
    container = Container()
    for spec in (PluggableRunContext, ConfigSectionContext):
        if spec in container:
            del container[spec]

replies.write("ready\n")
replies.flush()
for line in sys.stdin.buffer:
    job = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        replies.close()
        os.chdir(job["cwd"])
        os.environ.clear()
        os.environ.update(job["env"])
        for fd, path, flags in (
            (0, os.devnull, os.O_RDONLY),
            (1, job["stdout"], os.O_WRONLY | os.O_TRUNC),
            (2, job["stderr"], os.O_WRONLY | os.O_TRUNC),
        ):
            opened = os.open(path, flags)
            os.dup2(opened, fd)
            os.close(opened)
        sys.argv = [job["argv0"], *job["args"]]
        fresh_dlt_context()
        sys.exit(command.main(job["args"]))
    replies.write(json.dumps({"pid": pid}) + "\n")
    replies.flush()
    _, status = os.waitpid(pid, 0)
    replies.write(json.dumps({"status": os.waitstatus_to_exitcode(status)}) + "\n")
    replies.flush()
"""


class _Template:
    """One template process, started on first use, serving one run at a time."""

    def __init__(self) -> None:
        self.busy = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.pending = b""
        self.started_with: dict[str, str] = {}
        self.folder = tempfile.mkdtemp(prefix="platform-sync-forked-command-")

    def _started(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            # started in an empty folder with the suite's environment: nothing of a test's project is read
            # at import, and every run sets its own
            self.process = subprocess.Popen(
                [sys.executable, "-c", _TEMPLATE],
                cwd=self.folder,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env=dict(os.environ),
            )
            self.started_with = _read_at_start(os.environ)
            self.pending = b""
            if self._reply(timeout=300) != "ready":
                raise RuntimeError("the forked command's template process did not start")
        return self.process

    def _reply(self, timeout: float) -> str | None:
        """The template's next line, or None if none came within `timeout` seconds (read from its pipe
        directly: a buffered reader could hold a line that select() then never sees)."""
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError("the forked command's template process ended")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return line.decode()

    def run(
        self, command: list[str], args: list[str], env: dict[str, str], cwd: Path, timeout: float
    ) -> subprocess.CompletedProcess[str]:
        process = self._started()
        assert process.stdin is not None
        with tempfile.TemporaryDirectory(dir=self.folder) as streams:
            out, err = Path(streams, "stdout"), Path(streams, "stderr")
            out.touch()
            err.touch()
            job = {"argv0": command[-1], "args": args, "env": env, "cwd": str(cwd), "stdout": str(out),
                   "stderr": str(err)}  # fmt: skip
            process.stdin.write((json.dumps(job) + "\n").encode())
            process.stdin.flush()
            started = self._reply(timeout=60)
            if started is None:
                raise RuntimeError("the forked command's template process did not fork")
            pid = json.loads(started)["pid"]
            reply = self._reply(timeout)
            if reply is None:
                os.kill(pid, signal.SIGKILL)
                self._reply(timeout=60)
                raise subprocess.TimeoutExpired([*command, *args], timeout, out.read_text(), err.read_text())
            status = json.loads(reply)["status"]
            return subprocess.CompletedProcess([*command, *args], status, out.read_text(), err.read_text())

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:  # the template exits at the end of its input; a loaded machine may take its time
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


# Read once, when a process starts (by Python: sitecustomize on PYTHONPATH, PYTHONHASHSEED...; by the C
# library: MALLOC_ARENA_MAX...; by the time module: TZ): a run that sets one differently needs a new process.
_AT_START = ("PYTHON", "MALLOC_", "LD_", "GLIBC_", "TZ")


def _read_at_start(env: Mapping[str, str]) -> dict[str, str]:
    kept = {k: v for k, v in env.items() if k.startswith(_AT_START)}
    # the project on the path is the editable install's own
    path = [p for p in kept.pop("PYTHONPATH", "").split(os.pathsep) if p and Path(p) != PROJECT_ROOT]
    return {**kept, "PYTHONPATH": os.pathsep.join(path)}


def _forkable(template: _Template, env: Mapping[str, str]) -> bool:
    template_env = template.started_with if template.process is not None else _read_at_start(os.environ)
    return _read_at_start(env) == template_env


_TEMPLATES: dict[int, _Template] = {}  # by process: a forked test worker gets its own


def _template() -> _Template:
    template = _TEMPLATES.get(os.getpid())
    if template is None:
        template = _TEMPLATES[os.getpid()] = _Template()
        atexit.register(template.close)
    return template


def forking_on() -> bool:
    return os.environ.get("PLATFORM_SYNC_FORKED_COMMAND", "1") != "0"


def run_command(
    command: list[str], args: list[str], env: dict[str, str], cwd: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    """`[*command, *args]` (the command line's console script, or `python -m pipelines.cli`) run to its
    end, as `subprocess.run(..., capture_output=True, text=True)` would: forked from the template when
    it is free, else (another thread's run holds it, or forking is off) a new process."""
    template = _template()
    if forking_on() and _forkable(template, env) and template.busy.acquire(blocking=False):
        try:
            return template.run(command, args, env, cwd, timeout)
        finally:
            template.busy.release()
    return subprocess.run(
        [*command, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
