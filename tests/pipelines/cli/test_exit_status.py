"""Exit statuses a scheduler can act on, each produced by the real command (issue 19):
0 done, 1 failed, 2 bad configuration with nothing requested, 3 partial; and `--version`."""

from __future__ import annotations

import importlib.metadata

import pytest

from pipelines.cli.summary import CONFIGURED_BY
from sandbox.running import running_sandbox
from sources.platform_client.operations import OPERATIONS
from tests.support.cli import cli_env, run_cli
from tests.support.sync_helpers import source_options

FAST = {"rate_limit_time_scale": 600}


def test_version(tmp_path):
    result = run_cli(["--version"], {}, tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"platform-sync {importlib.metadata.version('platform-sync')}"


def test_rejected_token_exits_1_and_says_authorize_again(tmp_path):
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        env = cli_env(tmp_path, source_options(sandbox, "not-a-valid-token", **FAST))
        result = run_cli(["sync", "--no-progress", "--resources", "products,transfers"], env, tmp_path)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "authorize again" in result.stderr
        assert "platform-sync auth --code" in result.stderr
        assert "FAILED products" in result.stdout and "FAILED transfers" in result.stdout
        assert "not-a-valid-token" not in result.stdout + result.stderr


def test_token_revoked_mid_run_exits_1(tmp_path):
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        env = cli_env(tmp_path, source_options(sandbox, sandbox.token(), **FAST))
        sandbox.set_faults("revoke_after=5")
        result = run_cli(["sync", "--no-progress"], env, tmp_path)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "authorize again" in result.stderr


def test_every_resource_failing_exits_1(tmp_path):
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        env = cli_env(tmp_path, source_options(sandbox, sandbox.token(), max_retries=1, **FAST))
        sandbox.set_faults("error=1.0")
        result = run_cli(["sync", "--no-progress", "--resources", "products,transfers"], env, tmp_path)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "FAILED products" in result.stdout and "FAILED transfers" in result.stdout
        assert "the run FAILED (exit status 1)" in result.stdout
        assert len([line for line in result.stderr.splitlines() if " failed: " in line]) == 1


def test_an_api_that_cannot_be_reached_exits_1_and_says_it_once(tmp_path):
    """Issue 51: nothing listening at `base_url` exited 3 (PARTIAL: the resources with nothing configured
    and `sales` without ids counted as loaded) and printed 115 retry warnings for one cause."""
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        token, base_url = sandbox.token(), sandbox.base_url
    # the sandbox has stopped: nothing listens there now; no event, school or sale id configured
    options = {"base_url": base_url, "access_token": token, "max_retries": 3, **FAST}
    result = run_cli(["sync", "--no-progress"], cli_env(tmp_path, options), tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "the run FAILED (exit status 1)" in result.stdout
    assert "PARTIAL" not in result.stdout
    retrying = [line for line in result.stderr.splitlines() if "retrying" in line]
    assert len(retrying) == 1 and "Connection refused" in retrying[0], retrying
    assert len([line for line in result.stderr.splitlines() if " failed: no answer from " in line]) == 1


def test_one_resource_skipped_exits_3_and_a_clean_run_0(tmp_path):
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        transfers = next(op for op in OPERATIONS if op.name == "list_transfers")
        scopes = sorted({s for op in OPERATIONS for s in op.scopes} - set(transfers.scopes))
        args = ["sync", "--no-progress", "--resources", "products,transfers"]
        partial_env = cli_env(tmp_path, source_options(sandbox, sandbox.token(scopes), **FAST))
        partial = run_cli(args, partial_env, tmp_path)
        assert partial.returncode == 3, partial.stdout + partial.stderr
        assert "SKIPPED transfers" in partial.stdout and "SKIPPED products" not in partial.stdout

        done = run_cli(args, cli_env(tmp_path, source_options(sandbox, sandbox.token(), **FAST)), tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "SKIPPED" not in done.stdout and "FAILED" not in done.stdout


def test_the_summary_lists_every_resource_and_why_it_loaded_nothing(tmp_path):
    """Issue 51: with no event, school or community configured, those resources vanished from the summary
    without a word; now each has its line and its reason (of the resources the run was asked for)."""
    with running_sandbox(seed=2, scale=40, time_scale=600) as sandbox:
        options = {
            "base_url": sandbox.base_url,
            "access_token": sandbox.token(),
            "start_date": "2020-01-01",
            **FAST,
        }
        first = run_cli(["sync", "--no-progress"], cli_env(tmp_path, options), tmp_path)
        again = run_cli(
            ["sync", "--no-progress", "--resources", "transfers"], cli_env(tmp_path, options), tmp_path
        )
    assert first.returncode == 0, first.stdout + first.stderr
    rows = {line.split()[0]: line for line in first.stdout.splitlines() if line.strip()}
    for resource, setting in CONFIGURED_BY.items():
        assert rows[resource].split()[1] == "0", rows[resource]
        assert rows[resource].endswith(f"(nothing configured: `{setting}` is empty in [sources.platform])")
    assert int(rows["transfers"].split()[1]) > 0
    assert again.returncode == 0, again.stdout + again.stderr
    assert "transfers" in again.stdout and "events" not in again.stdout  # only the resources of the run


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sync", "--destination", "duckbd"], "unknown destination 'duckbd'; did you mean duckdb"),
        (["sync", "--destination", "postgress"], "did you mean postgres"),
        (["sync", "--destination", "postgres"], "the postgres destination is missing credentials"),
        (["sync", "--resources", "products,salez"], "unknown resource(s) salez"),
    ],
)
def test_bad_configuration_exits_2_before_any_request(tmp_path, args, message):
    with running_sandbox(seed=2, scale=50) as sandbox:
        env = cli_env(tmp_path, source_options(sandbox, sandbox.token(), **FAST))
        sandbox.reset_stats()
        result = run_cli(args, env, tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert message in result.stderr
        assert "Traceback" not in result.stderr
        assert sandbox.stats()["total"] == 0
        assert not (tmp_path / "warehouse.duckdb").exists()
