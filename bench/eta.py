"""How steady the sale details' time left is over a run (issue 51: against the real limits it swung
between 17 and 41 minutes in 100 s, for a run that took 54).

Each world shape is synced once by the real command (`platform-sync --log-format json sync`, progress every
`--interval` seconds, checkpoints as configured by default). Every progress line of `sales` that has a time
left gives a projected end (its time + `eta_seconds`); the run's sale details really end at the first line
whose done equals its total after the last detail. Reported per shape: how far the projected ends fall
from the real end, as a share of the run's time to it (the target: within 20%), their spread, and, for
information, as a share of the time that was left at each line. Lines written while sale ids were still
being found (`total_final` false: the display says "at least") give a floor, not a projection: they
are counted apart, held only to not falling later than the target allows.

    .venv/bin/python -m bench.eta --out bench/results/<date>-eta/eta.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.sync_env import sync_environment

PLATFORM_SYNC = str(Path(sys.executable).with_name("platform-sync"))
# The shapes (sandbox faults, source settings): the sandbox as it is; a remote, shared server (latency,
# 3% 503s, 2% foreign 429s); and a slow one where latency, not the rate limit, sets the details' pace (one
# detail at a time at 300 ms: 3.3 a second against the limit's 6).
SHAPES: dict[str, tuple[str | None, dict[str, Any]]] = {
    "plain": (None, {}),
    "remote": ("latency_ms=120,error=0.03,foreign_429=0.02", {}),
    "latency-bound": ("latency_ms=300,error=0.03", {"sales_concurrency": "1"}),
}


def sync_with_progress(folder: Path, source: dict[str, Any], interval: float) -> list[tuple[float, dict]]:
    """(seconds since the start, progress record) of every JSON progress line of `sales` of one sync."""
    env = sync_environment(folder, source)
    started = time.monotonic()
    run = subprocess.Popen(
        [PLATFORM_SYNC, "--log-format", "json", "sync", "--progress-interval", str(interval)],
        env=env,
        cwd=folder,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[tuple[float, dict]] = []
    assert run.stderr is not None
    for text in run.stderr:
        try:
            record = json.loads(text)
        except ValueError:
            continue
        if record.get("event") == "progress" and record.get("resource") == "sales":
            lines.append((time.monotonic() - started, record))
    if run.wait() not in (0, 3):
        raise RuntimeError(f"the sync exited {run.returncode}")
    return lines


def steadiness(lines: list[tuple[float, dict]]) -> dict[str, Any]:
    """The projected ends against the real end of the sale details, as shares of the run's time to that
    end (the issue's measure: an ETA that swung 17 to 41 minutes for a run of 54), and of the time that was
    left at each line (which grows without bound at the tail: 10 s late with 10 s left is 100%)."""
    if not lines:
        return {"lines": 0}
    last = lines[-1][1].get("done")
    finished = [at for at, record in lines if record.get("done") == last == record.get("total")]
    if not finished:
        return {"lines": len(lines)}
    end = finished[0]  # the first line that saw the last detail done (the load's lines follow)
    timed = [
        (at, record)
        for at, record in lines
        if record.get("eta_seconds") is not None and at < end and record.get("done") != record.get("total")
    ]
    # A line whose total may still grow (sale ids still being found) says "at least": a floor, held to
    # not projecting past the real end; the others are held to the target.
    floors = [at + record["eta_seconds"] for at, record in timed if record.get("total_final") is False]
    projected = [(at, at + record["eta_seconds"]) for at, record in timed if record.get("total_final", True)]
    if not projected:
        return {"lines": len(lines), "end_seconds": round(end, 1)}
    of_run = [(ends - end) / end for _, ends in projected]
    of_left = [(ends - end) / (end - at) for at, ends in projected]
    ends = [ends for _, ends in projected]
    return {
        "lines": len(lines),
        "floors_not_later_than_20_percent": f"{sum(floor <= end * 1.2 for floor in floors)} of {len(floors)}",
        "with_eta": len(projected),
        "end_seconds": round(end, 1),
        "projected_end_min_max": [round(min(ends), 1), round(max(ends), 1)],
        "worst_share_of_run": round(_worst(of_run), 3),
        "spread_share_of_run": round((max(ends) - min(ends)) / end, 3),
        "within_20_percent_of_run": f"{sum(abs(e) <= 0.2 for e in of_run)} of {len(of_run)}",
        "worst_share_of_time_left": round(_worst(of_left), 3),
    }


def _worst(shares: list[float]) -> float:
    """The share farthest from 0, with its sign (late: positive)."""
    worst = shares[0]
    for share in shares:
        if abs(share) > abs(worst):
            worst = share
    return worst


def main(argv: list[str] | None = None) -> int:
    from sandbox.options import catalog_source_options
    from sandbox.running import running_sandbox_process

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=1500)
    parser.add_argument("--time-scale", type=float, default=6.0)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--seed", type=int, default=51)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", choices=sorted(SHAPES), help="one shape instead of every one")
    options = parser.parse_args(argv)
    results: dict[str, Any] = {"scale": options.scale, "time_scale": options.time_scale, "shapes": {}}
    for shape, (faults, settings) in SHAPES.items():
        if options.only and shape != options.only:
            continue
        with running_sandbox_process(
            seed=options.seed, scale=options.scale, time_scale=options.time_scale, faults=faults
        ) as api:
            source = {
                "base_url": api.base_url,
                "access_token": api.token(),
                "start_date": "2020-01-01",
                **catalog_source_options(api.catalog()),
                "rate_limit_time_scale": options.time_scale,
                **settings,
            }
            folder = Path(tempfile.mkdtemp(prefix=f"eta-{shape}-"))
            lines = sync_with_progress(folder, source, options.interval)
            results["shapes"][shape] = steadiness(lines)
        if options.out:  # every line kept beside the figures, to see where a projection went wrong
            options.out.parent.mkdir(parents=True, exist_ok=True)
            with options.out.with_name(f"lines-{shape}.jsonl").open("w") as kept:
                kept.writelines(json.dumps({"at": round(at, 2), **record}) + "\n" for at, record in lines)
        print(shape, results["shapes"][shape], flush=True)
    if options.out:
        options.out.parent.mkdir(parents=True, exist_ok=True)
        options.out.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
