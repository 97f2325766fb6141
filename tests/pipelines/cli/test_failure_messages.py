"""One message per cause (issue 30): every documented failure through the real command says what went
wrong once, on one line of stderr, with no traceback, and ends with the documented exit status; the
summary on stdout agrees with that status."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from sandbox.running import SandboxHandle, running_sandbox
from sources.platform_client.operations import OPERATIONS
from tests.pipelines.cli.test_config_errors import CASES
from tests.support.cli import cli_env, run_cli
from tests.support.sync_helpers import source_options

FAST = {"rate_limit_time_scale": 600, "max_retries": 1}
HOLD_OPEN = "print('open', flush=True); sys.stdin.read()"
TWO = ["sync", "--no-progress", "--resources", "products,transfers"]


@pytest.fixture(scope="module")
def sandbox() -> Iterator[SandboxHandle]:
    with running_sandbox(seed=2, scale=50, time_scale=600) as handle:
        yield handle


def stderr_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def assert_one_cause(result: subprocess.CompletedProcess[str], status: int, cause: str) -> str:
    """Exit `status`, no traceback anywhere, and stderr is exactly one line, which names `cause`."""
    output = result.stdout + result.stderr
    assert result.returncode == status, output
    assert "Traceback" not in output
    lines = stderr_lines(result)
    assert len(lines) == 1, result.stderr
    assert cause in lines[0], lines[0]
    return lines[0]


def test_rejected_token(tmp_path: Path, sandbox: SandboxHandle) -> None:
    result = run_cli(
        ["sync", "--no-progress"], cli_env(tmp_path, source_options(sandbox, "bad-token", **FAST)), tmp_path
    )
    line = assert_one_cause(result, 1, "FAILED: the access token was rejected")
    assert "platform-sync auth --code CODE" in line
    assert result.stdout.rstrip().endswith("the run FAILED (exit status 1): the reasons are on stderr.")
    assert "PARTIAL" not in result.stdout
    assert "bad-token" not in result.stdout + result.stderr


def test_dead_server(tmp_path: Path) -> None:
    with running_sandbox(seed=2, scale=50) as gone:
        options = source_options(gone, gone.token(), **FAST)
    result = run_cli(TWO, cli_env(tmp_path, options), tmp_path)
    line = assert_one_cause(result, 1, "failed: no answer from http://127.0.0.1:")
    assert line.startswith(("products, transfers failed:", "transfers, products failed:")), line
    assert "Check base_url and the network" in line
    assert "FAILED products" in result.stdout and "FAILED transfers" in result.stdout
    assert result.stdout.rstrip().endswith("the run FAILED (exit status 1): the reasons are on stderr.")


def test_one_resource_skipped_is_partial_on_both_streams(tmp_path: Path, sandbox: SandboxHandle) -> None:
    transfers = next(op for op in OPERATIONS if op.name == "list_transfers")
    scopes = sorted({s for op in OPERATIONS for s in op.scopes} - set(transfers.scopes))
    result = run_cli(TWO, cli_env(tmp_path, source_options(sandbox, sandbox.token(scopes), **FAST)), tmp_path)
    assert_one_cause(result, 3, "transfers skipped: ")
    assert "SKIPPED transfers" in result.stdout and "products" not in result.stderr
    assert result.stdout.rstrip().endswith("the reasons are on stderr.")
    assert "the run was PARTIAL (exit status 3)" in result.stdout


@pytest.mark.parametrize(
    ("variables", "cause"),
    [
        (
            {"DESTINATION__POSTGRES__CREDENTIALS": "eco_wh"},
            "configuration error: the postgres destination's credentials could not be read (value not shown)",
        ),
        ({}, "configuration error: the postgres destination is missing credentials"),
    ],
    ids=["malformed", "missing"],
)
def test_postgres_credentials(
    tmp_path: Path, sandbox: SandboxHandle, variables: dict[str, str], cause: str
) -> None:
    env = {**cli_env(tmp_path, source_options(sandbox, sandbox.token(), **FAST)), **variables}
    sandbox.reset_stats()
    result = run_cli(["sync", "--no-progress", "--destination", "postgres"], env, tmp_path)
    line = assert_one_cause(result, 2, cause)
    assert "eco_wh" not in line
    assert sandbox.stats()["total"] == 0


def test_missing_access_token(tmp_path: Path, sandbox: SandboxHandle) -> None:
    options = source_options(sandbox, "x", **FAST)
    del options["access_token"]
    result = run_cli(TWO, cli_env(tmp_path, options), tmp_path)
    line = assert_one_cause(result, 2, "configuration error: missing access_token")
    assert (
        "SOURCES__PLATFORM__ACCESS_TOKEN" in line
        and "`platform-sync auth --code CODE` stores a token" in line
    )


@contextmanager
def held_open(database: Path, sql: str = "select 1") -> Iterator[subprocess.Popen[str]]:
    """Another program holding the DuckDB file open (after running `sql` on it) while the block runs."""
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb, sys; c = duckdb.connect({str(database)!r}); c.execute({sql!r}); {HOLD_OPEN}",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        yield holder
    finally:
        holder.communicate("", timeout=30)


def test_duckdb_file_held_open_by_another_program(tmp_path: Path, sandbox: SandboxHandle) -> None:
    database = tmp_path / "warehouse.duckdb"
    with held_open(database) as holder:
        env = cli_env(tmp_path, source_options(sandbox, sandbox.token(), **FAST))
        sandbox.reset_stats()
        result = run_cli(TWO, env, tmp_path)
    line = assert_one_cause(result, 2, f"not started: the DuckDB file {database} is open in another program")
    assert f"pid {holder.pid}" in line and "close it" in line
    assert "check if you configured the credentials" not in result.stderr
    assert sandbox.stats()["total"] == 0


def test_models_on_a_duckdb_file_held_open_by_another_program(tmp_path: Path) -> None:
    """Issue 51: `models` said it in dlt's 570 characters ("check if you configured the credentials ...
    your internet connection may be down"), exit 1; `sync` says it in one line, exit 2, as the README
    promises for both."""
    database = tmp_path / "warehouse.duckdb"
    seed = "create schema platform_raw; create table platform_raw.products (id text)"
    with held_open(database, seed) as holder:
        result = run_cli(["models"], cli_env(tmp_path, {}), tmp_path)
    line = assert_one_cause(result, 2, f"not started: the DuckDB file {database} is open in another program")
    assert f"pid {holder.pid}" in line and line.endswith("No model was built.")
    assert "check if you configured the credentials" not in result.stderr


@pytest.mark.parametrize(
    ("args", "cause"),
    [
        (
            ["sync", "--destination", "duckbd"],
            "configuration error: unknown destination 'duckbd'; did you mean",
        ),
        (["sync", "--resources", "products,salez"], "configuration error: unknown resource(s) salez"),
    ],
)
def test_bad_arguments(tmp_path: Path, sandbox: SandboxHandle, args: list[str], cause: str) -> None:
    result = run_cli(args, cli_env(tmp_path, source_options(sandbox, sandbox.token(), **FAST)), tmp_path)
    assert_one_cause(result, 2, cause)


@pytest.mark.parametrize(("where", "setting", "message"), CASES)
def test_each_config_error_is_one_line(
    tmp_path: Path, sandbox: SandboxHandle, where: str, setting: object, message: str
) -> None:
    options: dict[str, object] = {"base_url": sandbox.base_url}
    if isinstance(setting, dict):
        options.update(setting)
    dlt_dir = tmp_path / ".dlt"
    dlt_dir.mkdir()
    secrets = "" if "access_token" in str(setting) else 'access_token = "secret-token-123"\n'
    if where == "secrets.toml":
        secrets += f"{setting}\n"
    (dlt_dir / "secrets.toml").write_text(f"[sources.platform]\n{secrets}")
    if where == "config.toml":
        (dlt_dir / "config.toml").write_text(f"[sources.platform]\n{setting}\n")
    result = run_cli(["sync", "--no-progress"], cli_env(tmp_path, options), tmp_path)
    assert_one_cause(result, 2, f"configuration error: {message}")


def test_auth_without_a_client_id_does_not_suggest_running_auth(tmp_path: Path) -> None:
    result = run_cli(["auth", "--code", "abc"], cli_env(tmp_path, {}), tmp_path)
    line = assert_one_cause(result, 2, "configuration error: missing auth_url, client_id, client_secret.")
    assert "SOURCES__PLATFORM__AUTH_URL" in line and "client id and secret" in line
    assert "platform-sync auth" not in line
