"""Child processes of a sync end with it, however the sync ends (issue 15).

The sync starts helper processes (`offload.py`) and dlt starts normalize workers (`pipelines/
parallelism.py`). A sync killed with `kill -9`, or ended by SIGTERM, runs none of its cleanup: without
this its children lived on, kept the sync's stdout open (`platform-sync sync | cat` never returned) and
their memory. Each child calls `end_with_parent` when it starts: Linux then kills it when its parent
goes (`PR_SET_PDEATHSIG`), and a watcher thread checks the parent's pid as well, for the cases prctl does
not cover (another system, or a parent thread that ended before the process). Out of memory, a thread may
not start (issue 53): a child then relies on prctl, or on a timer signal in its main thread, or ends.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.25


def end_with_parent(use_prctl: bool = True, parent: int | None = None) -> None:
    """In a child process: end this process (exit status 1, no cleanup) when its parent ends.

    `use_prctl`: also ask the kernel, which acts at once; only where the parent thread that started
    this process lives as long as the parent wants it (prctl ties the child to that thread).
    `parent`: the parent's pid as the parent gave it, for a child that calls this only after a slow
    start (a new interpreter's imports), by when the parent may be gone already."""
    parent = os.getppid() if parent is None else parent
    tied = False
    if use_prctl and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            tied = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != parent:  # the parent went before prctl took effect
        os._exit(1)
    try:
        threading.Thread(target=_watch, args=(parent,), name="platform-sync-lifeline", daemon=True).start()
    except (RuntimeError, MemoryError):  # no thread to be had (out of memory: issue 53)
        if not tied and not _watch_with_alarm(parent):
            os._exit(1)  # a child that nothing would end with its parent does not run


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os._exit(1)


def _watch_with_alarm(parent: int) -> bool:
    """The watch without a thread: a timer signal checks the parent's pid (only in a main thread, and
    where no one else uses SIGALRM: a helper process's own program). Whether it could be set."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    if not in_main_thread or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, None):
        return False

    def check(signum: int, frame: object) -> None:
        if os.getppid() != parent:
            os._exit(1)

    signal.signal(signal.SIGALRM, check)
    signal.setitimer(signal.ITIMER_REAL, POLL_SECONDS, POLL_SECONDS)
    return True
