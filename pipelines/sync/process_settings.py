"""Settings that change the whole process, applied by our command line only.

A library must not change its host: an Airflow or Dagster worker that imports the source keeps its own
allocator and its own fork behaviour. `platform-sync` (and `python -m bench`, which measures it) owns
its process and applies these at start:

- Arrow allocates with the C allocator, and glibc's malloc arenas are capped (`pipelines/sync/memory.py`:
  lower memory peaks at the same speed, measured in bench/);
- dlt's forked normalize workers end with the sync, even when it is killed (`pipelines/sync/parallelism.py`).
"""

from __future__ import annotations

from pipelines.sync.memory import limit_malloc_arenas, use_system_arrow_pool
from pipelines.sync.parallelism import workers_end_with_the_sync


def apply_process_settings() -> None:
    """The process-wide settings of `platform-sync` (see the module's docstring); each once per process,
    each leaving a user's own choice (`ARROW_DEFAULT_MEMORY_POOL`, `MALLOC_ARENA_MAX`) as it is."""
    use_system_arrow_pool()
    limit_malloc_arenas()
    workers_end_with_the_sync()
