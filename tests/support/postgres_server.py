"""A throwaway PostgreSQL cluster on 127.0.0.1 for the tests: Debian's server binaries (`make
postgres-server` installs them), a data folder in a temporary directory, a free port, a random password.

PostgreSQL refuses to run as root: when the tests run as root the cluster belongs to the `postgres`
user (Debian's package creates it), or to a system user created here when that one is missing.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SUPERUSER = "platform_sync"
OWNER_WHEN_ROOT = "postgres"
FALLBACK_OWNER = "platform-sync-pg"
# Durability is worthless for a cluster that is deleted after the tests; its cost is not.
FAST_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=40")


@dataclass(frozen=True)
class PostgresServer:
    """Where the running cluster is, and how to reach it (the password stays out of any repr)."""

    host: str
    port: int
    user: str
    password: str
    bin_dir: Path

    def __repr__(self) -> str:
        return f"PostgresServer({self.host}:{self.port}, user={self.user})"

    def credentials(self, database: str) -> str:
        """A connection string for dlt's `destination.postgres.credentials`."""
        return f"postgresql://{self.user}:{self.password}@{self.host}:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create the database `name` (letters, digits, underscores) and return its name."""
        if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
            raise ValueError(f"not a plain database name: {name!r}")
        self.psql("postgres", f"create database {name}")
        return name

    def psql(self, database: str, sql: str) -> str:
        """Run `sql` with psql; its unaligned, tuples-only output."""
        completed = subprocess.run(
            [
                str(self.bin_dir / "psql"),
                "-X",
                "-q",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                self.host,
                "-p",
                str(self.port),
                "-U",
                self.user,
                "-d",
                database,
                "-c",
                sql,
            ],
            env={**os.environ, "PGPASSWORD": self.password},
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode != 0:
            raise RuntimeError(f"psql failed ({completed.returncode}): {completed.stderr.strip()}")
        return completed.stdout


def server_bin_dir() -> Path:
    """The newest Debian PostgreSQL server's binaries, else the folder of an `initdb` on the PATH."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parent.parent.name)
    )
    if candidates:
        return candidates[-1].parent
    initdb = shutil.which("initdb")
    if initdb:
        return Path(initdb).resolve().parent
    raise RuntimeError("no PostgreSQL server (initdb, pg_ctl): run `make postgres-server`")


@contextlib.contextmanager
def running_postgres() -> Iterator[PostgresServer]:
    """Start a fresh cluster, yield where it is, stop it and delete its files."""
    bin_dir = server_bin_dir()
    owner = _cluster_owner()
    # Not under pytest's temporary folders: they are private to the user running the tests, and the
    # cluster's owner must reach its data folder.
    root = Path(tempfile.mkdtemp(prefix="platform-sync-pg-"))
    try:
        if owner is not None:
            shutil.chown(root, owner.pw_uid, owner.pw_gid)
        password = secrets.token_urlsafe(18)
        data = root / "data"
        _init_cluster(bin_dir, data, root, password, owner)
        port = free_port()
        _pg_ctl(
            bin_dir,
            owner,
            "-D",
            str(data),
            "-l",
            str(root / "server.log"),
            "-w",
            "-t",
            "60",
            "-o",
            _server_options(port, root),
            "start",
        )
        try:
            yield PostgresServer("127.0.0.1", port, SUPERUSER, password, bin_dir)
        finally:
            _pg_ctl(bin_dir, owner, "-D", str(data), "-m", "immediate", "-w", "stop")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _cluster_owner() -> pwd.struct_passwd | None:
    """The user that runs the cluster: None for the current user, unless that is root."""
    if os.geteuid() != 0:
        return None
    for name in (OWNER_WHEN_ROOT, FALLBACK_OWNER):
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    subprocess.run(["useradd", "--system", "--no-create-home", FALLBACK_OWNER], check=True)
    return pwd.getpwnam(FALLBACK_OWNER)


def _init_cluster(
    bin_dir: Path, data: Path, root: Path, password: str, owner: pwd.struct_passwd | None
) -> None:
    """initdb with a password-protected superuser over TCP (the way the pipeline connects)."""
    password_file = root / "password"
    password_file.write_text(password)
    password_file.chmod(0o600)
    if owner is not None:
        shutil.chown(password_file, owner.pw_uid, owner.pw_gid)
    try:
        _run_as(
            owner,
            [
                str(bin_dir / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                f"--pwfile={password_file}",
                "--auth-host=scram-sha-256",
                "--auth-local=trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        )
    finally:
        password_file.unlink()


def _server_options(port: int, socket_dir: Path) -> str:
    settings = [f"-c {setting}" for setting in FAST_SETTINGS]
    return " ".join(["-h 127.0.0.1", f"-p {port}", f"-k {socket_dir}", *settings])


def _pg_ctl(bin_dir: Path, owner: pwd.struct_passwd | None, *args: str) -> None:
    _run_as(owner, [str(bin_dir / "pg_ctl"), *args])


def _run_as(owner: pwd.struct_passwd | None, command: list[str]) -> None:
    completed = subprocess.run(
        command,
        user=owner.pw_uid if owner else None,
        group=owner.pw_gid if owner else None,
        extra_groups=[] if owner else None,
        cwd="/",  # the owner may not be allowed into the current folder
        capture_output=True,
        text=True,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"{Path(command[0]).name} failed: {completed.stdout}{completed.stderr}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
