"""One writer at a time (issue 15): a second sync of the same pipeline folder, or of another folder into
the same DuckDB file, exits at once with status 2 naming the holder; a lock left by a killed run is
taken over."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from pipelines.sync.lock import Holder, LockHeld, hold, holders
from sandbox.running import running_sandbox
from tests.support.cli import PLATFORM_SYNC, cli_env, in_folder, run_cli
from tests.support.sync_helpers import source_options

# Rate-limit windows of 1 s: the sale details keep the first run busy for seconds, long enough to overlap.
SLOW = 60


def wait_for_holder(lock_file: Path, pid: int, timeout: float = 30) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock_file.exists() and lock_file.read_text().strip():
            entries = json.loads(lock_file.read_text())["holders"]
            if any(entry["pid"] == pid for entry in entries):
                return next(entry for entry in entries if entry["pid"] == pid)
        time.sleep(0.05)
    raise AssertionError(f"{lock_file} never named pid {pid}")


def test_second_sync_exits_2_naming_the_holder_same_folder_and_same_duckdb_file(tmp_path):
    first_dir, other_dir = tmp_path / "a", tmp_path / "b"
    first_dir.mkdir()
    other_dir.mkdir()
    database = tmp_path / "warehouse.duckdb"
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        env = cli_env(
            tmp_path, source_options(sandbox, sandbox.token(), rate_limit_time_scale=SLOW), database
        )
        first = subprocess.Popen(
            [PLATFORM_SYNC, "sync", "--no-progress"],
            env=in_folder(env, first_dir),
            cwd=first_dir,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            entry = wait_for_holder(first_dir / ".dlt" / "pipelines" / "platform_sync.lock", first.pid)
            assert entry["host"] == socket.gethostname() and entry["mode"] == "write"
            # each lock file names when its own lock was taken (they may be a second apart)
            database_entry = wait_for_holder(database.with_name("warehouse.duckdb.lock"), first.pid)

            started = time.monotonic()
            same_folder = run_cli(["sync", "--no-progress"], in_folder(env, first_dir), first_dir)
            other_folder = run_cli(["sync", "--no-progress"], in_folder(env, other_dir), other_dir)
            assert time.monotonic() - started < 20  # at once, not after waiting for the first run
            assert first.poll() is None, "the first run ended before the others were tried"

            assert same_folder.returncode == 2, same_folder.stdout + same_folder.stderr
            assert "the pipeline platform_sync is in use" in same_folder.stderr
            assert same_folder.stdout == ""  # no summary: nothing ran
            assert other_folder.returncode == 2, other_folder.stdout + other_folder.stderr
            assert f"the DuckDB file {database} is in use" in other_folder.stderr
            for refused, held in ((same_folder, entry), (other_folder, database_entry)):
                assert (
                    f"pid {first.pid} on host {socket.gethostname()}, since {held['since']}" in refused.stderr
                )
                assert "Traceback" not in refused.stderr
        finally:
            out, _ = first.communicate(timeout=300)
        assert first.returncode == 0, out
    assert holders(first_dir / ".dlt" / "pipelines" / "platform_sync.lock") == []
    assert holders(database.with_name("warehouse.duckdb.lock")) == []


def test_lock_of_a_killed_run_is_taken_over(tmp_path):
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        env = cli_env(tmp_path, source_options(sandbox, sandbox.token(), rate_limit_time_scale=SLOW))
        killed = subprocess.Popen([PLATFORM_SYNC, "sync", "--no-progress"], env=env, cwd=tmp_path)
        lock_file = tmp_path / ".dlt" / "pipelines" / "platform_sync.lock"
        wait_for_holder(lock_file, killed.pid)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert json.loads(lock_file.read_text())["holders"][0]["pid"] == killed.pid  # left behind

        rerun = run_cli(["sync", "--no-progress"], env, tmp_path)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert "taking over" in rerun.stderr and f"pid {killed.pid}" in rerun.stderr
    assert holders(lock_file) == []


def test_readers_share_a_writer_excludes(tmp_path):
    path = tmp_path / "x.lock"
    with hold(path, "read", "the warehouse"), hold(path, "read", "the warehouse"):
        assert [h.mode for h in holders(path)] == ["read", "read"]
        with pytest.raises(LockHeld, match=f"pid {os.getpid()} on host"):
            with hold(path, "write", "the warehouse"):
                pass
    with hold(path, "write", "the warehouse", command="platform-sync sync"):
        with pytest.raises(LockHeld, match=r"the warehouse is in use by another run: .*platform-sync sync"):
            with hold(path, "read", "the warehouse"):
                pass
    assert holders(path) == []


def test_dead_or_reused_pid_is_stale_another_host_is_not(tmp_path):
    path = tmp_path / "x.lock"
    gone = subprocess.Popen(["true"])
    gone.wait()
    mine = holders_entry(os.getpid())
    entries = [
        {**holders_entry(gone.pid)},  # no such process any more
        {**mine, "started_ticks": mine["started_ticks"] - 1},  # this pid, but an earlier process
    ]
    path.write_text(json.dumps({"holders": entries}))
    with hold(path, "write", "the warehouse"):
        assert [h.pid for h in holders(path)] == [os.getpid()]
    path.write_text(json.dumps({"holders": [{**holders_entry(1), "host": "elsewhere"}]}))
    with pytest.raises(LockHeld, match="pid 1 on host elsewhere"):
        with hold(path, "write", "the warehouse"):
            pass


def holders_entry(pid: int) -> dict[str, object]:
    ticks = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()[19]
    holder = Holder(pid, socket.gethostname(), "2026-01-01 00:00:00 UTC", "write", "test", int(ticks))
    return dict(holder.__dict__)


def _first_writer(
    sandbox, tmp_path: Path, folder: Path, database: Path, prefix: list[str]
) -> subprocess.Popen:
    """A sync in `folder` into `database`, busy for seconds on the paced sale details."""
    folder.mkdir()
    env = cli_env(tmp_path, source_options(sandbox, sandbox.token(), rate_limit_time_scale=SLOW), database)
    return subprocess.Popen(
        [*prefix, PLATFORM_SYNC, "sync", "--no-progress"],
        env=in_folder(env, folder),
        cwd=folder,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_any_holder(lock_file: Path, timeout: float = 30) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock_file.exists() and lock_file.read_text().strip():
            entries = json.loads(lock_file.read_text())["holders"]
            if entries:
                return entries[0]
        time.sleep(0.05)
    raise AssertionError(f"{lock_file} never named a holder")


def test_a_hard_link_to_the_warehouse_is_the_same_warehouse(tmp_path):
    """Two names of one DuckDB file (a hard link; a bind mount is the same inode too): the second writer
    is refused with exit status 2, though the two lock files beside the names know nothing of each other."""
    database, alias = tmp_path / "warehouse.duckdb", tmp_path / "alias.duckdb"
    import duckdb

    duckdb.connect(str(database)).close()
    os.link(database, alias)
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        first = _first_writer(sandbox, tmp_path, tmp_path / "a", database, [])
        try:
            _wait_for_any_holder(database.with_name("warehouse.duckdb.lock"))
            options = source_options(sandbox, sandbox.token(), rate_limit_time_scale=SLOW)
            (tmp_path / "b").mkdir()
            env = in_folder(cli_env(tmp_path, options, alias), tmp_path / "b")
            second = run_cli(["sync", "--no-progress"], env, tmp_path / "b")
            assert first.poll() is None, "the first run ended before the second was tried"
            assert second.returncode == 2, second.stdout + second.stderr
            assert f"the DuckDB file {alias} is in use by another run" in second.stderr
            assert "another path, mount or container" in second.stderr
            assert "Traceback" not in second.stderr and second.stdout == ""
        finally:
            out, err = first.communicate(timeout=300)
        assert first.returncode == 0, out + err


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare")
def test_writers_in_two_pid_namespaces_and_a_killed_one_taken_over(tmp_path):
    """Two containers sharing a volume and a host name: each sees itself as pid 1. The second writer is
    refused; once the first is killed, its record names pid 1 (alive here: init) and the kernel's lock
    is free, so the next run takes over."""
    database = tmp_path / "warehouse.duckdb"
    namespace = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child=SIGKILL"]
    lock_file = database.with_name("warehouse.duckdb.lock")
    with running_sandbox(seed=4, scale=200, time_scale=SLOW) as sandbox:
        first = _first_writer(sandbox, tmp_path, tmp_path / "a", database, namespace)
        try:
            entry = _wait_for_any_holder(lock_file)
            assert entry["pid"] == 1  # the sync is its namespace's first process
            options = source_options(sandbox, sandbox.token(), rate_limit_time_scale=SLOW)
            (tmp_path / "b").mkdir()
            env = in_folder(cli_env(tmp_path, options, database), tmp_path / "b")
            second = subprocess.run(
                [*namespace, PLATFORM_SYNC, "sync", "--no-progress"],
                env=env,
                cwd=tmp_path / "b",
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert first.poll() is None, "the first run ended before the second was tried"
            assert second.returncode == 2, second.stdout + second.stderr
            assert f"the DuckDB file {database} is in use by another run" in second.stderr
        finally:
            first.kill()  # unshare, which kills its child, the namespace's init, and so all in it
            first.communicate(timeout=60)
        # The record still names the killed writer; the kernel lock decides, and it is free.
        assert json.loads(lock_file.read_text())["holders"]
        env = in_folder(cli_env(tmp_path, options, database), tmp_path / "a")
        rerun = subprocess.run(
            [*namespace, PLATFORM_SYNC, "sync", "--no-progress"],
            env=env,
            cwd=tmp_path / "a",
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        assert "taking over" in rerun.stderr
    assert holders(lock_file) == []
