"""`platform-sync demo` / `make demo`: the whole job on the embedded default, end to end.

Starts the sandbox (a local simulator of the API), gets a token through the real token exchange with
the sandbox's demo application, syncs everything into DuckDB, runs the dbt models, prints a summary and
headline figures, and stops the sandbox. The pipeline is configured exactly as for the real API, only
with the sandbox's addresses, ids from its catalog, and its time scale for the rate limits.
"""

from __future__ import annotations

import shutil
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from pipelines.cli.interrupt import (
    EXIT_STATUS,
    Interruption,
    interrupted_line,
    stop_on_signals,
    tables_loaded_since,
)
from pipelines.cli.summary import print_interrupted, print_summary
from pipelines.sync.platform_pipeline import make_pipeline, sync
from pipelines.sync.progress import SyncProgress, progress_for
from pipelines.sync.runs import outcome_rows, record_run, run_started_at
from sources.platform_client.auth import exchange_code

DEMO_CLIENT_ID = "sandbox-demo"
DEMO_CLIENT_SECRET = "sandbox-demo-secret"  # noqa: S105 - the sandbox's public demo application
DEMO_REDIRECT_URI = "http://localhost/callback"
# A world of 3,000 sales and rate-limit windows 60 times shorter (30/minute becomes 30/second) keep
# the demo to a few minutes while every rate limit still binds.
DEMO_SCALE = 3000
DEMO_TIME_SCALE = 60.0
# About one record in a hundred departs from the spec as real APIs' records do (a null, a new enum
# value, a number sent as text, ...), so the summary shows what the sync does with them.
DEMO_DRIFT = 0.01


def run_demo(scale: int | None = None, seed: int = 1) -> int:
    from sandbox.running import running_sandbox_process

    print(
        f"starting the sandbox (seed {seed}, {scale or DEMO_SCALE:,} sales, time scale {DEMO_TIME_SCALE:g})"
    )
    with running_sandbox_process(
        seed=seed, scale=scale or DEMO_SCALE, time_scale=DEMO_TIME_SCALE, drift=DEMO_DRIFT
    ) as sandbox:
        code = (
            httpx.post(
                f"{sandbox.auth_url}/sandbox/authorize", json={"client_id": DEMO_CLIENT_ID}, timeout=30
            )
            .raise_for_status()
            .json()["code"]
        )
        grant = exchange_code(sandbox.auth_url, DEMO_CLIENT_ID, DEMO_CLIENT_SECRET, code, DEMO_REDIRECT_URI)
        print(f"token exchanged at {sandbox.auth_url}; granted scopes: {len(grant.scopes)}")
        options = _source_options(
            sandbox.base_url, grant.access_token, sorted(grant.scopes), sandbox.catalog()
        )
        # Ctrl-C or SIGTERM: as for `platform-sync sync` (pipelines/cli/interrupt.py), and the sandbox stops.
        # Installed before the pipeline is made: dlt reads `runtime.intercept_signals` then.
        interruption = Interruption(
            on_signal=lambda signum: None, release=[sandbox.process.terminate] if sandbox.process else []
        )
        with stop_on_signals(interruption):
            progress = progress_for("text", interval=5.0)  # the display of `platform-sync sync`
            pipeline = make_pipeline(progress=progress)
            print("syncing into DuckDB (platform_sync.duckdb, dataset platform_raw) ...", flush=True)
            started = time.monotonic()
            run_started = run_started_at()
            since = run_started.timestamp()
            interruption.on_signal = lambda signum: _say_interrupted(pipeline, progress, since, signum)
            try:
                result = sync(pipeline, source_options=options)
            finally:
                progress.close()
        # as `platform-sync sync` does: the dashboard's Data health shows the run and each table's freshness
        outcomes = outcome_rows(result, None, run_started)
        record_run(pipeline, outcomes, result.freshness, result.coverage, result.retired)
        print_summary(result, status=1 if result.report.failed else None)
        print(f"sync took {time.monotonic() - started:.1f}s")
    if result.report.failed:
        return 1
    return _run_models_and_headlines(pipeline)


def _say_interrupted(pipeline: Any, progress: SyncProgress, since: float, signum: int) -> None:
    """The first Ctrl-C or SIGTERM during the demo's sync: the line and the summary `sync` prints."""
    progress.halt()
    tables = tables_loaded_since(pipeline, since)
    print(interrupted_line(tables), file=sys.stderr)
    status = EXIT_STATUS.get(signal.Signals(signum), 128 + signum)
    print_interrupted(progress.phase, progress.lines(), tables, status)


def _source_options(base_url: str, token: str, scopes: list[str], catalog: dict[str, Any]) -> dict[str, Any]:
    from sandbox.options import catalog_source_options

    return {
        "base_url": base_url,
        "access_token": token,
        "granted_scopes": scopes,
        **catalog_source_options(catalog),
        "rate_limit_time_scale": DEMO_TIME_SCALE,
    }


def _explain_warnings(warned: list[Any]) -> None:
    """dbt's warnings are expected here: say why, where they are printed."""
    if not warned:
        return
    print(
        f"the {len(warned)} warnings are dbt tests that flag what the API sent outside its spec: the demo's "
        f"world departs from it in {DEMO_DRIFT:.0%} of its records (a null, a new enum value, a number as "
        "text), which load as sent. They warn, not fail, and the table api_departures lists each one:"
    )
    for node in warned:
        failures = f" ({node.failures} rows)" if node.failures else ""
        print(f"  {node.unique_id.split('.')[2].split('___')[0]}{failures}")  # without dbt's argument suffix


def _run_models_and_headlines(pipeline: Any) -> int:
    from pipelines.dbt.runner import headline_figures, run_models

    print("\nrunning the dbt models (dbt build: staging, intermediate and marts, with their tests) ...")
    started = time.monotonic()
    models = run_models(pipeline, echo=False)
    counts = Counter(node.status for node in models.nodes)
    print(
        f"dbt build took {time.monotonic() - started:.1f}s: "
        + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    )
    _explain_warnings([node for node in models.nodes if node.status == "warn"])
    if not models.success:
        print(models.output[-4000:], file=sys.stderr)
        for node in models.failed:
            print(f"FAILED {node.unique_id}: {node.message}", file=sys.stderr)
        return 1
    for title, rows in headline_figures(pipeline):
        print(f"\n{title}")
        for row in rows:
            print("  " + "  ".join(str(value) for value in row))
    print(
        f"\nSee it in the browser: {this_command()} dashboard, then open http://127.0.0.1:8050/ "
        "(Ctrl-C stops it)"
    )
    return 0


def this_command(argv0: str | None = None, cwd: Path | None = None) -> str:
    """How the user runs the command that is running: `platform-sync` when that is the one on PATH, else
    its path (relative to the folder it runs from when inside it: `.venv/bin/platform-sync` for `make
    demo`). The demo's last line said `.venv/bin/platform-sync` to a user who had installed it with pip
    into a virtual environment elsewhere (issue 51)."""
    script = Path(argv0 if argv0 is not None else sys.argv[0])
    if script.name != "platform-sync":  # `python -m pipelines.cli`, a test harness
        return "platform-sync"
    on_path = shutil.which("platform-sync")
    if on_path is not None and Path(on_path).resolve() == script.resolve():
        return "platform-sync"
    try:
        return str(script.resolve().relative_to((cwd or Path.cwd()).resolve()))
    except ValueError:
        return str(script.resolve())
