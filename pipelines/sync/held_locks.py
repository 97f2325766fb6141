"""Locks that the kernel or the database holds for a whole run (issue 53), beneath the recorded holders of
`lock.py`: two writers cannot both hold one, whatever name, mount or pid namespace they see it by.

- Every lock file's companion `<lock file>.held`, and a DuckDB file that exists: a `flock` on its inode,
  held by an open descriptor for the whole run. Another container sharing the volume, a bind mount, and
  for the DuckDB file a hard link reach the same inode, and the kernel releases the lock when the
  holder's process ends, however it ends. (DuckDB's
  own lock is held only while a connection is open, and dlt opens one per load job: another process gets
  in between two jobs.) A child forked while a lock is held closes its copy of the descriptor at once
  (`os.register_at_fork`), so a helper that outlives a killed run cannot keep the lock.
- PostgreSQL: a session advisory lock keyed by the dataset, on a connection of its own held for the run.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

logger = logging.getLogger("platform_sync.lock")

Mode = Literal["read", "write"]

_held: set[int] = set()  # descriptors of this process's held flocks
_held_guard = threading.Lock()
_fork_hook: list[bool] = []


@contextlib.contextmanager
def inode_lock(path: Path, mode: Mode) -> Iterator[bool]:
    """A `flock` of the file or folder at `path` (shared to read, exclusive to write) for the body of the
    `with`; yields False at once, holding nothing, when another descriptor holds a conflicting one."""
    _close_in_forked_children()
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, (fcntl.LOCK_EX if mode == "write" else fcntl.LOCK_SH) | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        yield False
        return
    with _held_guard:
        _held.add(fd)
    try:
        yield True
    finally:
        with _held_guard:
            _held.discard(fd)
        os.close(fd)  # closing the last descriptor releases the flock


def _close_in_forked_children() -> None:
    if not _fork_hook:
        os.register_at_fork(after_in_child=_close_held)
        _fork_hook.append(True)


def _close_held() -> None:
    # Closed, never unlocked: LOCK_UN in the child would release the parent's lock too.
    for fd in list(_held):
        with contextlib.suppress(OSError):
            os.close(fd)
    _held.clear()


def advisory_key(text: str) -> int:
    """A stable signed 64-bit key for PostgreSQL's advisory locks."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


@contextlib.contextmanager
def advisory_lock(sql_client: Any, key: int, mode: Mode) -> Iterator[bool]:
    """A PostgreSQL session advisory lock on a connection of its own (`sql_client`, not yet opened),
    held for the body of the `with`; yields False at once when another session holds a conflicting one.
    Ending the connection (or the process) releases it."""
    shared = "" if mode == "write" else "_shared"
    try:
        client = sql_client.__enter__()
    except Exception as exc:  # the server cannot be reached: the command's own connection says so, in one
        # line, before anything is written; nothing to hold until then
        logger.debug("no advisory lock taken, the server did not answer (%s)", exc)
        yield True
        return
    try:
        rows = client.execute_sql(f"select pg_try_advisory_lock{shared}(%s)", key)
        got = bool(rows and rows[0][0])
        try:
            yield got
        finally:
            if got:
                with contextlib.suppress(Exception):  # the connection may be gone: the lock with it
                    client.execute_sql(f"select pg_advisory_unlock{shared}(%s)", key)
    finally:
        with contextlib.suppress(Exception):
            sql_client.__exit__(None, None, None)
