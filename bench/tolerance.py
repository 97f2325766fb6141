"""The cost of an API that departs from its spec: our sync of the paged lists on the pages of a sandbox
drifting at `DRIFT` (a share of records with nulls, unlisted values and fields, values of other types:
`sandbox/drift/`), against the same sync on the same world's exact pages.

Both page sets are recorded once (`bench.pageserver`, stored apart), then the two syncs run in turns,
each from its own page server, so the figure is the source's own cost: the records that fail the strict
validation are read field by field (`sources/platform/models/tolerant.py`), the rows with fields the
spec does not list are packed with a column per new field (`sources/platform/fastpath/new_fields.py`),
and their departures are counted and loaded.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import pendulum

from bench import harness
from bench.listings import LIST_RESOURCES, listings, source_options
from bench.progress import log
from bench.recording import page_store, record
from bench.settings import NO_PACING, world_scale_for
from bench.stats import median, paired_ratios, ratio

DRIFT = 0.03


def run_tolerance(options: argparse.Namespace, target_rows: int, work: Path) -> dict[str, Any]:
    """Our sync on exact pages and on drifting pages, `options.tolerance_runs` times each, in turns."""
    from sandbox.running import running_sandbox_process

    scale = world_scale_for(target_rows)
    log(f"tolerance at {target_rows:,} rows: exact pages against pages drifting at {DRIFT:g}")
    stores = {
        name: page_store(options, scale, suffix)
        for name, suffix in (("exact", ""), ("drifting", f"-drift{DRIFT:g}"))
    }
    out: dict[str, Any] = {"target_rows": target_rows, "world_scale": scale, "drift": DRIFT}
    with (
        running_sandbox_process(seed=options.seed, scale=scale, rate_limits=False) as exact,
        running_sandbox_process(seed=options.seed, scale=scale, rate_limits=False, drift=DRIFT) as drifting,
        harness.page_server(exact.base_url, stores["exact"]) as exact_pages,
        harness.page_server(drifting.base_url, stores["drifting"]) as drifting_pages,
    ):
        catalog = exact.catalog()
        walks = [listing.as_dict() for listing in listings(catalog, pendulum.now("UTC"))]
        configs = {}
        for name, handle, pages in (("exact", exact, exact_pages), ("drifting", drifting, drifting_pages)):
            token = handle.token()
            recording = record(options, pages, token, walks, stores[name], work / f"record-{name}")
            out[f"recording_{name}"] = recording
            options_ = {**source_options(pages.url, token, catalog), "rate_limit_time_scale": NO_PACING}
            configs[name] = {
                "source_options": options_,
                "resources": list(LIST_RESOURCES),
                "count_resources": list(LIST_RESOURCES),
            }
        # Known when the drifting pages were recorded now (a stored recording asks the sandbox nothing).
        departed = {(d["operation"], d["record_id"]) for d in drifting.departures()}
        out["departed_records"] = len(departed) if departed else None
        runs: list[dict[str, Any]] = []
        for index in range(options.tolerance_runs):
            run: dict[str, Any] = {}
            order = ["exact", "drifting"] if index % 2 == 0 else ["drifting", "exact"]
            for name in order:
                directory = work / f"tolerance-run{index + 1}" / name
                result = harness.run_worker("ours", configs[name], directory)
                result["rows_per_second"] = ratio(result.get("items"), result.get("seconds"))
                run[name] = {k: v for k, v in result.items() if k != "warnings"}
                log(
                    f"  run {index + 1}/{options.tolerance_runs} {name}: {result['seconds']:.1f}s, "
                    f"{result.get('items', 0):,} items, peak {result['peak_rss_mb']:.0f} MB"
                )
                shutil.rmtree(directory, ignore_errors=True)
            runs.append(run)
    out["runs"] = runs
    out["seconds"] = {name: median(run[name]["seconds"] for run in runs) for name in ("exact", "drifting")}
    out["items"] = {name: median(run[name].get("items") for run in runs) for name in ("exact", "drifting")}
    out["ratios"] = {"drifting_over_exact": paired_ratios(runs, "drifting", "exact")}
    return out
