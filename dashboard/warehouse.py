"""Where the dashboard reads the marts from, without ever getting in the way of a sync.

DuckDB allows one writing process, and any process that has the file open (even read-only) holds a
lock that makes a writer's `connect` fail. A dashboard left open all day must never make a scheduled
`platform-sync sync` or `platform-sync models` fail, so `DuckDbSnapshot` never opens the pipeline's file
with DuckDB at all: it copies the file's bytes (a plain read takes no lock) into a private folder when the
file has changed and no process holds a write lock on it, checks that nothing changed while it copied,
and answers every query from that private copy. A sync therefore always finds the file free, and the
next page the dashboard renders after the sync (and dbt) finished shows the new data, without a restart.

PostgreSQL has no such lock: `SqlClientWarehouse` opens a short connection through dlt's destination
client for each page.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import duckdb

Row = tuple[Any, ...]


class WarehouseUnavailable(Exception):
    """There is nothing to read yet: no database file, or it could not be read."""


class Warehouse(Protocol):
    """What the pages need: rows of a query, and which tables exist."""

    def session(self) -> AbstractContextManager[Session]: ...


class Session(Protocol):
    """One page's queries, answered from one consistent state of the data."""

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]: ...

    def tables(self, schema: str) -> set[str]: ...


# ---------------------------------------------------------------------------------------------- DuckDB


@dataclass(frozen=True)
class _Signature:
    """What tells that the database changed: identity, size and modification time of file and WAL."""

    files: tuple[tuple[int, int, int, int] | None, ...]


def _signature(path: Path) -> _Signature:
    parts: list[tuple[int, int, int, int] | None] = []
    for candidate in (path, Path(f"{path}.wal")):
        try:
            st = candidate.stat()
        except FileNotFoundError:
            parts.append(None)
            continue
        parts.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return _Signature(tuple(parts))


# struct flock on Linux (x86_64 and aarch64): short l_type, short l_whence, off_t l_start, off_t l_len,
# pid_t l_pid, padded to 32 bytes.
_FLOCK = "hhqqi4x"


def write_locked(path: Path) -> bool:
    """Whether another process holds a write lock on `path` (DuckDB's writer takes one on the file).

    F_GETLK only asks; it takes no lock, so asking can never make the writer fail. Elsewhere than on
    Linux the answer is False and the snapshot relies on the file not changing while it is copied.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        query = struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0)
        answer = fcntl.fcntl(fd, fcntl.F_GETLK, query)
        lock_type = struct.unpack(_FLOCK, answer)[0]
        return bool(lock_type != fcntl.F_UNLCK)
    finally:
        os.close(fd)


class DuckDbSnapshot:
    """Queries answered from a private copy of the pipeline's DuckDB file, refreshed when it changed.

    The copy is taken only when no process holds a write lock on the file, and kept only if the file
    and its WAL look exactly the same before and after copying; otherwise the previous copy keeps
    answering and the next page tries again. The first copy waits (up to `first_copy_timeout` seconds)
    for a running writer to finish.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        check_every: float = 1.0,
        first_copy_timeout: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = Path(path).resolve()
        self._check_every = check_every
        self._first_copy_timeout = first_copy_timeout
        self._clock = clock
        self._folder = Path(tempfile.mkdtemp(prefix="platform-sync-dashboard-"))
        self._lock = threading.Lock()
        self._current: Path | None = None
        self._signature: _Signature | None = None
        self._checked_at = float("-inf")
        self._generation = 0
        self.copies = 0  # how many snapshots were taken: the tests read it

    def close(self) -> None:
        """Delete the private copies."""
        shutil.rmtree(self._folder, ignore_errors=True)

    @property
    def snapshot_path(self) -> Path | None:
        return self._current

    @contextmanager
    def session(self) -> Iterator[Session]:
        snapshot = self._fresh_snapshot()
        connection = duckdb.connect(str(snapshot), read_only=True)
        try:
            yield _DuckDbSession(connection)
        finally:
            connection.close()

    def _fresh_snapshot(self) -> Path:
        with self._lock:
            now = self._clock()
            if self._current is None or now - self._checked_at >= self._check_every:
                self._checked_at = now
                self._refresh(wait=self._current is None)
            if self._current is None:
                raise WarehouseUnavailable(f"no DuckDB database at {self.path}")
            return self._current

    def _refresh(self, wait: bool) -> None:
        deadline = self._clock() + (self._first_copy_timeout if wait else 0.0)
        while True:
            if not self.path.exists():
                return
            signature = _signature(self.path)
            if signature == self._signature:
                return
            if self._try_copy(signature):
                return
            if self._clock() >= deadline:
                return
            time.sleep(0.2)

    def _try_copy(self, before: _Signature) -> bool:
        if write_locked(self.path):
            return False
        self._generation += 1
        target = self._folder / f"snapshot-{self._generation}.duckdb"
        wal = Path(f"{self.path}.wal")
        try:
            shutil.copyfile(self.path, target)
            if wal.exists():
                shutil.copyfile(wal, Path(f"{target}.wal"))
        except FileNotFoundError:
            self._discard(target)
            return False
        if write_locked(self.path) or _signature(self.path) != before or not _opens(target):
            self._discard(target)
            return False
        previous, self._current, self._signature = self._current, target, before
        self.copies += 1
        if previous is not None:
            # Sessions still reading the previous copy keep their open file; unlinking is safe on POSIX.
            self._discard(previous)
        return True

    @staticmethod
    def _discard(target: Path) -> None:
        for candidate in (target, Path(f"{target}.wal")):
            candidate.unlink(missing_ok=True)


def _opens(path: Path) -> bool:
    """Whether DuckDB reads the copy (replaying its WAL, if any): a torn copy is never served."""
    try:
        with duckdb.connect(str(path), read_only=True) as connection:
            connection.execute("select count(*) from information_schema.tables").fetchone()
        return True
    except duckdb.Error:
        return False


class _DuckDbSession:
    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self._connection = connection
        # Days and months are UTC ones, as in the models (dbt's profile sets the same time zone).
        connection.execute("set TimeZone = 'UTC'")

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self._connection.execute(sql, list(params)).fetchall()

    def tables(self, schema: str) -> set[str]:
        found = self._connection.execute(
            "select table_name from information_schema.tables where table_schema = ?", [schema]
        ).fetchall()
        return {str(name) for (name,) in found}


# ------------------------------------------------------------------------------- other destinations


class SqlClientWarehouse:
    """Any destination dlt has a SQL client for (PostgreSQL): one short connection per page."""

    def __init__(self, open_client: Callable[[], AbstractContextManager[Any]]) -> None:
        self._open_client = open_client

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._open_client() as client:
            yield _SqlClientSession(client)


class _SqlClientSession:
    def __init__(self, client: Any) -> None:
        self._client = client
        client.execute_sql("set time zone 'UTC'")  # days and months are UTC ones, as in the models

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        # The pages write DuckDB's `?` placeholders; psycopg2 takes `%s`.
        with self._client.execute_query(sql.replace("?", "%s"), *params) as cursor:
            return [tuple(row) for row in cursor.fetchall()]

    def tables(self, schema: str) -> set[str]:
        found = self.rows("select table_name from information_schema.tables where table_schema = ?", [schema])
        return {str(name) for (name,) in found}


def for_pipeline(pipeline: Any) -> DuckDbSnapshot | SqlClientWarehouse:
    """The warehouse of a dlt pipeline: a snapshot of its DuckDB file, or its SQL client."""
    destination = pipeline.destination.destination_type.rsplit(".", 1)[-1] if pipeline.destination else None
    if destination == "duckdb":
        database = pipeline.destination_client().config.credentials.database
        if not database or database == ":memory:":
            raise WarehouseUnavailable("the dashboard needs a DuckDB database file, not an in-memory one")
        return DuckDbSnapshot(database)
    return SqlClientWarehouse(pipeline.sql_client)
