"""Normalize on more than one core unless configured otherwise.

dlt normalizes in one process by default. Our flat tables reach normalize as parquet files that it only
moves, but the rows of the resources with child tables (subscriptions, event attendees) are normalized
one by one in Python: a large part of a sync (bench/README.md). dlt can hand the
extracted files to a pool of processes (`normalize.workers`, dlt's public setting); dlt splits the files
between the workers itself. (Until issue 28 a module of ours replaced dlt's split with one by work;
it replaced private functions of dlt and is gone: docs/architecture.md, "What we rely on in dlt".)

The extract writes one file per table. Starting a new file every N rows (`[sources.data_writer]
file_max_items`) would let one large table be normalized by both workers, but it gains nothing in
normalize and doubles the load (bench/README.md), because DuckDB merges a table whose staging copy
was loaded from several files far more slowly. So no default of ours; it stays dlt's setting to choose.

`[normalize] workers` in `.dlt/config.toml` (or `NORMALIZE__WORKERS`) wins over the default.
"""

from __future__ import annotations

import os
import threading

from pipelines.sync.defaults import set_default
from sources.platform.fastpath.lifeline import end_with_parent

# Two tables dominate the step and dlt hands a worker whole files: a third worker would mostly idle,
# and each worker is a process with memory of its own.
MAX_NORMALIZE_WORKERS = 2


def default_normalize_workers(cpu_count: int | None) -> int:
    """One worker per core (`os.cpu_count()`: None if unknown), at most `MAX_NORMALIZE_WORKERS`."""
    return max(1, min(MAX_NORMALIZE_WORKERS, cpu_count or 1))


def parallel_normalize() -> None:
    """Default dlt's `normalize.workers` where it is not configured (dlt configuration only: nothing
    else in the process changes)."""
    set_default("normalize.workers", default_normalize_workers(os.cpu_count()))


_registered = threading.Lock()
_REGISTERED: list[bool] = []
_forking_thread_is_main = [False]  # set in the parent just before each fork; the child inherits it


def workers_end_with_the_sync() -> None:
    """dlt forks its normalize workers from the main thread: each forked child ends when this process
    ends, even by kill -9 or SIGTERM, instead of living on with the sync's stdout open
    (`sources/platform/fastpath/lifeline.py`). Registered once per process, and only by our command
    line (`pipelines/sync/process_settings.py`): an at-fork hook acts on every fork of the process, which in
    a host such as an Airflow worker is not ours to change. (From another thread dlt spawns them
    instead; spawned workers are not tied to the sync here.)"""
    with _registered:
        if not _REGISTERED:
            os.register_at_fork(before=_before_fork, after_in_child=_in_forked_child)
            _REGISTERED.append(True)


def _before_fork() -> None:
    _forking_thread_is_main[0] = threading.current_thread() is threading.main_thread()


def _in_forked_child() -> None:
    # prctl ties the child to the thread that forked it: only the main thread lives as long as the sync.
    end_with_parent(use_prctl=_forking_thread_is_main[0])
