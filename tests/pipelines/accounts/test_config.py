"""Accounts as configuration: `[accounts.<name>]` tables, each token its own, one clear line and exit 2
for what is misconfigured (no request is made: the accounts' addresses point at a closed port)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import dlt
import pytest
import tomlkit

from tests.support.accounts import base_env, run_cli

pytestmark = pytest.mark.xdist_group("accounts")

CLOSED = "http://127.0.0.1:9"


def _project(folder: Path, accounts: dict[str, dict[str, Any]], tokens: dict[str, str]) -> dict[str, str]:
    (folder / ".dlt").mkdir(parents=True, exist_ok=True)
    document = tomlkit.document()
    document["accounts"] = accounts
    (folder / ".dlt" / "config.toml").write_text(tomlkit.dumps(document))
    env = base_env(folder)
    env.update({f"ACCOUNTS__{name.upper()}__ACCESS_TOKEN": token for name, token in tokens.items()})
    return env


def _in_project(folder: Path, env: dict[str, str], code: str) -> Any:
    """What `code` prints as JSON, run in `folder` as a project of its own (dlt reads its TOML files once
    per process)."""
    result = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=folder, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


ACCOUNTS_AND_OPTIONS = """
import json
from dataclasses import asdict
from pipelines.accounts import account_source_options, configured_accounts
from sources.platform_client.errors import ConfigurationError
out = []
for account in configured_accounts():
    try:
        options = account_source_options(account)
    except ConfigurationError as exc:
        options = str(exc)
    out.append([asdict(account), options])
print(json.dumps(out))
"""


def test_accounts_come_from_config_in_order_with_their_own_datasets(tmp_path):
    accounts = {"zeta": {"base_url": CLOSED, "sale_ids": ["1"]}, "acme": {}, "default": {}}
    env = _project(tmp_path, accounts, {"zeta": "token-z"})
    env["ACCOUNTS__ZETA__COMMUNITY_IDS"] = "[7, 8]"  # the environment adds and overrides
    env["SOURCES__PLATFORM__ACCESS_TOKEN"] = "the-default-accounts-token"
    (zeta, zeta_options), (acme, acme_options), (default, default_options) = _in_project(
        tmp_path, env, ACCOUNTS_AND_OPTIONS
    )
    assert [zeta, acme, default] == [
        {"name": "zeta", "pipeline_name": "platform_sync__zeta", "dataset_name": "platform_raw_zeta"},
        {"name": "acme", "pipeline_name": "platform_sync__acme", "dataset_name": "platform_raw_acme"},
        {"name": "default", "pipeline_name": "platform_sync", "dataset_name": "platform_raw"},
    ]
    assert zeta_options == {
        "base_url": CLOSED,
        "sale_ids": ["1"],
        "community_ids": [7, 8],
        "access_token": "token-z",
    }
    assert "has no access token" in acme_options and "ACCOUNTS__ACME__ACCESS_TOKEN" in acme_options
    assert default_options == {}  # [sources.platform] as today, its token included


def test_no_accounts_configured_is_an_empty_list(tmp_path):
    env = base_env(tmp_path)
    assert _in_project(tmp_path, env, ACCOUNTS_AND_OPTIONS) == []


def test_dlt_resolves_an_accounts_pipeline_scoped_setting_before_the_shared_one(tmp_path, monkeypatch):
    """dlt looks a setting up under the active pipeline's name first: `platform_sync__acme.sources.
    platform.<key>` (docs/accounts.md): an account's pipeline is the active one while its source is built."""

    @dlt.source(name="platform", section="platform")
    def probe(items_per_page: int = dlt.config.value) -> Any:
        return dlt.resource([{"items_per_page": items_per_page}], name="probe")

    monkeypatch.setenv("SOURCES__PLATFORM__ITEMS_PER_PAGE", "100")
    monkeypatch.setenv("PLATFORM_SYNC__ACME__SOURCES__PLATFORM__ITEMS_PER_PAGE", "7")
    for name, expected in (("platform_sync__acme", 7), ("platform_sync__beta", 100)):
        pipeline = dlt.pipeline(pipeline_name=name, pipelines_dir=str(tmp_path / "pipelines"))
        pipeline.activate()
        rows = list(probe())
        assert rows == [{"items_per_page": expected}], name


@pytest.mark.parametrize(
    ("accounts", "tokens", "args", "line"),
    [
        pytest.param(
            {"Acme Store": {}},
            {},
            ["--all-accounts"],
            "configuration error: the account name 'Acme Store' cannot be used",
            id="bad-name",
        ),
        pytest.param(
            {"acme": {"base_url": CLOSED}},
            {},
            ["--account", "acme"],
            "account acme: configuration error: the account 'acme' has no access token",
            id="no-token",
        ),
        pytest.param(
            {"acme": {"base_url": CLOSED, "event_idz": []}},
            {"acme": "t"},
            ["--account", "acme"],
            "account acme: configuration error: [accounts.acme] has event_idz, which no setting",
            id="unknown-key",
        ),
        pytest.param(
            {"acme": {"base_url": CLOSED}},
            {"acme": "t"},
            ["--account", "acme", "--dataset", "other"],
            "configuration error: --dataset cannot be combined with --account",
            id="dataset",
        ),
        pytest.param(
            {"acme": {"base_url": CLOSED}},
            {"acme": "t"},
            ["--account", "acme_store"],
            "configuration error: no account named 'acme_store' is configured (configured: acme)",
            id="unknown-account",
        ),
        pytest.param(
            {},
            {},
            ["--all-accounts"],
            "configuration error: --all-accounts: no account is configured",
            id="none",
        ),
    ],
)
def test_a_misconfigured_account_is_one_line_and_exit_2(tmp_path: Path, accounts, tokens, args, line):
    env = _project(tmp_path, accounts, tokens)
    result = run_cli(["sync", *args, "--no-progress"], env, tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert line in result.stderr
    assert "Traceback" not in result.stderr
    problems = [text for text in result.stderr.splitlines() if "error" in text]
    assert len(problems) == 1, result.stderr
    assert not (tmp_path / "warehouse.duckdb").exists()


def test_the_json_summary_has_each_accounts_status_and_never_a_token(tmp_path: Path):
    accounts = {"acme": {"base_url": CLOSED, "event_idz": []}, "beta": {"base_url": CLOSED}}
    env = _project(tmp_path, accounts, {"acme": "secret-token-of-acme", "beta": "secret-token-of-beta"})
    env["ACCOUNTS__BETA__MAX_RETRIES"] = "1"  # the closed port: one try per request
    result = run_cli(["--log-format", "json", "sync", "--all-accounts", "--no-progress"], env, tmp_path)
    # beta's every list failed on the closed port and nothing else had anything to read: nothing loaded,
    # 1, as for one account (issue 51: its sales, named by none, used to count as loaded: 3); acme was
    # refused for its setting: no account loaded anything and one failed, so 1
    assert result.returncode == 1, result.stdout + result.stderr
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["event"] == "summary" and summary["exit_status"] == 1
    statuses = {account["account"]: account["exit_status"] for account in summary["accounts"]}
    assert statuses == {"acme": 2, "beta": 1}
    beta = summary["accounts"][1]
    assert {row["resource"]: row["status"] for row in beta["resources"]}["products"] == "failed"
    assert "event_idz" in summary["accounts"][0]["failure"]
    assert "secret-token-of" not in result.stdout + result.stderr
