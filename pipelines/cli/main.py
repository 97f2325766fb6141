"""`platform-sync`: sync the platform's data, exchange a token, run the models, start the sandbox.

Exit status: 0 all done; 1 failed (also when every resource failed or the token was rejected);
2 nothing was requested: bad usage or configuration, another run holds the lock, the DuckDB file is open
in another program, the dashboard's port is taken;
3 partial: some resources were skipped (a missing scope) or failed, the others were loaded;
130 / 143 interrupted by SIGINT (Ctrl-C) / SIGTERM: nothing lost, the next run goes on from there.
Each cause of a failure is said once, on stderr (`pipelines/sync/messages.py`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.metadata
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dlt.common.configuration.exceptions import (
    ConfigFieldMissingException,
    ConfigurationException,
    ConfigValueCannotBeCoercedException,
    InvalidNativeValue,
    ValueNotSecretException,
)
from dlt.pipeline.exceptions import PipelineStepFailed

from pipelines.cli.accounts import add_account_options, run_accounts_sync, wants_accounts
from pipelines.cli.exit_guard import run_then_end
from pipelines.cli.extras import require_extra
from pipelines.cli.interrupt import (
    EXIT_STATUS,
    Interruption,
    interrupted_line,
    stop_on_signals,
    tables_loaded_since,
)
from pipelines.cli.output import configure_logging, is_json, print_json, say
from pipelines.cli.summary import print_interrupted, print_summary
from pipelines.cli.sync_request import sync_request
from pipelines.commands.forget_command import WarehouseHooks, add_forget_command
from pipelines.commands.write_commands import add_write_commands
from pipelines.sync.checkpoints import Checkpoints
from pipelines.sync.load_failure import failure_line, quiet_dlt_logs
from pipelines.sync.lock import LockHeld, run_lock
from pipelines.sync.messages import invalid_value_message, step_failure
from pipelines.sync.out_of_memory import out_of_memory_line, quiet_when_out_of_memory, ran_out_of_memory
from pipelines.sync.platform_pipeline import (
    DATASET_NAME,
    DEFAULT_DESTINATION,
    PIPELINE_NAME,
    make_pipeline,
    sync,
)
from pipelines.sync.preflight import check_destination_config, check_destination_name
from pipelines.sync.process_settings import apply_process_settings
from pipelines.sync.progress import SyncProgress, progress_for
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from pipelines.sync.verdict import (
    EXIT_CONFIG,
    EXIT_FAILED,
    EXIT_OK,
    failure_lines,
    sync_exit_status,
)
from sources.platform.config_check import explain as explain_config_error
from sources.platform.resources import STREAMS
from sources.platform_client.errors import ConfigurationError, PlatformError

# Options whose value may begin with '-' (an authorization code is URL-safe base64: '-' is one of its
# characters): argparse would take `--code -x9...` for a missing value and another option.
VALUE_OPTIONS = frozenset({"--code"})


def _values_kept(args: list[str], options: frozenset[str]) -> list[str]:
    """`args` with each `--option VALUE` of `options` written `--option=VALUE`, so that a value beginning
    with '-' stays that option's value."""
    kept: list[str] = []
    values = iter(args)
    for arg in values:
        if arg in options:
            value = next(values, None)
            kept.append(arg if value is None else f"{arg}={value}")
        else:
            kept.append(arg)
    return kept


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "sandbox":
        from sandbox.cli import main as sandbox_main

        return sandbox_main(args[1:])
    parser = _parser()
    options = parser.parse_args(_values_kept(args, VALUE_OPTIONS))
    # dlt's Airflow secrets provider imports Airflow wherever it is installed, and Airflow then replaces
    # the process's logging (our messages and --log-format json would vanish): off unless asked for.
    os.environ.setdefault("PROVIDERS__ENABLE_AIRFLOW_SECRETS", "false")
    configure_logging(options.verbose, options.log_format)
    quiet_dlt_logs(options.verbose)
    apply_process_settings()  # allocator and fork settings: this process is ours (never on import)
    if argv is None:  # out of memory, a thread's start-up prints what the one line says (issue 53)
        sys.unraisablehook = quiet_when_out_of_memory
    # once it has said how it ended, the process ends, threads left or not (the process's own command only)
    return run_then_end(lambda: _run_command(options), own_process=argv is None)


def _run_command(options: argparse.Namespace) -> int:
    """The command's exit status; each failure said in one line on stderr."""
    try:
        return int(options.run(options))
    except (ConfigurationError, ConfigFieldMissingException) as exc:
        say(f"configuration error: {_config_message(exc)}", event="exit")
        return EXIT_CONFIG
    except (ConfigValueCannotBeCoercedException, ValueNotSecretException) as exc:  # while dlt resolves
        say(f"configuration error: {explain_config_error(exc)}", event="exit")
        return EXIT_CONFIG
    except InvalidNativeValue as exc:  # e.g. DESTINATION__POSTGRES__CREDENTIALS that is no connection string
        say(f"configuration error: {invalid_value_message(exc)}", event="exit")
        return EXIT_CONFIG
    except ConfigurationException as exc:  # any other setting dlt could not resolve; no secret in it
        say(f"configuration error: {exc}", event="exit")
        return EXIT_CONFIG
    except LockHeld as exc:
        say(f"not started: {exc}", event="exit")
        return EXIT_CONFIG
    except PipelineStepFailed as exc:
        if isinstance(exc.exception, InvalidNativeValue):
            say(f"configuration error: {invalid_value_message(exc.exception)}", event="exit")
            return EXIT_CONFIG
        message, is_config = step_failure(exc.step, exc.exception)
        if is_config:
            say(message, event="exit")
            return EXIT_CONFIG
        say(failure_line(exc), event="exit")  # what ran out (disk, memory) and what to do, in one line
        return EXIT_FAILED
    except PlatformError as exc:
        say(f"error: {exc}", event="exit")
        return EXIT_FAILED
    except (MemoryError, RuntimeError, OSError) as exc:  # out of memory outside dlt's steps
        if not ran_out_of_memory(exc):
            raise
        say(out_of_memory_line(f"{options.command} failed", "the warehouse keeps what it held"), event="exit")
        return EXIT_FAILED
    except KeyboardInterrupt:  # Ctrl-C outside a sync's extract, normalize and load (or in another command)
        say("interrupted", level="warning", event="interrupted")
        return EXIT_STATUS[signal.SIGINT]


def _config_message(exc: Exception) -> str:
    if isinstance(exc, ConfigFieldMissingException):
        fields = list(exc.fields)
        message = (
            f"missing {', '.join(fields)}. Set them under [sources.platform] in .dlt/secrets.toml (secrets) "
            f"or .dlt/config.toml, or as environment variables such as SOURCES__PLATFORM__{fields[0].upper()}"
        )
        if "client_id" in fields or "client_secret" in fields:
            return message + " (your application's client id and secret, from the platform's developer area)."
        if "access_token" in fields:
            return message + " (`platform-sync auth --code CODE` stores a token)."
        return message + "."
    return str(exc)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="platform-sync", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="debug logging (tokens are never logged)"
    )
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="json: one JSON object per line on stderr (logs, progress) and the summary as JSON on stdout",
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {importlib.metadata.version('platform-sync')}"
    )
    commands = parser.add_subparsers(dest="command", required=True)

    sync_cmd = commands.add_parser("sync", help="load the platform's data into the warehouse")
    sync_cmd.add_argument("--resources", help=f"comma-separated subset of: {', '.join(STREAMS)}")
    sync_cmd.add_argument(
        "--start-date", help="lower bound of date-windowed resources on a first run (YYYY-MM-DD)"
    )
    sync_cmd.add_argument(
        "--full-refresh", action="store_true", help="drop the tables and state, load everything again"
    )
    sync_cmd.add_argument(
        "--rescan",
        action="store_true",
        help="read the full-scan resources now, even those whose last scan is younger than rescan_hours",
    )
    sync_cmd.add_argument(
        "--destination", default=DEFAULT_DESTINATION, help="any dlt destination (default duckdb)"
    )
    sync_cmd.add_argument("--dataset", default=DATASET_NAME, help="dataset (schema) of the raw tables")
    add_account_options(sync_cmd)  # --account NAME, --all-accounts (issue 32)
    sync_cmd.add_argument("--no-progress", action="store_true", help="no progress display while running")
    sync_cmd.add_argument(
        "--progress-interval",
        type=float,
        default=60.0,
        help="seconds between progress lines without a terminal or with --log-format json (default 60)",
    )
    sync_cmd.set_defaults(run=_run_sync)

    auth_cmd = commands.add_parser(
        "auth", help="exchange an authorization code for an access token and store it"
    )
    auth_cmd.add_argument("--code", required=True, help="the code from the authorization redirect")
    auth_cmd.add_argument("--redirect-uri", help="the redirect URI the code was issued for")
    auth_cmd.add_argument(
        "--secrets-path", default=".dlt/secrets.toml", type=Path, help="where the token is stored"
    )
    auth_cmd.add_argument(
        "--account",
        help="authorize this configured account: its token goes under [accounts.NAME] (docs/accounts.md)",
    )
    auth_cmd.set_defaults(run=_run_auth)

    models_cmd = commands.add_parser(
        "models", help="run the dbt models (dbt build) on the pipeline's destination"
    )
    models_cmd.add_argument("--destination", default=DEFAULT_DESTINATION)
    models_cmd.add_argument("--dataset", default=DATASET_NAME)
    models_cmd.add_argument("--select", help="dbt node selection")
    models_cmd.set_defaults(run=_run_models)

    demo_cmd = commands.add_parser(
        "demo", help="start the sandbox, sync it into DuckDB, run the models, stop"
    )
    demo_cmd.add_argument("--scale", type=int, default=None, help="sales in the sandbox's world")
    demo_cmd.add_argument("--seed", type=int, default=1)
    demo_cmd.set_defaults(run=_run_demo)

    dashboard_cmd = commands.add_parser(
        "dashboard", help="serve a web dashboard over the marts of the pipeline's destination"
    )
    dashboard_cmd.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    dashboard_cmd.add_argument("--port", type=int, default=8050)
    dashboard_cmd.add_argument("--destination", default=DEFAULT_DESTINATION)
    dashboard_cmd.add_argument("--dataset", default=DATASET_NAME, help="dataset (schema) of the raw tables")
    dashboard_cmd.set_defaults(run=_run_dashboard)

    add_write_commands(commands)  # attendees import, cart create, webhooks serve|load (issue 17)
    add_forget_command(commands, _forget_hooks())  # a person's data blanked everywhere (issue 31)

    list_cmd = commands.add_parser("resources", help="list the resources and how each stays up to date")
    list_cmd.set_defaults(run=_run_list)
    commands.add_parser("sandbox", help="run the local API simulator (see `platform-sync sandbox --help`)")
    return parser


def _run_sync(options: argparse.Namespace) -> int:
    if wants_accounts(options):
        return run_accounts_sync(options)
    request = sync_request(options)
    resources, source_options = request.resources, request.source_options
    progress = progress_for(options.log_format, interval=options.progress_interval, quiet=options.no_progress)
    interruption = Interruption(on_signal=lambda signum: None)
    kept = Checkpoints.of(request.checkpoint_requests)
    with stop_on_signals(interruption):
        check_destination_config(PIPELINE_NAME, options.destination, options.dataset)  # before any state
        pipeline = make_pipeline(options.destination, options.dataset, progress=progress)
        started_at = run_started_at()
        interruption.on_signal = lambda signum: _say_interrupted(pipeline, progress, started_at, signum, kept)
        with run_lock(pipeline, "write", command="platform-sync sync") as release_locks:
            interruption.release.append(release_locks)
            try:
                result = sync(pipeline, resources, options.full_refresh, source_options, kept)
            except OSError as exc:
                # dlt failed again while it handled a failure of a step (a full disk under its working
                # folder): said as that step's failure, in one line (`load_failure.failure_line`)
                step: Any = progress.phase or "sync"
                raise PipelineStepFailed(pipeline, step, "", exc) from exc
            finally:
                progress.close()
            outcomes = outcome_rows(result, resources, started_at)
            record_run(pipeline, outcomes, result.freshness, result.coverage, result.retired)
    status, failure = sync_exit_status(result, resources)
    if options.log_format == "json":
        print_json(
            {
                "event": "summary",
                "exit_status": status,
                "failure": failure,
                "rows": result.rows,
                "requests": result.requests,
                "seconds": result.seconds,
                "resources": outcomes,
                "freshness": result.freshness,
                "sales_coverage": result.coverage,
                "retired_ids": len(result.retired),
            }
        )
    else:
        print_summary(result, status=status)
    for line in failure_lines(result, failure):
        say(line, event="exit")
    return status


def _say_interrupted(
    pipeline: Any, progress: SyncProgress, started_at: dt.datetime, signum: int, kept: Checkpoints
) -> None:
    """The first Ctrl-C or SIGTERM: one line on stderr, and what the run had done (and kept) on stdout."""
    progress.halt()
    tables = tables_loaded_since(pipeline, started_at.timestamp())
    say(interrupted_line(tables), level="warning", event="interrupted")
    status = EXIT_STATUS.get(signal.Signals(signum), 128 + signum)
    if is_json():
        lines = progress.lines()
        print_json(
            {
                "event": "summary",
                "exit_status": status,
                "failure": "interrupted",
                "step": progress.phase,
                "tables_loaded": tables,
                "rows": {line.resource: line.rows for line in lines},
                "requests": {line.resource: line.requests for line in lines},
                "checkpoints_kept": len(kept.kept),
                "rows_kept": kept.rows,
            }
        )
    else:
        print_interrupted(progress.phase, progress.lines(), tables, status, kept=kept.kept_line())


def _run_auth(options: argparse.Namespace) -> int:
    from pipelines.commands.authorize import exchange_and_store

    grant = exchange_and_store(options.code, options.secrets_path, options.redirect_uri, options.account)
    where = f"[accounts.{options.account}] of " if options.account else ""
    print(f"token stored in {where}{options.secrets_path} with scopes: {' '.join(sorted(grant.scopes))}")
    return EXIT_OK


def _run_models(options: argparse.Namespace) -> int:
    """dbt build on the destination the sync loaded, then `dbt source freshness` on its raw tables.

    A destination without raw tables is refused (exit 2) instead of building empty marts; stale tables
    only warn. Exit 1 when the build or the freshness check could not run. With `--log-format json`
    dbt's own output is not streamed: one JSON object on stdout says what was built and how fresh.
    """
    from dataclasses import asdict

    from pipelines.dbt.freshness import source_freshness
    from pipelines.dbt.runner import (
        ModelsError,
        WarehouseHeld,
        WarehouseUnavailable,
        models_pipeline,
        require_raw_tables,
        run_models,
    )

    check_destination_name(options.destination)
    check_destination_config(PIPELINE_NAME, options.destination, options.dataset)  # before any state
    pipeline = models_pipeline(options.destination, options.dataset)  # an account's, with accounts
    with run_lock(pipeline, "read", command="platform-sync models"):
        try:
            tables = require_raw_tables(pipeline)
            result = run_models(pipeline, select=options.select, echo=not is_json())
        except ModelsError as exc:
            say(f"configuration error: {exc}", event="exit")
            return EXIT_CONFIG
        except WarehouseHeld as exc:
            say(str(exc), event="exit")
            return EXIT_CONFIG
        except WarehouseUnavailable as exc:
            say(f"error: {exc}", event="exit")
            return EXIT_FAILED
        freshness = source_freshness(pipeline, tables)
    failed = [node.unique_id for node in result.failed]
    if is_json():
        print_json(
            {
                "event": "models",
                "dataset": pipeline.dataset_name,
                **result.verdict(),
                "freshness": [asdict(table) for table in freshness.tables],
            }
        )
    else:
        print("\n".join(freshness.summary()))
    if not result.success:
        names = ", ".join(unique_id.split(".")[-1] for unique_id in failed) or "see dbt's output"
        say(f"dbt build failed: {names}", event="exit")
    return EXIT_OK if result.success and freshness.ran else EXIT_FAILED


def _forget_hooks() -> WarehouseHooks:
    """What forget asks of the dbt room (`pipelines/commands/forget.py: WarehouseHooks`), imported when
    called: the command line starts without the dbt runner."""

    def raw_tables(pipeline: Any) -> list[str] | None:
        from pipelines.dbt.runner import WarehouseHeld, WarehouseUnavailable, raw_tables

        try:
            return raw_tables(pipeline)
        except (WarehouseHeld, WarehouseUnavailable):
            return None

    def describe(pipeline: Any) -> str:
        from pipelines.dbt.runner import describe_destination

        return describe_destination(pipeline)

    def rebuild_marts(destination: str, dataset: str) -> bool:
        from pipelines.dbt.runner import models_pipeline, run_models

        return run_models(models_pipeline(destination, dataset), "run", echo=False).success

    return WarehouseHooks(raw_tables, describe, rebuild_marts)


def _run_demo(options: argparse.Namespace) -> int:
    from pipelines.cli.demo import run_demo

    return run_demo(scale=options.scale, seed=options.seed)


def _run_dashboard(options: argparse.Namespace) -> int:
    require_extra("dashboard", "platform-sync dashboard")
    from dashboard import PortInUse, serve
    from pipelines.accounts import configured_accounts

    schemas = {account.name: account.dataset_name for account in configured_accounts()}
    try:
        pipeline = make_pipeline(options.destination, options.dataset)
        serve(pipeline, host=options.host, port=options.port, account_schemas=schemas)
    except PortInUse as exc:
        say(f"not started: {exc}", event="exit")
        return EXIT_CONFIG
    return EXIT_OK


def _run_list(options: argparse.Namespace) -> int:
    for stream in STREAMS.values():
        key = ", ".join(stream.primary_key)
        print(f"{stream.name:22} {stream.write_disposition:8} key ({key}): {stream.description}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
