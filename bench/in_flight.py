"""Requests in flight on the reads of one request per parent or id (issue 45: campaigns and partners per
product, event and delivery details, top posts, renewals were asked one after another; the sale details
4 at a time whatever the latency).

    .venv/bin/python -m bench.in_flight --scale 3500 [--latency-ms 150] [--faults SPEC] [--out FILE]

One full sync by the real command against the sandbox (rate limits on, time scale 60) answering every
request `--latency-ms` late (and `--faults`, e.g. `error=0.03,foreign_429=0.02`), with `timeline=1`: per
operation its requests, its first request and last answer at the sandbox; requests in flight = requests x
latency / that span (the figure of issue 27). The sale details also against their bound: their requests
at the spec's 30 a minute, scaled.
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
# the reads of one request per parent record or id: the fans, the renewals and the sale details
ONE_PER_ID = (
    "list_product_campaigns",
    "list_product_partners",
    "event_details",
    "delivery_details",
    "top_commented_posts",
    "subscription_details",
    "sale_details",
)
TIME_SCALE = 60.0


def main(argv: list[str] | None = None) -> int:
    from sandbox.options import catalog_source_options
    from sandbox.running import running_sandbox_process

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=3500)
    parser.add_argument("--latency-ms", type=int, default=150)
    parser.add_argument("--faults", default="", help="more sandbox faults, e.g. error=0.03")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--every-operation", action="store_true", help="not only the fans")
    parser.add_argument("--checkpoint", type=int, help="sale details a pass (default: the sync's own)")
    parser.add_argument("--out", type=Path)
    options = parser.parse_args(argv)
    latency = options.latency_ms / 1000
    faults = ",".join(filter(None, [f"latency_ms={options.latency_ms},timeline=1", options.faults]))
    with running_sandbox_process(
        seed=options.seed, scale=options.scale, time_scale=TIME_SCALE, faults=faults
    ) as api:
        source = {
            "base_url": api.base_url,
            "access_token": api.token(),
            "start_date": "2020-01-01",
            **catalog_source_options(api.catalog()),
            "rate_limit_time_scale": TIME_SCALE,
        }
        folder = Path(tempfile.mkdtemp(prefix="in-flight-"))
        passes = {} if options.checkpoint is None else {"SYNC__CHECKPOINT_REQUESTS": str(options.checkpoint)}
        started = time.monotonic()
        run = subprocess.run(
            [PLATFORM_SYNC, "sync", "--no-progress"],
            env=sync_environment(folder, source, **passes),
            cwd=folder,
            capture_output=True,
            text=True,
        )
        result: dict[str, Any] = {
            "scale": options.scale,
            "latency_ms": options.latency_ms,
            "faults": faults,
            "checkpoint_requests": options.checkpoint,
            "exit_status": run.returncode,
            "seconds": round(time.monotonic() - started, 1),
            "operations": {},
        }
        for operation, span in (api.stats().get("timeline") or {}).items():
            if operation in ONE_PER_ID or options.every_operation:
                seconds = max(span["last"] - span["first"], 1e-9)
                result["operations"][operation] = {
                    "requests": span["requests"],
                    "first": round(span["first"], 2),
                    "seconds": round(seconds, 2),
                    "in_flight": round(span["requests"] * latency / seconds, 2),
                }
        details = result["operations"].get("sale_details")
        if details:  # the spec's 30 a minute, `TIME_SCALE` times faster
            bound = details["requests"] / (30 * TIME_SCALE / 60)
            details["bound_seconds"] = round(bound, 2)
            details["of_bound"] = round(details["seconds"] / bound, 3)
    print(json.dumps(result, indent=2))
    if options.out:
        options.out.parent.mkdir(parents=True, exist_ok=True)
        options.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0 if run.returncode in (0, 3) else 1


if __name__ == "__main__":
    raise SystemExit(main())
