"""Durable progress (issue 48), measured at the real pace's proportions: a first sync against the sandbox
at `--time-scale` 60 (30 sale details a second) of a world of `--scale` 8,400, whose sync finds about 5,100
sales (the API lists no sales: a world of N finds about 0.6 N), killed at `--kills` random moments
(SIGKILL and SIGTERM in turns), each rerun going on from the last checkpoint, the last one left to finish.
Then a fresh sync of the same world (a sandbox without rate limits, no sale-details budget) and the two
warehouses compared. The fans (community snapshots, appended per read) wait 6 hours between reads, as
the test of the same kills does: a rerun that read them again would append a second snapshot, which a
fresh sync has not.

For each kill: when, which signal, the checkpoints that had landed, the sales the warehouse held before
the run and after the kill, the run's sale details, those not kept (the work lost: the pass that ran),
and the seconds since the last checkpoint landed.

    .venv/bin/python -m bench.checkpoints --out bench/results/checkpoints.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import duckdb

from bench.sync_env import sync_environment

PLATFORM_SYNC = str(Path(sys.executable).with_name("platform-sync"))


UNSETTLED = "status not in ('paid', 'refunded', 'canceled', 'expired', 'duplicated')"


def sales_in(database: Path, where: str = "true") -> set[str]:
    """The sale ids in the warehouse (`where`: of those)."""
    if not database.exists():
        return set()
    with duckdb.connect(str(database), read_only=True) as connection:
        try:
            rows = connection.execute(f"select id from platform_raw.sales where {where}").fetchall()
        except duckdb.CatalogException:
            return set()
    return {str(row[0]) for row in rows}


RUN_STAMPS = ("snapshot_at", "verified_at")  # the times that stamp a run, which differ by run


def warehouse_tables(database: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every data table's rows, without dlt's columns and the run's stamps, in order."""
    tables: dict[str, list[tuple[Any, ...]]] = {}
    with duckdb.connect(str(database), read_only=True) as connection:
        names = connection.execute(
            "select table_name from information_schema.tables where table_schema = 'platform_raw' "
            "and table_name not like '\\_%' escape '\\'"
        ).fetchall()
        for (table,) in names:
            columns = connection.execute(
                "select column_name from information_schema.columns where table_schema = 'platform_raw' "
                "and table_name = ? order by column_name",
                [table],
            ).fetchall()
            kept = [f'"{c}"' for (c,) in columns if not c.startswith("_dlt_") and c not in RUN_STAMPS]
            select = f"select {', '.join(kept)} from platform_raw.{table} order by all"
            tables[table] = connection.execute(select).fetchall()
    return tables


def loaded(folder: Path) -> list[float]:
    """The modification times of the sync's loaded packages (`load/loaded` of its working folder)."""
    times = []
    for root, dirs, _ in os.walk(folder):
        if root.endswith(os.path.join("platform_sync", "load", "loaded")):
            for name in dirs:
                try:
                    times.append(os.stat(os.path.join(root, name)).st_mtime)
                except FileNotFoundError:
                    continue
            dirs.clear()
    return sorted(times)


def environment(folder: Path, options: dict[str, Any], checkpoint: int) -> dict[str, str]:
    return sync_environment(folder, options, SYNC__CHECKPOINT_REQUESTS=str(checkpoint))


def sale_details(handle: Any) -> int:
    return int(sum(handle.stats()["operations"].get("sale_details", {}).values()))


def killed_run(handle: Any, folder: Path, env: dict[str, str], after: float, signum: int) -> dict[str, Any]:
    before = sales_in(folder / "warehouse.duckdb")
    unsettled = sales_in(folder / "warehouse.duckdb", UNSETTLED)  # every run reads them again
    landed_before = len(loaded(folder))
    handle.reset_stats()
    started = time.monotonic()
    run = subprocess.Popen(
        [PLATFORM_SYNC, "sync", "--no-progress"], env=env, cwd=folder, stdout=subprocess.PIPE, text=True
    )
    while time.monotonic() - started < after and run.poll() is None:
        time.sleep(0.05)
    finished = run.poll() is not None
    landed = loaded(folder)
    if not finished:
        run.send_signal(signum)
    out, _ = run.communicate(timeout=120)
    killed_at = time.time()
    after_kill = sales_in(folder / "warehouse.duckdb")
    requested = sale_details(handle)
    kept_line = next((line for line in out.splitlines() if line.startswith("checkpoints kept")), None)
    return {
        "signal": signal.Signals(signum).name,
        "after_seconds": round(after, 1),
        "finished_before_the_kill": finished,
        "exit_status": run.returncode,
        "checkpoints_landed": len(landed) - landed_before,
        "sales_before": len(before),
        "sales_after": len(after_kill),
        "sale_details": requested,
        "unsettled_before": len(unsettled),
        "sale_details_not_kept": requested - len(after_kill - before),
        "seconds_since_last_checkpoint": round(killed_at - landed[-1], 1) if landed else None,
        "summary_line": kept_line,
    }


def main(argv: list[str] | None = None) -> int:
    from sandbox.options import catalog_source_options
    from sandbox.running import running_sandbox_process
    from sources.platform.resources import FULL_SCANS, STREAMS

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=8400)
    parser.add_argument("--time-scale", type=float, default=60.0)
    parser.add_argument("--checkpoint", type=int, default=150)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument("--out", type=Path)
    options = parser.parse_args(argv)
    moments = random.Random(options.seed)
    work = Path(tempfile.mkdtemp(prefix="checkpoints-"))
    results: dict[str, Any] = {"scale": options.scale, "time_scale": options.time_scale}
    results["checkpoint"] = options.checkpoint
    with running_sandbox_process(
        seed=options.seed, scale=options.scale, time_scale=options.time_scale
    ) as api:
        source = {
            "base_url": api.base_url,
            "access_token": api.token(),
            "start_date": "2020-01-01",
            **catalog_source_options(api.catalog()),
            "rate_limit_time_scale": options.time_scale,
            # the re-verification cycle re-fetches known sales in every run by design: off, so that a
            # sale requested again is work lost
            "sales_reverify_share": 0,
            "sales_recheck_hours": 1e6,
            "rescan_hours_by_resource": {name: 6 for name in FULL_SCANS if STREAMS[name].fans_out},
            # the whole backlog in the chain's runs: the budget is not what is measured
            "sales_max_requests": 1_000_000,
        }
        folder = work / "killed"
        folder.mkdir()
        env = environment(folder, source, options.checkpoint)
        kills = []
        started = time.monotonic()
        for kill in range(options.kills):
            signum = signal.SIGKILL if kill % 2 == 0 else signal.SIGTERM
            after = moments.uniform(10, 60)
            kills.append(killed_run(api, folder, env, after, signum))
            print(json.dumps(kills[-1]), flush=True)
        api.reset_stats()
        last = subprocess.run(
            [PLATFORM_SYNC, "sync", "--no-progress"], env=env, cwd=folder, capture_output=True
        )
        results["kills"] = kills
        results["last_run"] = {"exit_status": last.returncode, "sale_details": sale_details(api)}
        results["chain_seconds"] = round(time.monotonic() - started, 1)
    with running_sandbox_process(seed=options.seed, scale=options.scale, rate_limits=False) as fresh_api:
        fresh = work / "fresh"
        fresh.mkdir()
        fresh_source = {**source, "base_url": fresh_api.base_url, "access_token": fresh_api.token()}
        fresh_source["rate_limit_time_scale"] = 1e6
        subprocess.run(
            [PLATFORM_SYNC, "sync", "--no-progress"],
            env=environment(fresh, fresh_source, 0),
            cwd=fresh,
            capture_output=True,
            check=True,
        )
        results["fresh_sale_details"] = sale_details(fresh_api)
    chained = warehouse_tables(folder / "warehouse.duckdb")
    exact = warehouse_tables(fresh / "warehouse.duckdb")
    results["differing_tables"] = sorted(t for t in exact if chained.get(t) != exact[t])
    results["sales"] = {"chain": len(chained.get("sales", [])), "fresh": len(exact.get("sales", []))}
    results["chain_sale_details"] = (
        sum(k["sale_details"] for k in kills) + results["last_run"]["sale_details"]
    )
    print(json.dumps(results, indent=2))
    if options.out:
        options.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0 if not results["differing_tables"] else 1


if __name__ == "__main__":
    sys.exit(main())
