"""Hand the memory that extract and normalize freed back to the operating system between steps.

The load step is where a sync's memory peaks with DuckDB: the database's own allocations (up to its
`memory_limit`, plus what it keeps outside that limit) come on top of whatever the process still
holds. After extract and normalize, the process holds a lot it no longer uses: freed Python objects
whose pages the C allocator keeps, and Arrow's memory pool, which would otherwise stay under DuckDB's
allocations (bench/README.md).

The normalize step starts the same way: its workers are forked from this process
(`pipelines/sync/parallelism.py`), and a forked worker starts out holding every page the process holds.
Released first, the process and its workers together peak lower (bench/README.md).

Arrow's default pool (mimalloc) keeps freed pages for reuse; `use_system_arrow_pool` makes Arrow
allocate with the C allocator instead, whose free pages `malloc_trim` returns (lower peaks in every
step, same speed: bench/README.md).

Threads: glibc gives each thread that allocates while others do an arena of its own, up to eight per
core, and an arena keeps its freed pages. The extract runs a dozen threads (dlt's pool, the HTTP
client, Arrow): `limit_malloc_arenas` caps them at `MALLOC_ARENAS` for the process (bench/README.md).

The hook is dlt's progress collector (`dlt.pipeline(progress=...)`), whose public `on_start_trace_step`
dlt calls at the start of every step; `releasing_memory` adds the release to the progress display the
user asked for, if any.

Process-wide settings (`use_system_arrow_pool`, `limit_malloc_arenas`) change the allocator of the
whole process: only our command line applies them (`pipelines/sync/process_settings.py`), never the source
or the pipeline when a host such as Airflow or Dagster imports them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import os
from collections.abc import Callable
from functools import cache
from typing import Any

import pyarrow as pa
from dlt.common.runtime.collector import Collector, NullCollector

from pipelines.sync.defaults import set_default

# Rows that dlt's writers hold per table before writing them to a file (dlt's default: 5000). Rows with
# lists are large Python objects: lower peaks in every step with 1000, at the same speed
# (bench/README.md). (dlt's Airflow helper sets the same default.)
WRITER_BUFFER_ITEMS = 1000


# glibc's `mallopt` parameter for the most arenas the allocator creates (malloc.h)
M_ARENA_MAX = -8
MALLOC_ARENAS = 2


@cache
def _libc_function(function: str) -> Callable[..., int] | None:
    """A function of glibc (`malloc_trim`, `mallopt`); None with another C library or none found."""
    name = ctypes.util.find_library("c")
    try:
        return getattr(ctypes.CDLL(name), function, None) if name else None
    except OSError:
        return None


def limit_malloc_arenas() -> None:
    """Cap glibc's malloc arenas of this process at `MALLOC_ARENAS`, unless glibc's own
    `MALLOC_ARENA_MAX` variable chose a number (see the module's docstring)."""
    mallopt = _libc_function("mallopt")
    if mallopt is not None and not os.environ.get("MALLOC_ARENA_MAX"):
        mallopt(M_ARENA_MAX, MALLOC_ARENAS)


def release_freed_memory() -> None:
    """Collect garbage, then return freed pages (Arrow's pool, the C allocator) to the system."""
    gc.collect()
    pa.default_memory_pool().release_unused()
    trim = _libc_function("malloc_trim")  # returns the free pages of every malloc arena
    if trim is not None:
        trim(0)


def bound_writer_buffers() -> None:
    """Default dlt's `data_writer.buffer_max_items` to `WRITER_BUFFER_ITEMS` where it is not configured."""
    set_default("data_writer.buffer_max_items", WRITER_BUFFER_ITEMS)


def use_system_arrow_pool() -> None:
    """Make the C allocator Arrow's memory pool of this process, unless the user chose one with Arrow's
    own `ARROW_DEFAULT_MEMORY_POOL` variable."""
    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        pa.set_memory_pool(pa.system_memory_pool())


class ReleaseMemoryBetweenSteps:
    """The mark of a progress collector that releases freed memory when the normalize and load steps
    start, then does what the collector does (`releasing_memory`)."""


@cache
def _releasing_class(collector_class: type[Collector]) -> type[Collector]:
    def on_start_trace_step(self: Collector, trace: Any, step: Any, pipeline: Any) -> None:
        # the collector's public hook, which dlt calls at the start of every step
        if step in ("normalize", "load"):
            release_freed_memory()
        collector_class.on_start_trace_step(self, trace, step, pipeline)

    name = f"Releasing{collector_class.__name__}"
    hooks = {"on_start_trace_step": on_start_trace_step}
    return type(name, (collector_class, ReleaseMemoryBetweenSteps), hooks)


def releasing_memory(progress: Collector | None) -> Collector:
    """`progress` (dlt's log collector, our `SyncProgress`; None: dlt's null collector) as a collector
    of a subclass with `ReleaseMemoryBetweenSteps` mixed in: the same object, still drawing what it drew,
    no dlt method of it called or replaced by us."""
    collector = progress if progress is not None else NullCollector()
    collector.__class__ = _releasing_class(type(collector))
    return collector
