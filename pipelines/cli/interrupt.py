"""Ctrl-C and SIGTERM (what a scheduler sends to stop a job) end a sync cleanly.

The first signal abandons the step that runs: no request is made after it, the run's locks are released,
one line says how far the run got ("interrupted: N tables loaded, nothing lost, the next run goes on from
here") and the summary of what the run had done, and the process exits with 130 (SIGINT) or 143
(SIGTERM), the statuses a shell gives a process ended by those signals. A second signal ends the process
at once, with the same status.

Abandoning a step is safe, as a kill -9 in any step is (tests/pipelines/sync/faults/test_kills.py): an extract
that did not finish commits nothing (dlt moves the incremental state only with a finished extract's package);
a package that was being normalized or loaded stays in the pipeline folder, and the next run loads the rest of
it before it syncs (`finish_pending_packages`). Exiting at once also means no dlt thread pool is asked to shut
down under a running generator, which is what Ctrl-C used to turn into an error.

dlt intercepts SIGINT and SIGTERM itself during normalize and load unless `runtime.intercept_signals`
is false; the command line sets that, so the same handler applies in every step.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import FrameType

import dlt

EXIT_STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
INTERRUPTED_LINE = "interrupted: {tables} loaded, nothing lost, the next run goes on from here"


@dataclass
class Interruption:
    """What runs when a signal arrives: `on_signal(signum)` says what the run did (it must not block);
    then the process ends. `release` callbacks run first (the run's locks)."""

    on_signal: Callable[[int], None]
    release: list[Callable[[], None]] = field(default_factory=list)
    _received: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handle(self, signum: int, frame: FrameType | None = None) -> None:
        status = EXIT_STATUS.get(signal.Signals(signum), 128 + signum)
        with self._lock:
            self._received += 1
            first = self._received == 1
        if not first:  # a second Ctrl-C: whatever the first one was doing, stop now
            os._exit(status)
        # The threads still running log what the interruption causes them (a sandbox that ended with the
        # same Ctrl-C refuses connections): noise, and it would be written across the display as it stops.
        logging.disable(logging.CRITICAL)
        for release in self.release:
            with contextlib.suppress(Exception):
                release()
        with contextlib.suppress(Exception):
            self.on_signal(signum)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(status)


@contextlib.contextmanager
def stop_on_signals(interruption: Interruption) -> Iterator[Interruption]:
    """SIGINT and SIGTERM call `interruption.handle` for the body of the `with` (main thread only)."""
    os.environ["RUNTIME__INTERCEPT_SIGNALS"] = "false"
    previous = {sig: signal.getsignal(sig) for sig in EXIT_STATUS}
    for sig in EXIT_STATUS:
        signal.signal(sig, interruption.handle)
    try:
        yield interruption
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def tables_loaded_since(pipeline: dlt.Pipeline, started: float) -> list[str]:
    """The data tables with a load job completed by packages of this run (dlt's load ids are the unix time
    the package was made: those from `started` on): packages loaded whole, and the finished jobs of a
    package whose load was interrupted."""
    tables: set[str] = set()
    load_ids = [*pipeline.list_completed_load_packages(), *pipeline.list_normalized_load_packages()]
    for load_id in load_ids:
        with contextlib.suppress(ValueError):
            if float(load_id) < started:
                continue
        info = pipeline.get_load_package_info(load_id)
        for job in info.jobs.get("completed_jobs", []):
            table = job.job_file_info.table_name
            if not table.startswith("_dlt"):
                tables.add(table)
    return sorted(tables)


def interrupted_line(tables: list[str]) -> str:
    count = len(tables)
    return INTERRUPTED_LINE.format(tables=f"{count} table" if count == 1 else f"{count} tables")
