"""Many producer accounts into one warehouse: a dlt pipeline and a dataset per account (docs/accounts.md).

The interface the command line, Dagster and Airflow use:

    for account in configured_accounts():          # [] when no [accounts.*] is configured
        run = sync_account(account)                 # never raises for the account's own failures
        print(run.name, run.exit_status, run.message)

`account_pipeline(account)` is the account's dlt pipeline (for `dlt pipeline <name> ...`, the models, the
dashboard); `sync_accounts` runs several, a few at a time; `overall_exit_status` is the command line's
verdict over them.
"""

from pipelines.accounts.config import (
    DEFAULT_ACCOUNT,
    Account,
    account_named,
    account_source_options,
    configured_accounts,
    find_account,
)
from pipelines.accounts.run import (
    DEFAULT_AT_ONCE,
    AccountRun,
    account_pipeline,
    overall_exit_status,
    sync_account,
    sync_accounts,
)

__all__ = [
    "DEFAULT_ACCOUNT",
    "DEFAULT_AT_ONCE",
    "Account",
    "AccountRun",
    "account_named",
    "account_pipeline",
    "account_source_options",
    "configured_accounts",
    "find_account",
    "overall_exit_status",
    "sync_account",
    "sync_accounts",
]
