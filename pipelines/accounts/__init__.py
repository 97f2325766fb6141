"""Many producer accounts into one warehouse: a dlt pipeline and a dataset per account (docs/accounts.md).

The interface the command line, Dagster and Airflow use:

    for account in configured_accounts():          # [] when no [accounts.*] is configured
        run = sync_account(account)                 # never raises for the account's own failures
        print(run.name, run.exit_status, run.message)

`account_pipeline(account)` is the account's dlt pipeline (for `dlt pipeline <name> ...`, the models, the
dashboard); `sync_accounts` runs several, a few at a time; `overall_exit_status` is the command line's
verdict over them. The room sits between the command line (`pipelines/cli/accounts.py` gives it its
options) and the rooms it runs: `sync`, `dbt`, `commands`.
"""

from pipelines.accounts.run import (
    DEFAULT_AT_ONCE,
    AccountRun,
    overall_exit_status,
    sync_account,
    sync_accounts,
)
from pipelines.sync.accounts import (
    DEFAULT_ACCOUNT,
    Account,
    account_named,
    account_pipeline,
    account_source_options,
    configured_accounts,
    find_account,
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
