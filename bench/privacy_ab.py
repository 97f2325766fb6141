"""The cost of pseudonymisation (issue 31): our sync of the paged lists with `[sources.platform.privacy]`
off and on, back to back on the same recorded pages, in alternating order.

    .venv/bin/python -m bench.privacy_ab --rows 50000 --runs 3

Uses the throughput section's machinery (`bench/throughput.py`): the sandbox without rate limits behind
the recording page server, one worker process per run. "on" hashes documents, emails, phones and names
and blocks addresses, the most work the option can do. Prints each run and the median ratio on / off.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import pendulum

from bench import harness
from bench.listings import LIST_RESOURCES, listings, source_options
from bench.recording import page_store, record
from bench.settings import NO_PACING, world_scale_for
from bench.stats import median

PRIVACY_ON = {"documents": "hash", "emails": "hash", "phones": "hash", "names": "hash", "addresses": "block"}
KEY = "bench-privacy-key-0123456789abcdef"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=Path("bench/work/privacy-ab"))
    options = parser.parse_args(argv)
    options.no_store = False
    from sandbox.running import running_sandbox_process

    scale = world_scale_for(options.rows)
    results: dict[str, list[float]] = {"off": [], "on": []}
    with (
        running_sandbox_process(seed=options.seed, scale=scale, rate_limits=False) as sandbox,
        harness.page_server(sandbox.base_url, page_store(options, scale)) as pages,
    ):
        token = sandbox.token()
        catalog = sandbox.catalog()
        walks = [listing.as_dict() for listing in listings(catalog, pendulum.now("UTC"))]
        record(options, pages, token, walks, page_store(options, scale), options.work / "record")
        base = {**source_options(pages.url, token, catalog), "rate_limit_time_scale": NO_PACING}
        configs = {
            "off": base,
            "on": {**base, "privacy": PRIVACY_ON, "privacy_key": KEY},
        }
        for index in range(options.runs):
            order = ["off", "on"] if index % 2 == 0 else ["on", "off"]
            for name in order:
                directory = options.work / f"run{index + 1}" / name
                config = {"source_options": configs[name], "resources": list(LIST_RESOURCES),
                          "count_resources": list(LIST_RESOURCES)}  # fmt: skip
                result = harness.run_worker("ours", config, directory)
                results[name].append(float(result["seconds"]))
                print(
                    f"run {index + 1} {name}: {result['seconds']:.1f}s, {result['items']:,} items, "
                    f"peak {result['sampled_peak_rss_mb']:.0f} MB, cpu {result['cpu_seconds']:.1f}s "
                    f"(main thread {result['main_thread_cpu_seconds']:.1f}s), "
                    f"steps {json.dumps({k: round(v, 1) for k, v in result['steps'].items()})}",
                    flush=True,
                )
                shutil.rmtree(directory, ignore_errors=True)
    ratios = [on / off for on, off in zip(results["on"], results["off"], strict=True)]
    print(f"median off {median(results['off']):.1f}s, on {median(results['on']):.1f}s, "
          f"ratio on/off per run {[round(r, 3) for r in ratios]}, median {median(ratios):.3f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
