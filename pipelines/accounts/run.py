"""One account's sync, as `platform-sync sync` runs it, and several accounts a few at a time.

`sync_account` is the path of `platform-sync sync` for one account's pipeline (its settings, its run lock,
the outcome table, the summary figures) and never raises for the account's own failures: a revoked
token, a missing scope, a bad setting or a failed step is that account's `AccountRun` with the exit status
`platform-sync sync` would have ended with. `sync_accounts` runs many in threads of one process, at most
`at_once` together: every account has its own dlt pipeline (dlt keeps a pipeline context per thread),
state, working folder, lock, rate limiter and HTTP client.

One DuckDB file has one writer process: the accounts' threads share this process's DuckDB database
(DuckDB opens one database per file and process, and concurrent transactions on different tables do
not conflict), so the file's run lock is taken once for all of them (`hold_destination=False` for each).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import dlt
from dlt.common.configuration.exceptions import (
    ConfigFieldMissingException,
    ConfigurationException,
    ConfigValueCannotBeCoercedException,
    InvalidNativeValue,
    ValueNotSecretException,
)
from dlt.pipeline.exceptions import PipelineStepFailed

from pipelines.sync.accounts import DEFAULT_ACCOUNT, Account, account_pipeline, account_source_options
from pipelines.sync.defaults import set_default
from pipelines.sync.load_failure import failure_line, replace_from_staging
from pipelines.sync.lock import LockHeld, destination_hold, pipeline_hold, run_lock
from pipelines.sync.messages import invalid_value_message, step_failure
from pipelines.sync.platform_pipeline import (
    DEFAULT_DESTINATION,
    SyncResult,
    check_resource_names,
    prepare_process,
    sync,
)
from pipelines.sync.preflight import check_destination_config, check_destination_name
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from pipelines.sync.verdict import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_PARTIAL,
    failure_lines,
    sync_exit_status,
)
from sources.platform.config_check import explain as explain_config_error
from sources.platform_client.errors import ConfigurationError, PlatformError

logger = logging.getLogger("platform_sync.accounts")

DEFAULT_AT_ONCE = 3
# dlt loads up to 20 jobs of one pipeline at once (`[load] workers`), each on connections of its own (on
# PostgreSQL its client's and ADBC's): accounts loading together share this many, so that N accounts do
# not take N times a server's connections (a test server's max_connections of 40 was exceeded by two)
LOAD_JOBS_TOGETHER = 16


@dataclass
class AccountRun:
    """What one account's sync ended with: `exit_status` as `platform-sync sync` documents it (0 ok,
    1 failed, 2 bad configuration or locked, 3 partial), its outcome rows (`_platform_sync_runs`), one
    line saying what went wrong (empty when nothing did), and the sync's figures when it ran."""

    name: str
    exit_status: int
    outcomes: list[dict[str, Any]] = field(default_factory=list)
    message: str = ""
    result: SyncResult | None = None


def sync_account(
    account: Account,
    resources: list[str] | None = None,
    *,
    full_refresh: bool = False,
    source_options: Mapping[str, Any] | None = None,
    destination: str = DEFAULT_DESTINATION,
    command: str = "platform-sync sync",
    hold_destination: bool = True,
) -> AccountRun:
    """Sync one account as `platform-sync sync` does; its own failures are its `AccountRun`, never raised.

    `source_options` are the command line's (`start_date`, `rescan`), over the account's settings.
    `hold_destination=False`: the caller holds the destination's run lock for this process (several
    accounts into one DuckDB file); the account's own pipeline lock is taken either way."""
    try:
        options = {**account_source_options(account), **dict(source_options or {})}
        if resources:
            check_resource_names(resources)
        check_destination_name(destination)
        check_destination_config(account.pipeline_name, destination, account.dataset_name)
        pipeline = account_pipeline(account, destination)
        started_at = run_started_at()
        with _locks(pipeline, command, hold_destination):
            try:
                result = sync(pipeline, resources, full_refresh, options)
            except OSError as exc:  # dlt failing again while it handled a failure: that step's failure
                raise PipelineStepFailed(pipeline, "sync", "", exc) from exc
            outcomes = outcome_rows(result, resources, started_at)
            record_run(pipeline, outcomes, result.freshness, result.coverage, result.retired)
    except Exception as exc:  # every failure of one account is that account's outcome
        status, message = failure_of(exc, account)
        if status is None:
            logger.exception("account %s: unexpected failure", account.name)
            status, message = EXIT_FAILED, f"unexpected failure: {type(exc).__name__}: {exc}"
        return AccountRun(account.name, status, [], message)
    status, failure = sync_exit_status(result, resources)
    lines = [_own_token_hint(line, account) for line in failure_lines(result, failure)]
    return AccountRun(account.name, status, outcomes, "; ".join(lines), result)


def sync_accounts(
    accounts: Sequence[Account],
    resources: list[str] | None = None,
    *,
    at_once: int = DEFAULT_AT_ONCE,
    full_refresh: bool = False,
    source_options: Mapping[str, Any] | None = None,
    destination: str = DEFAULT_DESTINATION,
    command: str = "platform-sync sync",
    on_done: Callable[[AccountRun], None] | None = None,
) -> list[AccountRun]:
    """Sync `accounts`, at most `at_once` at a time, each in a thread; the runs in the accounts' order.

    On DuckDB the file's run lock is held once by this process for all of them (raises `LockHeld` when
    another process has it: nothing was done); on a server destination each account's dataset has its
    own lock, taken by its sync."""
    if at_once < 1:
        raise ConfigurationError(f"--accounts-at-once must be 1 or more, not {at_once}")
    if not accounts:
        return []
    shared = _shared_duckdb_lock(accounts[0], destination, command)
    together = min(at_once, len(accounts))
    if shared is None and together > 1:  # a server destination; `[load] workers` configured wins
        set_default("load.workers", max(1, LOAD_JOBS_TOGETHER // together))
    # dlt's settings that each sync writes are written here once, before the threads read them
    prepare_process()
    if shared is not None:
        replace_from_staging()

    def one(account: Account) -> AccountRun:
        run = sync_account(
            account,
            resources,
            full_refresh=full_refresh,
            source_options=source_options,
            destination=destination,
            command=command,
            hold_destination=shared is None,
        )
        if on_done is not None:
            on_done(run)
        return run

    with shared or contextlib.nullcontext(), ThreadPoolExecutor(at_once, "platform-account") as pool:
        return list(pool.map(one, accounts))


def overall_exit_status(runs: Sequence[AccountRun]) -> int:
    """0 when every account loaded; 3 when some did (fully or partly) and others did not; when none
    did, 1 if any failed, else 2 (every account's configuration refused)."""
    statuses = [run.exit_status for run in runs]
    if all(status == EXIT_OK for status in statuses):
        return EXIT_OK
    if any(status in (EXIT_OK, EXIT_PARTIAL) for status in statuses):
        return EXIT_PARTIAL
    return EXIT_FAILED if EXIT_FAILED in statuses else max(statuses)


def failure_of(exc: BaseException, account: Account) -> tuple[int | None, str]:
    """The exit status and one line for an error one account's sync raised, as `platform-sync sync` says
    them; (None, ...) for an error that is no known failure (a bug: logged with its traceback)."""
    if isinstance(exc, ConfigurationError | ConfigFieldMissingException):
        return EXIT_CONFIG, f"configuration error: {_config_message(exc, account)}"
    if isinstance(exc, ConfigValueCannotBeCoercedException | ValueNotSecretException):
        return EXIT_CONFIG, f"configuration error: {explain_config_error(exc)}"
    if isinstance(exc, InvalidNativeValue):
        return EXIT_CONFIG, f"configuration error: {invalid_value_message(exc)}"
    if isinstance(exc, ConfigurationException):
        return EXIT_CONFIG, f"configuration error: {exc}"
    if isinstance(exc, LockHeld):
        return EXIT_CONFIG, f"not started: {exc}"
    if isinstance(exc, PipelineStepFailed):
        if isinstance(exc.exception, InvalidNativeValue):
            return EXIT_CONFIG, f"configuration error: {invalid_value_message(exc.exception)}"
        message, is_config = step_failure(exc.step, exc.exception)
        return (EXIT_CONFIG, message) if is_config else (EXIT_FAILED, failure_line(exc))
    if isinstance(exc, PlatformError):
        return EXIT_FAILED, f"error: {_own_token_hint(str(exc), account)}"
    return None, str(exc)


def _config_message(exc: Exception, account: Account) -> str:
    if isinstance(exc, ConfigFieldMissingException):
        fields = ", ".join(exc.fields)
        where = "[sources.platform]" if account.name == DEFAULT_ACCOUNT else f"[accounts.{account.name}]"
        return f"missing {fields} for the account {account.name!r}: set it under {where} in .dlt/config.toml."
    return str(exc)


def _own_token_hint(line: str, account: Account) -> str:
    """An account's token is set under its own name, not `[sources.platform]`."""
    if account.name == DEFAULT_ACCOUNT:
        return line
    return line.replace("SOURCES__PLATFORM__ACCESS_TOKEN", f"ACCOUNTS__{account.name.upper()}__ACCESS_TOKEN")


@contextlib.contextmanager
def _locks(pipeline: dlt.Pipeline, command: str, hold_destination: bool) -> Iterator[None]:
    if hold_destination:
        with run_lock(pipeline, "write", command=command):
            yield
        return
    with pipeline_hold(pipeline, "write", command):
        yield


def _shared_duckdb_lock(account: Account, destination: str, command: str) -> Any:
    """The DuckDB file's run lock, for this process's accounts together; None on a server destination."""
    if destination != "duckdb":
        return None
    pipeline = account_pipeline(account, destination)
    return destination_hold(pipeline, "write", command)
