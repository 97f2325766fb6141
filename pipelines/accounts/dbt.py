"""The accounts as the dbt project reads them (dbt_models/macros/platform_accounts.sql).

`platform-sync models` (and Dagster, through `pipelines.models.dbt_environment`) hands dbt the configured
accounts as the environment variable PLATFORM_SYNC_ACCOUNTS, a JSON list of {name, schema}; without
accounts it is not set, and the models read the one dataset of the pipeline as the account `default`.
"""

from __future__ import annotations

import json

import dlt

from pipelines.accounts.config import configured_accounts
from pipelines.accounts.run import account_pipeline
from pipelines.platform_pipeline import DATASET_NAME, make_pipeline

ACCOUNTS_ENV = "PLATFORM_SYNC_ACCOUNTS"


def dbt_accounts_env() -> dict[str, str]:
    """{PLATFORM_SYNC_ACCOUNTS: [{name, schema}, ...]} for the configured accounts; {} without any."""
    accounts = configured_accounts()
    if not accounts:
        return {}
    listed = [{"name": account.name, "schema": account.dataset_name} for account in accounts]
    return {ACCOUNTS_ENV: json.dumps(listed)}


def models_pipeline(destination: str, dataset_name: str = DATASET_NAME) -> dlt.Pipeline:
    """The pipeline whose destination `platform-sync models` runs on: the default one, or with accounts
    configured (and no other dataset asked for) the first account whose dataset holds raw tables (the
    models read every account's; the warehouse is the same)."""
    accounts = configured_accounts()
    if not accounts or dataset_name != DATASET_NAME:
        return make_pipeline(destination, dataset_name)
    from pipelines.models import raw_tables

    pipelines = [account_pipeline(account, destination) for account in accounts]
    return next((pipeline for pipeline in pipelines if raw_tables(pipeline)), pipelines[0])
