"""The command line as users run it: a subprocess, config from the environment, exit statuses, kill -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import dlt
import pytest
import tomlkit

from sandbox.running import running_sandbox
from sources.platform_client.operations import OPERATIONS
from tests.pipelines.sync.test_sync import assert_warehouse_matches_api
from tests.support.forked_command import run_command
from tests.support.sync_helpers import query, source_options

CLI = [sys.executable, "-m", "pipelines.cli"]
PROJECT_ROOT = Path(__file__).resolve().parents[3]


def cli_env(tmp_path: Path, options: dict[str, object]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCES__", "DESTINATION__"))}
    env["PYTHONPATH"] = str(PROJECT_ROOT)
    env["DESTINATION__DUCKDB__CREDENTIALS"] = str(tmp_path / "warehouse.duckdb")
    # the folder as a project of its own: dlt's data folder (the pipelines' working folders) in it, so two
    # folders' runs never continue from each other's state (pipelines/sync/working_folder.py)
    env["DLT_DATA_DIR"] = str(tmp_path / ".dlt")
    for key, value in options.items():
        env[f"SOURCES__PLATFORM__{key.upper()}"] = value if isinstance(value, str) else json.dumps(value)
    return env


def run_cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_command(CLI, args, env, cwd, timeout=300)


def warehouse(tmp_path: Path) -> dlt.Pipeline:
    return dlt.pipeline(
        pipeline_name="platform_sync_check",
        destination=dlt.destinations.duckdb(str(tmp_path / "warehouse.duckdb")),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "check"),
    )


@pytest.mark.parametrize("kill_after", [1.5, 4.0])
def test_run_killed_mid_way_then_rerun_ends_exact(tmp_path, kill_after):
    # A slower time scale makes the sale details take several seconds, so the kill lands mid-run.
    with running_sandbox(seed=4, scale=400, time_scale=60) as sandbox:
        token = sandbox.token()
        env = cli_env(tmp_path, source_options(sandbox, token, rate_limit_time_scale=60))
        process = subprocess.Popen([*CLI, "sync", "--no-progress"], env=env, cwd=tmp_path)
        time.sleep(kill_after)
        assert process.poll() is None, "the run ended before it could be killed"
        process.send_signal(signal.SIGKILL)
        process.wait()
        rerun = run_cli(["sync", "--no-progress"], env, tmp_path)
        assert rerun.returncode == 0, rerun.stdout + rerun.stderr
        pipeline = warehouse(tmp_path)
        assert_warehouse_matches_api(pipeline, sandbox, token)
        assert query(pipeline, "select count(*) - count(distinct id) from sales") == [(0,)]


def test_partial_run_exits_3_and_names_the_scope(tmp_path):
    with running_sandbox(seed=2, scale=100, time_scale=600) as sandbox:
        scopes = sorted({s for op in OPERATIONS for s in op.scopes} - {"store_products_read"})
        env = cli_env(tmp_path, source_options(sandbox, sandbox.token(scopes), rate_limit_time_scale=600))
        result = run_cli(["sync", "--no-progress"], env, tmp_path)
        assert result.returncode == 3, result.stdout + result.stderr
        assert "SKIPPED products" in result.stdout and "store_products_read" in result.stderr  # the cause
        assert "subscriptions" in result.stdout


@pytest.mark.parametrize(
    ("args", "override", "message"),
    [
        (["sync", "--resources", "products,salez"], {}, "unknown resource(s) salez"),
        (["sync"], {"start_date": "last tuesday"}, "start_date 'last tuesday' is not a date"),
        (["sync"], {"access_token": None}, "missing access_token"),
        (["sync"], {"schools": [{"slug": "x"}]}, "schools[0] must be a table with team_slug"),
        (["sync"], {"rate_limits": {"sale_detail": 10}}, "sale_detail"),
    ],
)
def test_bad_config_fails_before_any_request(tmp_path, args, override, message):
    with running_sandbox(seed=2, scale=50) as sandbox:
        options = {**source_options(sandbox, sandbox.token()), **override}
        env = cli_env(tmp_path, {k: v for k, v in options.items() if v is not None})
        sandbox.reset_stats()
        result = run_cli(args, env, tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert message in result.stderr
        assert sandbox.stats()["total"] == 0


def test_token_never_printed(tmp_path):
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        token = sandbox.token()
        env = cli_env(tmp_path, source_options(sandbox, token, rate_limit_time_scale=600))
        sandbox.set_faults("revoke_after=5")
        result = run_cli(["-v", "sync", "--no-progress"], env, tmp_path)
        assert result.returncode in (1, 3)
        assert "platform-sync auth" in result.stdout + result.stderr
        assert token not in result.stdout + result.stderr


@pytest.mark.parametrize("code", ["-x9Qa_b", "--looks-like-an-option", "plain"])
def test_a_code_beginning_with_a_dash_is_the_codes_value(code):
    """A code is URL-safe base64, '-' included: `auth --code -x9Qa_b` (the README's form) is that code,
    not a missing value and an unknown option."""
    from pipelines.cli.main import VALUE_OPTIONS, _parser, _values_kept

    options = _parser().parse_args(_values_kept(["auth", "--code", code, "--account", "acme"], VALUE_OPTIONS))
    assert (options.code, options.account) == (code, "acme")


def test_auth_exchanges_a_code_and_the_next_sync_uses_the_stored_token(tmp_path):
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        scopes = ["store_products_read", "webhook_read"]
        code = sandbox.authorize(scopes)
        env = cli_env(tmp_path, {"auth_url": sandbox.auth_url, "base_url": sandbox.base_url})
        env["SOURCES__PLATFORM__CLIENT_ID"] = "sandbox-demo"
        env["SOURCES__PLATFORM__CLIENT_SECRET"] = "sandbox-demo-secret"
        (tmp_path / ".dlt").mkdir()
        secrets = tmp_path / ".dlt" / "secrets.toml"
        secrets.write_text('# my secrets\n[sources.platform]\nclient_id = "sandbox-demo"\n')

        result = run_cli(["auth", f"--code={code}"], env, tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        text = secrets.read_text()
        assert "# my secrets" in text and "access_token" in text and "store_products_read" in text
        assert oct(secrets.stat().st_mode & 0o777) == "0o600"

        again = run_cli(["auth", "--code", code], env, tmp_path)  # the README's form, whatever the code
        assert again.returncode == 1 and "already used" in again.stderr

        # the stored scopes let the pipeline skip what the token cannot read, without asking the API
        sandbox.reset_stats()
        synced = run_cli(["sync", "--no-progress", "--resources", "products,transfers"], env, tmp_path)
        assert synced.returncode == 3, synced.stdout + synced.stderr
        assert "SKIPPED transfers" in synced.stdout
        assert "list_transfers" not in sandbox.stats()["operations"]
        assert query(warehouse(tmp_path), "select count(*) from products")[0][0] > 0


def test_auth_for_an_account_stores_its_token_under_its_table_and_its_sync_uses_it(tmp_path):
    """`auth --account NAME`: the account's table sets its own `auth_url` (a setting of `[sources.platform]`,
    so an account's too), the app's client comes from `[sources.platform]`; the token is stored under
    `[accounts.NAME]` only, and `sync --account NAME` then loads with it."""
    with running_sandbox(seed=2, scale=50, time_scale=600) as sandbox:
        code = sandbox.authorize(["store_products_read"])
        env = cli_env(tmp_path, {})
        env["SOURCES__PLATFORM__CLIENT_ID"] = "sandbox-demo"
        env["SOURCES__PLATFORM__CLIENT_SECRET"] = "sandbox-demo-secret"
        (tmp_path / ".dlt").mkdir()
        (tmp_path / ".dlt" / "config.toml").write_text(
            f'[accounts.acme]\nauth_url = "{sandbox.auth_url}"\nbase_url = "{sandbox.base_url}"\n'
            'start_date = "2020-01-01"\nrate_limit_time_scale = 600.0\n'
        )
        secrets = tmp_path / ".dlt" / "secrets.toml"

        result = run_cli(["auth", "--account", "acme", f"--code={code}"], env, tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "[accounts.acme]" in result.stdout
        stored = tomlkit.parse(secrets.read_text())
        assert set(stored) == {"accounts"}  # nothing under [sources.platform]
        assert stored["accounts"]["acme"]["granted_scopes"] == ["store_products_read"]  # type: ignore[index]

        synced = run_cli(
            ["sync", "--account", "acme", "--no-progress", "--resources", "products"], env, tmp_path
        )
        assert synced.returncode == 0, synced.stdout + synced.stderr

        unknown = run_cli(["auth", "--account", "zeta", "--code", "x"], env, tmp_path)
        assert unknown.returncode == 2 and "no account named 'zeta'" in unknown.stderr
