"""Many accounts at a hundred (issue 50), on the engines a team runs them with: the command line's
`sync --all-accounts` and Dagster's partitions, each run by Dagster's multiprocess executor.

    python -m bench.accounts_scale [--accounts 100] [--scale 100] [--time-scale 20] [--latency-ms 150]
                                   [--at-once 10] [--engines cli,dagster] [--postgres URL] [--out DIR]

Each account is a sandbox world of its own (seeds 1..N, rate limits on, every request answered
`--latency-ms` late), configured as `[accounts.aNNN]` in one project's `.dlt/config.toml` with its token in
the environment, as docs/accounts.md says. For each engine: the first sync of every account, then an hour
of the worlds' time later the hourly run, each followed by one `models` build over every account.

- `cli`: `platform-sync sync --all-accounts --accounts-at-once K` into one DuckDB file (one process, the
  accounts in its threads), then `platform-sync models`.
- `dagster`: `dagster asset materialize --select group:platform_raw --partition aNNN`, K runs at once (a
  run is a process, its step another, as the multiprocess executor runs it), into the PostgreSQL database
  of `--postgres` (several runs at once need a server destination), then `--select group:platform_models`.

Figures per batch: wall time, runs an hour one worker serves at that pace, peak resident memory (the
process and its children, sampled), requests and 429s counted by the sandboxes, and the rate bound at the
real API's pace. The worlds' clock runs `--time-scale` times faster than the real one: the waits the
limits impose here are that much shorter than on the real API (`served_bound` gives the real wait).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import tomlkit

from bench import harness
from bench.progress import log
from bench.remote import served_bound
from bench.settings import DEFAULT_TIME_SCALE, WORK

HOUR = 3600.0
ROOT = Path(__file__).resolve().parents[1]
DEFINITIONS = ROOT / "schedules" / "dagster" / "definitions.py"


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.accounts_scale", description=__doc__)
    parser.add_argument("--accounts", type=int, default=100)
    parser.add_argument("--scale", type=int, default=100, help="world scale (sales) of each account")
    parser.add_argument("--time-scale", type=float, default=DEFAULT_TIME_SCALE)
    parser.add_argument("--latency-ms", type=float, default=150.0)
    parser.add_argument("--at-once", type=int, default=10, help="accounts synced at once")
    parser.add_argument("--engines", default="cli,dagster")
    parser.add_argument(
        "--dagster-first-by-cli",
        action="store_true",
        help="the first sync of dagster's warehouse by `platform-sync sync --all-accounts --destination "
        "postgres` (same pipelines, datasets and working folders), the hourly run by Dagster",
    )
    parser.add_argument("--postgres", help="credentials of an empty PostgreSQL database (dagster)")
    parser.add_argument("--out", type=Path, help="write accounts_scale.json and .md here")
    parser.add_argument("--work", type=Path)
    options = parser.parse_args(argv)
    options.engines = [e for e in str(options.engines).split(",") if e]
    if "dagster" in options.engines and not options.postgres:
        parser.error("--engines dagster needs --postgres (several runs at once need a server destination)")
    return options


def account_name(index: int) -> str:
    return f"a{index + 1:03d}"


def write_project(folder: Path, sandboxes: Sequence[Any], time_scale: float) -> dict[str, str]:
    """The project's `.dlt/config.toml` (an [accounts.aNNN] table per world) and the environment its
    commands run in (each account's token, dlt's data folder inside the project)."""
    from bench.listings import source_options

    (folder / ".dlt").mkdir(parents=True, exist_ok=True)
    document = tomlkit.document()
    accounts: dict[str, Any] = {}
    env = {
        k: v
        for k, v in harness.child_env().items()
        if not k.startswith(("SOURCES__", "DESTINATION__", "ACCOUNTS__"))
    }
    for index, sandbox in enumerate(sandboxes):
        options = source_options(sandbox.base_url, sandbox.token(), sandbox.catalog())
        token = options.pop("access_token")
        accounts[account_name(index)] = {**options, "rate_limit_time_scale": time_scale}
        env[f"ACCOUNTS__{account_name(index).upper()}__ACCESS_TOKEN"] = token
    document["accounts"] = accounts
    (folder / ".dlt" / "config.toml").write_text(tomlkit.dumps(document))
    env["DLT_DATA_DIR"] = str(folder / ".dlt" / "data")
    env["DESTINATION__DUCKDB__CREDENTIALS"] = str(folder / "warehouse.duckdb")
    env["DBT_TARGET_PATH"] = str(folder / "target")
    return env


def measured(command: list[str], env: Mapping[str, str], cwd: Path, log_path: Path) -> dict[str, Any]:
    """Run `command`; its exit status, wall time and sampled peak memory (with its children)."""
    started = time.perf_counter()
    with log_path.open("w") as out:
        process = subprocess.Popen(command, env=dict(env), cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        sampler = harness._MemorySampler(process.pid, interval=0.2)
        sampler.start()
        try:
            returncode = process.wait(7200)
        finally:
            sampler.stop()
    return {
        "returncode": returncode,
        "wall_seconds": time.perf_counter() - started,
        "peak_rss_mb": sampler.peak / 2**20,
        "log": str(log_path),
    }


def _requests(sandboxes: Sequence[Any], time_scale: float) -> dict[str, Any]:
    """What the sandboxes served since their last reset: per account requests, 429s, real rate bound."""
    per_account = []
    for sandbox in sandboxes:
        stats = sandbox.stats()
        counts = {op: dict(c) for op, c in stats.get("operations", {}).items() if op != "token_exchange"}
        bound = served_bound(stats, 1.0) if counts else None
        per_account.append(
            {
                "requests": sum(sum(c.values()) for c in counts.values()),
                "rate_limited": sum(c.get("429", 0) for c in counts.values()),
                "real_rate_bound_seconds": bound["seconds"] if bound else 0.0,
            }
        )
    requests = [a["requests"] for a in per_account]
    return {
        "requests_total": sum(requests),
        "requests_median": statistics.median(requests),
        "requests_max": max(requests),
        "rate_limited_total": sum(a["rate_limited"] for a in per_account),
        "real_rate_bound_max_seconds": max(a["real_rate_bound_seconds"] for a in per_account),
        "real_rate_bound_median_seconds": statistics.median(
            a["real_rate_bound_seconds"] for a in per_account
        ),
    }


def cli_batch(
    sandboxes: Sequence[Any], env: Mapping[str, str], folder: Path, label: str, options: argparse.Namespace
) -> dict[str, Any]:
    """`platform-sync sync --all-accounts` then `platform-sync models`, measured (into PostgreSQL when
    the environment names it, as for Dagster's warehouse)."""
    for sandbox in sandboxes:
        sandbox.reset_stats()
    cli = [sys.executable, "-m", "pipelines.cli"]
    where = ["--destination", env["PLATFORM_SYNC_DESTINATION"]] if "PLATFORM_SYNC_DESTINATION" in env else []
    sync = measured(
        [*cli, "sync", "--all-accounts", "--accounts-at-once", str(options.at_once), "--no-progress", *where],
        env,
        folder,
        folder / f"{label}-sync.log",
    )
    served = _requests(sandboxes, options.time_scale)
    models = measured([*cli, "models", *where], env, folder, folder / f"{label}-models.log")
    database = folder / "warehouse.duckdb"
    return {
        "label": label,
        "sync": sync,
        "models": models,
        **served,
        "runs_per_hour_per_worker": len(sandboxes) * HOUR / sync["wall_seconds"],
        "database_mb": database.stat().st_size / 2**20 if database.exists() else None,
    }


def dagster_batch(
    sandboxes: Sequence[Any], env: Mapping[str, str], folder: Path, label: str, options: argparse.Namespace
) -> dict[str, Any]:
    """Every account's partition by `dagster asset materialize`, `--at-once` at a time, then the models."""
    for sandbox in sandboxes:
        sandbox.reset_stats()
    dagster = str(Path(sys.executable).with_name("dagster"))
    materialize = [dagster, "asset", "materialize", "-f", str(DEFINITIONS), "--select"]

    def one(index: int) -> dict[str, Any]:
        name = account_name(index)
        command = [*materialize, "group:platform_raw", "--partition", name]
        return measured(command, env, folder, folder / f"{label}-{name}.log")

    started = time.perf_counter()
    with ThreadPoolExecutor(options.at_once) as pool:
        runs = list(pool.map(one, range(len(sandboxes))))
    wall = time.perf_counter() - started
    served = _requests(sandboxes, options.time_scale)
    models = measured([*materialize, "group:platform_models"], env, folder, folder / f"{label}-models.log")
    return {
        "label": label,
        "sync": {
            "returncode": max(run["returncode"] for run in runs),
            "failed_runs": sum(1 for run in runs if run["returncode"] != 0),
            "wall_seconds": wall,
            "run_wall_median_seconds": statistics.median(run["wall_seconds"] for run in runs),
            "run_wall_max_seconds": max(run["wall_seconds"] for run in runs),
            "peak_rss_mb": max(run["peak_rss_mb"] for run in runs),
            "peak_rss_median_mb": statistics.median(run["peak_rss_mb"] for run in runs),
        },
        "models": models,
        **served,
        "runs_per_hour_per_worker": len(sandboxes) * HOUR / wall,
    }


def run_engine(
    engine: str,
    sandboxes: Sequence[Any],
    options: argparse.Namespace,
    work: Path,
    entry: dict[str, Any],
    save: Callable[[], None],
) -> None:
    """The engine's batches into `entry["batches"]`, each kept (`save`) as soon as it is measured."""
    folder = work / engine
    folder.mkdir(parents=True, exist_ok=True)
    env = write_project(folder, sandboxes, options.time_scale)
    batch = cli_batch
    if engine == "dagster":
        (folder / ".dagster").mkdir(exist_ok=True)
        env.update(
            {
                "DAGSTER_HOME": str(folder / ".dagster"),
                "PLATFORM_SYNC_DESTINATION": "postgres",
                "DESTINATION__POSTGRES__CREDENTIALS": options.postgres,
                "LOAD__WORKERS": "2",  # runs at once x workers within the server's connections
            }
        )
        migrated = subprocess.run(
            [str(Path(sys.executable).with_name("dagster")), "instance", "migrate"],
            env=env,
            cwd=folder,
            capture_output=True,
            text=True,
        )
        if migrated.returncode != 0:
            raise harness.RunFailed(migrated.stdout[-3000:] + migrated.stderr[-3000:])
        batch = dagster_batch
    for label in ("first", "hourly"):
        if label == "hourly":
            for sandbox in sandboxes:
                sandbox.advance(HOUR)
        log(f"{engine}: {label} run of {len(sandboxes)} accounts, {options.at_once} at once")
        run_by = batch
        if engine == "dagster" and label == "first" and options.dagster_first_by_cli:
            run_by, label = cli_batch, "first (platform-sync sync --all-accounts, postgres)"
        figures = run_by(sandboxes, env, folder, label.split()[0], options)
        figures["label"] = label
        log(
            f"  {engine} {label}: sync {figures['sync']['wall_seconds']:.0f} s (exit "
            f"{figures['sync']['returncode']}), peak {figures['sync']['peak_rss_mb']:.0f} MB, "
            f"{figures['requests_total']} requests ({figures['rate_limited_total']} 429s), models "
            f"{figures['models']['wall_seconds']:.0f} s (exit {figures['models']['returncode']})"
        )
        figures["load_average_after"] = harness.load_average()  # the machine may be shared
        entry["batches"].append(figures)
        save()


def start_sandboxes(stack: ExitStack, options: argparse.Namespace) -> list[Any]:
    """The N worlds, started a few at a time (each is a process that builds its world first)."""
    from sandbox.running import running_sandbox_process

    managers = [
        running_sandbox_process(
            seed=seed,
            scale=options.scale,
            time_scale=options.time_scale,
            rate_limits=True,
            faults=f"latency_ms={options.latency_ms:g}",
        )
        for seed in range(1, options.accounts + 1)
    ]

    def enter(manager: Any) -> Any:
        return manager.__enter__()

    with ThreadPoolExecutor(4) as pool:
        handles = list(pool.map(enter, managers))
    for manager in managers:
        stack.push(manager.__exit__)
    return handles


def markdown(figures: Mapping[str, Any]) -> str:
    lines = [
        "",
        f"## {figures['accounts']} accounts (issue 50): world scale {figures['world_scale']} each, "
        f"time scale {figures['time_scale']:g}, {figures['latency_ms']:g} ms a request, "
        f"{figures['at_once']} at once",
        "",
        f"Load average at start {figures['load_average_start']}, at end {figures.get('load_average_end')}; "
        f"{figures['machine'].get('cores', '?')} CPUs. Peak memory: the sync's process and its children "
        "(cli: the one process; dagster: the largest run, with the median run's in brackets).",
        "",
        "| engine | run | sync wall | runs/hour/worker | exit | peak memory | requests (median per account) "
        "| 429s | rate bound at real pace (max) | models wall |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in figures["engines"]:
        for batch in entry["batches"]:
            sync = batch["sync"]
            memory = f"{sync['peak_rss_mb']:.0f} MB"
            if "peak_rss_median_mb" in sync:
                memory += f" ({sync['peak_rss_median_mb']:.0f} MB)"
            lines.append(
                f"| {entry['engine']} | {batch['label']} | {sync['wall_seconds']:.0f} s | "
                f"{batch['runs_per_hour_per_worker']:.0f} | {sync['returncode']} | {memory} | "
                f"{batch['requests_total']} ({batch['requests_median']:.0f}) | "
                f"{batch['rate_limited_total']} | "
                f"{batch['real_rate_bound_max_seconds']:.0f} s | {batch['models']['wall_seconds']:.0f} s |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    options = parse_args(argv)
    work = options.work or WORK / f"accounts-scale-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}"
    figures: dict[str, Any] = {
        "accounts": options.accounts,
        "world_scale": options.scale,
        "time_scale": options.time_scale,
        "latency_ms": options.latency_ms,
        "at_once": options.at_once,
        "load_average_start": harness.load_average(),
        "machine": harness.machine(),
        "engines": [],
    }
    with ExitStack() as stack:
        log(f"starting {options.accounts} sandbox worlds")
        sandboxes = start_sandboxes(stack, options)

        def save() -> None:  # each batch's figures kept as soon as they exist
            if options.out:
                options.out.mkdir(parents=True, exist_ok=True)
                (options.out / "accounts_scale.json").write_text(json.dumps(figures, indent=2, default=str))
                (options.out / "accounts_scale.md").write_text(markdown(figures))

        for engine in options.engines:
            entry: dict[str, Any] = {"engine": engine, "batches": []}
            figures["engines"].append(entry)
            run_engine(engine, sandboxes, options, work, entry, save)
    figures["load_average_end"] = harness.load_average()
    figures["generated_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    if options.out:
        (options.out / "accounts_scale.json").write_text(json.dumps(figures, indent=2, default=str) + "\n")
        (options.out / "accounts_scale.md").write_text(markdown(figures))
    print(markdown(figures))
    failed = [b for e in figures["engines"] for b in e["batches"] if b["sync"]["returncode"] != 0]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
