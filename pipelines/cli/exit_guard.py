"""A command that has said how it ended also ends, whatever threads are left (issue 53).

Found: under `ulimit -v` 600 MB a sync printed its failure line and never exited. A thread that could not
start failed the extract; dlt then could not close the resource generators its pool still ran ("generator
already executing"), and one of them waits for sale ids that the failed resources will never give: a
thread of dlt's pool that never ends. The interpreter joins every such (non-daemon) thread before it
exits, so the process waited forever, its helper processes with it, and cron started the next run beside
it.

`ExitGuard` is a daemon thread started with the command, while a thread can still be started (once memory
ran out, one often cannot). When the command returns, `arm(status)` gives it the exit status; if the
process is still there `grace` seconds later, it flushes stdout and stderr and ends the process with that
status (`os._exit`). A process that ends by itself in time (every run that did not leave a thread behind)
exits as before: the guard then ends with it, unseen. Children end with the process
(`sources/platform/fastpath/lifeline.py`).

Only the process's own command line has one (`main()` called without arguments, as the console script
and `python -m pipelines.cli` call it): a caller of `main([...])` keeps its process (the interpreter
joins the threads of `concurrent.futures` pools before it marks its main thread done, so a guard cannot
tell an interpreter stuck in its exit from a caller that goes on).
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable

# Time the interpreter has to end by itself after the command returned: joining the threads a failed
# step left (dlt gives its pool 2 s), stopping helper processes (5 s each at most, `offload.py`).
EXIT_GRACE_SECONDS = 15.0


class ExitGuard:
    """Ends the process `grace` seconds after `arm(status)` if it has not ended by then (see the module's
    docstring)."""

    def __init__(self, grace: float = EXIT_GRACE_SECONDS) -> None:
        self.grace = grace
        self.status: int | None = None
        self._armed = threading.Event()
        with contextlib.suppress(RuntimeError, MemoryError):  # no thread even now: the process ends as it can
            threading.Thread(target=self._watch, name="platform-sync-exit-guard", daemon=True).start()

    def arm(self, status: int) -> None:
        """The command returns `status`: the process must end with it within the grace."""
        self.status = status
        self._armed.set()

    def _watch(self) -> None:
        self._armed.wait()
        time.sleep(self.grace)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(self.status if self.status is not None else 1)


def run_then_end(command: Callable[[], int], own_process: bool, grace: float = EXIT_GRACE_SECONDS) -> int:
    """`command()`'s exit status; with `own_process` (the process's own command line), the process then
    ends with that status within `grace` seconds (1 if the command raised)."""
    guard = ExitGuard(grace) if own_process else None  # started first, while a thread can start
    status = 1
    try:
        status = command()
    finally:
        if guard is not None:
            guard.arm(status)
    return status
