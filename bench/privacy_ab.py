"""The cost of pseudonymisation (issue 31): our sync of the paged lists with `[sources.platform.privacy]`
off and on, back to back on the same recorded pages, each pair in the other order from the one before.

A section of `make bench` (`--privacy-rows`, `--privacy-runs`), also runnable alone:

    .venv/bin/python -m bench.privacy_ab --rows 50000 --runs 3 [--out bench/results/<date>-privacy]

Uses the throughput section's machinery (`bench/throughput.py`): the sandbox without rate limits behind
the recording page server (the pages of a scale the throughput section recorded are reused), one worker
process per run. "on" hashes documents, emails, phones and names and blocks addresses, the most work the
option can do. The figure that decides the target is the median over the pairs of on / off.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pendulum

from bench import harness
from bench.listings import LIST_RESOURCES, listings, source_options
from bench.progress import log
from bench.provenance import git_state
from bench.recording import page_store, record
from bench.settings import NO_PACING, world_scale_for
from bench.stats import median

PRIVACY_ON = {"documents": "hash", "emails": "hash", "phones": "hash", "names": "hash", "addresses": "block"}
KEY = "bench-privacy-key-0123456789abcdef"
RATIO_MAX = 1.10  # the target: the 1M benchmark with the option on within 1.10x of it off
KEPT = (
    "seconds",
    "items",
    "rows_by_table",
    "sampled_peak_rss_mb",
    "cpu_seconds",
    "main_thread_cpu_seconds",
    "steps",
)


def run_privacy(options: argparse.Namespace, rows: int, runs: int, work: Path) -> dict[str, Any]:
    """`runs` pairs of runs, off and on; `options` carries `seed` and `no_store` (the page store)."""
    from sandbox.running import running_sandbox_process

    scale = world_scale_for(rows)
    store = page_store(options, scale)
    pairs: list[dict[str, Any]] = []
    load_start = harness.load_average()
    with (
        running_sandbox_process(seed=options.seed, scale=scale, rate_limits=False) as sandbox,
        harness.page_server(sandbox.base_url, store) as pages,
    ):
        token = sandbox.token()
        catalog = sandbox.catalog()
        walks = [listing.as_dict() for listing in listings(catalog, pendulum.now("UTC"))]
        recording = record(options, pages, token, walks, store, work / "record")
        base = {**source_options(pages.url, token, catalog), "rate_limit_time_scale": NO_PACING}
        configs = {"off": base, "on": {**base, "privacy": PRIVACY_ON, "privacy_key": KEY}}
        pages.reset_stats()
        for index in range(runs):
            order = ["off", "on"] if index % 2 == 0 else ["on", "off"]
            pair: dict[str, Any] = {"pair": index + 1, "order": order}
            for name in order:
                directory = work / f"pair{index + 1}" / name
                config = {"source_options": configs[name], "resources": list(LIST_RESOURCES),
                          "count_resources": list(LIST_RESOURCES)}  # fmt: skip
                result = harness.run_worker("ours", config, directory)
                pair[name] = {key: result[key] for key in KEPT}
                log(f"privacy pair {index + 1} {name}: {_describe(pair[name])}")
                harness.drop_databases(directory)
                shutil.rmtree(directory, ignore_errors=True)
            pair["ratio"] = pair["on"]["seconds"] / pair["off"]["seconds"]
            pairs.append(pair)
        misses = int(pages.stats()["misses"])  # pages not recorded: the runs would not read the same data
    ratios = [pair["ratio"] for pair in pairs]
    return {
        "rows": rows,
        "world_scale": scale,
        "groups_on": PRIVACY_ON,
        "recording": recording,
        "page_server_misses": misses,
        "pairs": pairs,
        "same_items": all(pair["on"]["items"] == pair["off"]["items"] for pair in pairs),
        "median_off_seconds": median([pair["off"]["seconds"] for pair in pairs]),
        "median_on_seconds": median([pair["on"]["seconds"] for pair in pairs]),
        "median_ratio": median(ratios),
        "load_average_start": load_start,
        "load_average_end": harness.load_average(),
    }


def target(figures: Mapping[str, Any]) -> dict[str, Any]:
    """The issue's target, decided by the median of the pairs' on / off."""
    value = figures["median_ratio"]
    return {
        "id": "privacy_cost",
        "text": f"sync with pseudonymisation on / off at {figures['rows']:,} rows: {value:.3f}x, median of "
        f"{len(figures['pairs'])} pairs (target <= {RATIO_MAX:g}x)",
        "value": value,
        "limit": f"<= {RATIO_MAX}",
        "met": value <= RATIO_MAX and figures["same_items"] and not figures["page_server_misses"],
    }


def markdown(figures: Mapping[str, Any]) -> str:
    """The section's report."""
    lines = [
        "",
        f"## Pseudonymisation cost (issue 31): {figures['rows']:,} rows, "
        f"world scale {figures['world_scale']}",
        "",
        "Our sync of the paged lists from the same recorded pages, `[sources.platform.privacy]` off and on "
        f"({', '.join(f'{g} {m}' for g, m in figures['groups_on'].items())}), each pair in the other order "
        "from the one before; every run a process of its own. Load average at start "
        f"{figures['load_average_start']}, at end {figures['load_average_end']}. Same items on and off: "
        f"{'yes' if figures['same_items'] else 'NO'}; page server misses {figures['page_server_misses']}.",
        "",
        "| pair | order | off | on | on / off | main thread CPU off / on | peak RSS off / on |",
        "|---|---|---|---|---|---|---|",
    ]
    for pair in figures["pairs"]:
        off, on = pair["off"], pair["on"]
        cells = [
            str(pair["pair"]),
            " then ".join(pair["order"]),
            f"{off['seconds']:.1f} s",
            f"{on['seconds']:.1f} s",
            f"{pair['ratio']:.3f}x",
            f"{off['main_thread_cpu_seconds']:.1f} / {on['main_thread_cpu_seconds']:.1f} s",
            f"{off['sampled_peak_rss_mb']:.0f} / {on['sampled_peak_rss_mb']:.0f} MB",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Median: off {figures['median_off_seconds']:.1f} s, on {figures['median_on_seconds']:.1f} s; "
        f"median of the pairs' on / off **{figures['median_ratio']:.3f}x** (target <= {RATIO_MAX:g}x).",
    ]
    return "\n".join(lines) + "\n"


def _describe(result: Mapping[str, Any]) -> str:
    steps = json.dumps({key: round(value, 1) for key, value in result["steps"].items()})
    return (
        f"{result['seconds']:.1f}s, {result['items']:,} items, peak {result['sampled_peak_rss_mb']:.0f} MB, "
        f"cpu {result['cpu_seconds']:.1f}s (main thread {result['main_thread_cpu_seconds']:.1f}s), "
        f"steps {steps}"
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3, help="pairs of runs, off and on")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path("bench/work/privacy-ab"))
    parser.add_argument("--no-store", action="store_true", help="record the pages again")
    parser.add_argument("--out", type=Path, help="write privacy.json and privacy.md here")
    options = parser.parse_args(argv)
    figures = run_privacy(options, options.rows, options.runs, options.work)
    figures["targets"] = [target(figures)]
    figures["machine"] = harness.machine()
    figures["git"] = git_state()
    if options.out:
        options.out.mkdir(parents=True, exist_ok=True)
        (options.out / "privacy.json").write_text(json.dumps(figures, indent=2, default=str) + "\n")
        (options.out / "privacy.md").write_text(markdown(figures))
    print(markdown(figures))
    print(target(figures)["text"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
