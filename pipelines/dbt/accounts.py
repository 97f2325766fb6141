"""The accounts as the dbt project reads them (dbt_models/macros/platform_accounts.sql).

`platform-sync models` (and Dagster, through `pipelines.dbt.runner.dbt_environment`) hands dbt the configured
accounts as the environment variable PLATFORM_SYNC_ACCOUNTS, a JSON list of {name, schema}; without
accounts it is not set, and the models read the one dataset of the pipeline as the account `default`.
"""

from __future__ import annotations

import json

from pipelines.sync.accounts import configured_accounts

ACCOUNTS_ENV = "PLATFORM_SYNC_ACCOUNTS"


def dbt_accounts_env() -> dict[str, str]:
    """{PLATFORM_SYNC_ACCOUNTS: [{name, schema}, ...]} for the configured accounts; {} without any."""
    accounts = configured_accounts()
    if not accounts:
        return {}
    listed = [{"name": account.name, "schema": account.dataset_name} for account in accounts]
    return {ACCOUNTS_ENV: json.dumps(listed)}
