"""Out of memory, wherever it surfaces, and the one line that says so (issue 53).

A sync that runs out of memory rarely sees a `MemoryError`. Under an address-space limit (`ulimit -v`, a
container's) the first thing to fail is most often a thread that cannot start (a thread's stack is 8 MB of
address space): `RuntimeError: can't start new thread`, in an extract thread of ours or of dlt's pool. dlt
then wraps it in its step's failure, and while it closes the resources after it, meets another error
("generator already executing"), which becomes the step's exception, the real one left in its context. A
helper process that cannot start is an `OSError` with `ENOMEM`, a library imported late that cannot be
mapped an `ImportError` ("failed to map segment from shared object"), DuckDB says "Out of Memory Error",
and dlt carries a load job's error as text only. `ran_out_of_memory` looks at all of them: the exception,
the one a dlt step failure wraps, their causes and contexts, the members of exception groups, and their
text.
"""

from __future__ import annotations

import errno
import resource
import sys
from collections.abc import Iterator
from typing import Any

THREAD_NOT_STARTED = "can't start new thread"  # CPython's words (3.11 to 3.13) when a thread cannot start
# What DuckDB (its OutOfMemoryException, "failed to allocate", "failed to pin") and the C library say,
# also when dlt keeps only the text of a load job's error.
_MEMORY_WORDS = (
    "Out of Memory",
    "OutOfMemory",
    "out of memory",
    "Cannot allocate memory",
    "failed to allocate",
    THREAD_NOT_STARTED,
)
# The dynamic loader's words (glibc) when it cannot map a shared library: under an address-space limit, the
# limit reached; without one, another cause (a noexec mount), so it counts only under a limit.
MAP_FAILED = "failed to map segment from shared object"
# What to do, in the words the command has used since issue 26 (tests/pipelines/sync/faults/test_disk_full.py)
ADVICE = (
    "give the sync more memory (or a lower DuckDB memory_limit in "
    "destination.duckdb.credentials.global_config), or sync fewer resources at once (--resources)"
)
# The other settings that bound what a sync holds at once (docs/guide.md, "Cores and memory").
OTHER_SETTINGS = (
    "[extract] workers (threads, 8 by default), [normalize] workers or decode_workers (processes)"
)


def causes(error: BaseException | None) -> Iterator[BaseException]:
    """`error` and every exception behind it, each once: the exception a dlt step failure wraps
    (`PipelineStepFailed.exception`), causes, contexts, the members of an exception group."""
    pending = [error]
    seen: set[int] = set()
    while pending:
        exc = pending.pop(0)
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        yield exc
        wrapped = getattr(exc, "exception", None)
        if isinstance(wrapped, BaseException):
            pending.append(wrapped)
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)
        pending.extend((exc.__cause__, exc.__context__))


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether this one exception says that memory (or a thread) could not be had."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    if "OutOfMemory" in type(exc).__name__:  # duckdb.OutOfMemoryException
        return True
    text = str(exc)
    if isinstance(exc, ImportError) and MAP_FAILED in text and address_space_limit() is not None:
        return True  # a library loaded late (pyarrow.parquet, by dlt's writer) that no mapping could hold
    return any(words in text for words in _MEMORY_WORDS)


def ran_out_of_memory(error: BaseException) -> bool:
    """Whether `error`, or anything behind it, is out of memory (see the module's docstring)."""
    return any(is_out_of_memory(exc) for exc in causes(error))


def address_space_limit() -> int | None:
    """This process's address-space limit in bytes (`ulimit -v`), None if there is none."""
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def out_of_memory_line(where: str, kept: str) -> str:
    """The one line for a run that ran out of memory: `where` it failed ("sync failed in the load step"),
    what to do, what the warehouse and the working folder keep (`kept`), and the limit it ran into."""
    limit = address_space_limit()
    within = (
        f"this process's address-space limit of {limit // 2**20} MB (ulimit -v)"
        if limit is not None
        else "the memory this process may use"
    )
    return (
        f"{where}: out of memory; {ADVICE}, and run again: {kept}. It could not allocate memory or start "
        f"a thread within {within}: raise that, or lower {OTHER_SETTINGS}"
    )


def quiet_when_out_of_memory(unraisable: Any) -> None:
    """`sys.unraisablehook` for the command's own process: an exception Python can only print, such as a
    thread that failed in its start-up ("Exception ignored in thread started by: ... MemoryError"),
    is said by the command's one line when it is out of memory, so it is not printed; any other goes to
    Python's own hook."""
    if ran_out_of_memory(unraisable.exc_value):
        return
    sys.__unraisablehook__(unraisable)
