"""`platform-sync`: sync the platform's data, exchange a token, run the models, start the sandbox.

Exit status: 0 all done; 1 failed (also when every resource failed or the token was rejected);
2 bad usage or configuration, or another run holds the lock (nothing was requested);
3 partial: some resources were skipped (a missing scope) or failed, the others were loaded.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from dlt.common.configuration.exceptions import (
    ConfigFieldMissingException,
    ConfigValueCannotBeCoercedException,
    ValueNotSecretException,
)
from dlt.pipeline.exceptions import PipelineStepFailed

from pipelines.extras import require_extra
from pipelines.lock import LockHeld, run_lock
from pipelines.output import configure_logging, print_json, say
from pipelines.platform_pipeline import (
    DATASET_NAME,
    DEFAULT_DESTINATION,
    PIPELINE_NAME,
    SyncResult,
    check_resource_names,
    make_pipeline,
    sync,
)
from pipelines.preflight import check_destination_config, check_destination_name
from pipelines.process_settings import apply_process_settings
from pipelines.progress import progress_for
from pipelines.runs import outcome_rows, record_run, run_started_at
from pipelines.summary import print_summary
from pipelines.write_commands import add_write_commands
from sources.platform.config_check import explain as explain_config_error
from sources.platform.resources import STREAMS
from sources.platform_client.errors import REAUTHORIZE_HINT, ConfigurationError, PlatformError

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_PARTIAL = 0, 1, 2, 3


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "sandbox":
        from sandbox.cli import main as sandbox_main

        return sandbox_main(args[1:])
    parser = _parser()
    options = parser.parse_args(args)
    # dlt's Airflow secrets provider imports Airflow wherever it is installed, and Airflow then replaces
    # the process's logging (our messages and --log-format json would vanish): off unless asked for.
    os.environ.setdefault("PROVIDERS__ENABLE_AIRFLOW_SECRETS", "false")
    configure_logging(options.verbose, options.log_format)
    apply_process_settings()  # allocator and fork settings: this process is ours (never on import)
    try:
        return int(options.run(options))
    except (ConfigurationError, ConfigFieldMissingException) as exc:
        say(f"configuration error: {_config_message(exc)}", event="exit")
        return EXIT_CONFIG
    except (ConfigValueCannotBeCoercedException, ValueNotSecretException) as exc:  # while dlt resolves
        say(f"configuration error: {explain_config_error(exc)}", event="exit")
        return EXIT_CONFIG
    except LockHeld as exc:
        say(f"not started: {exc}", event="exit")
        return EXIT_CONFIG
    except PipelineStepFailed as exc:
        say(f"sync failed in the {exc.step} step: {exc.exception}", event="exit")
        return EXIT_FAILED
    except PlatformError as exc:
        say(f"error: {exc}", event="exit")
        return EXIT_FAILED


def _config_message(exc: Exception) -> str:
    if isinstance(exc, ConfigFieldMissingException):
        fields = ", ".join(exc.fields)
        return (
            f"missing {fields}. Set them in .dlt/config.toml / .dlt/secrets.toml under [sources.platform] "
            "or as environment variables such as SOURCES__PLATFORM__ACCESS_TOKEN "
            "(`platform-sync auth --code CODE` stores a token)."
        )
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

    list_cmd = commands.add_parser("resources", help="list the resources and how each stays up to date")
    list_cmd.set_defaults(run=_run_list)
    commands.add_parser("sandbox", help="run the local API simulator (see `platform-sync sandbox --help`)")
    return parser


def _run_sync(options: argparse.Namespace) -> int:
    resources = [r.strip() for r in options.resources.split(",") if r.strip()] if options.resources else None
    source_options: dict[str, object] = {"start_date": options.start_date} if options.start_date else {}
    if options.rescan:
        source_options["rescan"] = True
    if resources:
        check_resource_names(resources)
    check_destination_name(options.destination)
    progress = (
        None if options.no_progress else progress_for(options.log_format, interval=options.progress_interval)
    )
    check_destination_config(PIPELINE_NAME, options.destination, options.dataset)  # before any state
    pipeline = make_pipeline(options.destination, options.dataset, progress=progress or False)
    started_at = run_started_at()
    with run_lock(pipeline, "write", command="platform-sync sync"):
        try:
            result = sync(pipeline, resources, options.full_refresh, source_options)
        finally:
            if progress:
                progress.close()
        outcomes = outcome_rows(result, resources, started_at)
        record_run(pipeline, outcomes, result.freshness)
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
            }
        )
    else:
        print_summary(result)
    if failure:
        say(f"FAILED: {failure}", event="exit")
    return status


def sync_exit_status(result: SyncResult, resources: Sequence[str] | None) -> tuple[int, str | None]:
    """1 when the token was rejected or nothing that was due got loaded, 3 when some of it did, else 0;
    with what to tell the user when the run failed.

    A rejected token fails every resource that had not finished: a scheduler must see a failure, not a
    warning, and the user must authorize again."""
    report = result.report
    if any(REAUTHORIZE_HINT in reason for reason in report.failed.values()):
        return EXIT_FAILED, (
            "the access token was rejected (expired or revoked): authorize again with "
            "`platform-sync auth --code CODE`, or set SOURCES__PLATFORM__ACCESS_TOKEN."
        )
    due = [name for name in (resources or STREAMS) if name not in report.not_due]
    if due and all(name in report.failed or name in report.skipped for name in due):
        return EXIT_FAILED, "no resource was loaded (see above)."
    return (EXIT_PARTIAL if result.is_partial else EXIT_OK), None


def _run_auth(options: argparse.Namespace) -> int:
    from pipelines.authorize import exchange_and_store

    grant = exchange_and_store(options.code, options.secrets_path, options.redirect_uri)
    print(f"token stored in {options.secrets_path} with scopes: {' '.join(sorted(grant.scopes))}")
    return EXIT_OK


def _run_models(options: argparse.Namespace) -> int:
    """dbt build on the destination the sync loaded, then `dbt source freshness` on its raw tables.

    A destination without raw tables is refused (exit 2) instead of building empty marts; stale tables
    only warn. Exit 1 when the build or the freshness check could not run. With `--log-format json`
    dbt's own output is not streamed: one JSON object on stdout says what was built and how fresh.
    """
    from dataclasses import asdict

    from pipelines.freshness import source_freshness
    from pipelines.models import ModelsError, WarehouseUnavailable, require_raw_tables, run_models
    from pipelines.output import is_json

    check_destination_name(options.destination)
    check_destination_config(PIPELINE_NAME, options.destination, options.dataset)  # before any state
    pipeline = make_pipeline(options.destination, options.dataset)
    with run_lock(pipeline, "read", command="platform-sync models"):
        try:
            tables = require_raw_tables(pipeline)
            result = run_models(pipeline, select=options.select, echo=not is_json())
        except ModelsError as exc:
            say(f"configuration error: {exc}", event="exit")
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
                "build": "success" if result.success else "failed",
                "failed": failed,
                "freshness": [asdict(table) for table in freshness.tables],
            }
        )
    else:
        print("\n".join(freshness.summary()))
    if not result.success:
        names = ", ".join(unique_id.split(".")[-1] for unique_id in failed) or "see dbt's output"
        say(f"dbt build failed: {names}", event="exit")
    return EXIT_OK if result.success and freshness.ran else EXIT_FAILED


def _run_demo(options: argparse.Namespace) -> int:
    from pipelines.demo import run_demo

    return run_demo(scale=options.scale, seed=options.seed)


def _run_dashboard(options: argparse.Namespace) -> int:
    require_extra("dashboard", "platform-sync dashboard")
    from dashboard import serve

    serve(make_pipeline(options.destination, options.dataset), host=options.host, port=options.port)
    return EXIT_OK


def _run_list(options: argparse.Namespace) -> int:
    for stream in STREAMS.values():
        key = ", ".join(stream.primary_key)
        print(f"{stream.name:22} {stream.write_disposition:8} key ({key}): {stream.description}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
