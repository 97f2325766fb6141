"""One writer at a time: run locks per pipeline and per destination.

Two syncs of one pipeline folder jam it, and two writers of one warehouse lose and duplicate rows (issues
15 and 53). So every command that writes takes, before it extracts anything, a lock on the pipeline's
working folder and one on the destination; readers (the dbt models, the dashboard) take the same locks
shared: any number of readers, or one writer.

Two layers:
- **What decides** (`held_locks.py`), held for the whole run: a `flock` of the lock file's companion
  `<lock file>.held` (by name: any mount or container that sees the folder sees it), of the DuckDB file
  itself where it exists (its inode: a hard link too), and on PostgreSQL an advisory lock keyed by the
  dataset. The kernel (or the database) knows the holder whatever pid namespace it runs in, and lets go
  when its process ends, however it ends.
- **What names the holder**: the lock file holds the list of its holders as JSON (pid, host, since when,
  mode, command), next to the DuckDB file, or for a server destination in the pipelines folder keyed by
  destination, host, database and dataset. It is changed only under a short `flock` of the file itself.
  A recorded holder on this host that conflicts with a lock just taken is gone (the kernel says so,
  whatever its pid seems to say) and is dropped with a warning. A holder on another host is taken as
  alive unless the held lock proves otherwise: its pid cannot be checked from here.

Usage (`platform-sync models` and the dashboard):

    with run_lock(pipeline, mode="read", command="platform-sync models"):
        ...
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import json
import logging
import os
import socket
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import dlt

from pipelines.sync.held_locks import Mode, advisory_key, advisory_lock, inode_lock

logger = logging.getLogger("platform_sync.lock")


@dataclass(frozen=True)
class Holder:
    """Who holds a lock: enough to tell whether it is still running and to name it to the user."""

    pid: int
    host: str
    since: str  # ISO 8601, UTC
    mode: str
    command: str
    started_ticks: int | None = None  # the process's start time (/proc), to tell a reused pid apart

    def describe(self) -> str:
        return f"pid {self.pid} on host {self.host}, since {self.since} ({self.command}, {self.mode})"

    def is_alive(self) -> bool:
        """True unless the holder's process is certainly gone. A holder on another host is assumed alive:
        its pid cannot be checked from here."""
        if self.host != socket.gethostname():
            return True
        if not _pid_exists(self.pid):
            return False
        return self.started_ticks is None or _started_ticks(self.pid) in (None, self.started_ticks)


class LockHeld(Exception):
    """Another run holds a lock this one needs; nothing was done."""

    def __init__(self, path: Path, what: str, holders: list[Holder]) -> None:
        self.path = path
        self.holders = holders
        named = "; ".join(holder.describe() for holder in holders) or (
            "a process this lock file does not name (it reaches the same warehouse by another path, "
            "mount or container)"
        )
        super().__init__(
            f"{what} is in use by another run: {named}. Lock file: {path}. Nothing was requested; run "
            "again when it has finished (a lock left by a run that was killed is taken over automatically)."
        )


@contextlib.contextmanager
def run_lock(
    pipeline: dlt.Pipeline,
    mode: Mode = "write",
    command: str = "platform-sync",
) -> Iterator[Callable[[], None]]:
    """Hold the pipeline's lock and its destination's lock (in that order, always, so two runs cannot
    each wait on the other) for the body of the `with`; raises `LockHeld` at once when a conflicting
    run holds either.

    The lock files are in the pipelines folder (a DuckDB file's beside it).

    Yields a function that releases both locks at once (the command line's Ctrl-C handler calls it before
    the process ends); leaving the `with` after that releases nothing twice."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(pipeline_hold(pipeline, mode, command))
        stack.enter_context(destination_hold(pipeline, mode, command))
        yield stack.close


def pipeline_hold(
    pipeline: dlt.Pipeline, mode: Mode, command: str
) -> contextlib.AbstractContextManager[Holder]:
    """The pipeline's lock: its lock file in the pipelines folder."""
    path = Path(pipeline.pipelines_dir) / f"{pipeline.pipeline_name}.lock"
    return hold(path, mode, f"the pipeline {pipeline.pipeline_name}", command)


def destination_hold(
    pipeline: dlt.Pipeline, mode: Mode, command: str
) -> contextlib.AbstractContextManager[Holder]:
    """The destination's lock, decided also by the DuckDB file's inode or PostgreSQL's advisory lock."""
    path, name = destination_lock_path(pipeline)
    return hold(path, mode, name, command, _destination_guard(pipeline, mode))


def _destination_guard(pipeline: dlt.Pipeline, mode: Mode) -> contextlib.AbstractContextManager[bool] | None:
    database = _duckdb_file(pipeline)
    if database is not None:
        # A file not made yet has no other name (no link can be made to it): its companion decides.
        return inode_lock(database, mode) if database.exists() else None
    if pipeline.destination.destination_name == "postgres":
        key = advisory_key(f"platform-sync|{pipeline.dataset_name}")
        return advisory_lock(pipeline.sql_client(), key, mode)
    return None


def _duckdb_file(pipeline: dlt.Pipeline) -> Path | None:
    if pipeline.destination.destination_name != "duckdb":
        return None
    credentials = getattr(pipeline.destination_client().config, "credentials", None)
    database = getattr(credentials, "database", None)
    if not isinstance(database, str) or database == ":memory:":
        return None
    return Path(database).resolve()


def destination_lock_path(pipeline: dlt.Pipeline) -> tuple[Path, str]:
    """Where the destination's lock file lives, and how to name the destination in messages (no secrets).

    Resolves the destination's configuration, so missing credentials raise dlt's
    `ConfigFieldMissingException` here, before anything is extracted."""
    config: Any = pipeline.destination_client().config
    credentials = getattr(config, "credentials", None)
    database = getattr(credentials, "database", None)
    destination_type = pipeline.destination.destination_name
    if (path := _duckdb_file(pipeline)) is not None:
        return path.with_name(path.name + ".lock"), f"the DuckDB file {path}"
    host = getattr(credentials, "host", None) or ""
    port = getattr(credentials, "port", None) or ""
    key = f"{destination_type}|{host}|{port}|{database or ''}|{pipeline.dataset_name}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    where = f"{host}:{port}/{database}" if host else str(database or destination_type)
    name = f"the dataset {pipeline.dataset_name} on {destination_type} {where}"
    folder = Path(pipeline.pipelines_dir)
    return folder / f"destination-{destination_type}-{digest}.lock", name


@contextlib.contextmanager
def hold(
    path: Path,
    mode: Mode,
    what: str,
    command: str = "platform-sync",
    guard: contextlib.AbstractContextManager[bool] | None = None,
) -> Iterator[Holder]:
    """Hold the lock file `path` as a reader or the writer while the `with` body runs: its companion's
    `flock` and the `guard` (a held lock of `held_locks.py`) decide, the file names the holders."""
    me = Holder(
        pid=os.getpid(),
        host=socket.gethostname(),
        since=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        mode=mode,
        command=command,
        started_ticks=_started_ticks(os.getpid()),
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    companion = path.with_name(path.name + ".held")
    companion.touch()
    with contextlib.ExitStack() as stack:
        for held in (inode_lock(companion, mode), guard):
            if held is not None and not stack.enter_context(held):
                raise LockHeld(path, what, _recorded_others(path, me))
        _acquire(path, me, what)
        try:
            yield me
        finally:
            _release(path, me)


def holders(path: Path) -> list[Holder]:
    """The live holders recorded in a lock file (for status displays); none if there is no file."""
    if not path.exists():
        return []
    with _locked(path) as handle:
        return [holder for holder in _read(handle) if holder.is_alive()]


def _acquire(path: Path, me: Holder, what: str) -> None:
    """Record `me` in the lock file, once the held locks are taken: a conflicting holder recorded on this
    host is gone (the kernel let this run in); one on another host is taken as alive."""
    with _locked(path) as handle:
        recorded = _read(handle)
        here = socket.gethostname()
        alive = [h for h in recorded if h.is_alive() and not (h.host == here and _conflicts(me, h))]
        for stale in recorded:
            if stale not in alive:
                logger.warning("taking over %s, left by a run that is gone: %s", path, stale.describe())
        conflicting = [h for h in alive if _conflicts(me, h)]
        if conflicting:
            raise LockHeld(path, what, conflicting)
        _write(handle, [*alive, me])


def _conflicts(me: Holder, other: Holder) -> bool:
    return me.mode == "write" or other.mode == "write"


def _recorded_others(path: Path, me: Holder) -> list[Holder]:
    """The holders the lock file names that conflict with `me` (alive or not: a held lock says one is)."""
    if not path.exists():
        return []
    with _locked(path) as handle:
        return [h for h in _read(handle) if _conflicts(me, h)]


def _release(path: Path, me: Holder) -> None:
    with _locked(path) as handle:
        _write(handle, [holder for holder in _read(handle) if holder != me and holder.is_alive()])


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[Any]:
    """The lock file opened and `flock`ed for one read-modify-write; closed (and so unlocked) after."""
    with open(path, "a+", encoding="utf-8") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield handle


def _read(handle: Any) -> list[Holder]:
    handle.seek(0)
    text = handle.read()
    try:
        entries = json.loads(text)["holders"] if text.strip() else []
        return [Holder(**entry) for entry in entries]
    except (ValueError, KeyError, TypeError):
        # A file cut short (disk full, a crash while writing) says nothing reliable: treat it as free.
        logger.warning("ignoring an unreadable lock file %s", handle.name)
        return []


def _write(handle: Any, entries: list[Holder]) -> None:
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"holders": [asdict(entry) for entry in entries]}, indent=1))
    handle.flush()
    os.fsync(handle.fileno())


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _started_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat); None off Linux.
    A zombie (killed, not yet reaped) counts as gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":
        return -1
    return int(fields[19])
