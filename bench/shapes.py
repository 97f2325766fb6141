"""Requests in flight and time against the bound, over a family of world shapes (issue 45).

    .venv/bin/python -m bench.shapes [--shapes fan_500,ids_5000] [--time-scales 1,10,60] [--out DIR]
                                     [--max-seconds 180] [--sample-seconds 90] [--no-rest-api]

For each shape (`bench/shape_worlds.py`: many small lists, a few deep lists, a fan over 500 parents, 100
date windows, 5,000 sale details by id) and time scale, a sandbox of its own (`--world`, rate limits on,
`time_scale`) answers every request after 80-200 ms (uniform, seeded: `latency_ms=80,latency_max_ms=200`),
3% of them 500/502/503 (`error=0.03`) and 1% 429 as if another application had spent the budget
(`foreign_429=0.01`), with `timeline=1`. Then, on a fresh token each and the fault generator restarted:

- **ours**: one full sync by the real command (`platform-sync sync`, as `bench/in_flight.py`), the shape's
  settings (`Shape.settings`), `rate_limit_time_scale` told;
- **rest_api**: dlt's generic `rest_api` source over the same reads (`bench/shapes_rest_api.py`).

Per operation, from the sandbox's stats: requests (every arrival: 429s and 5xx too), span (first request
to last answer), requests in flight = requests x 0.14 s (the mean latency) / span; the operation's limit
at the sandbox (spec part 8; 600 a minute for the others), its rate at the time scale, what the limit
allows in flight (rate x 0.14 s) and the bound: the requests that spent the limit's budget (answered
neither 429 nor 5xx) / the rate; span / bound. A run that has not ended after `--max-seconds`
(`--sample-seconds` at time scale 1: "sampled") is stopped (SIGTERM to its session) and measured on what
it did until then. The summary (`bench/shapes_report.py`) takes, per kind of read, the worst shape: the
lowest in flight among the reads a shape is about where the limit allows 8 or more, and the highest
sale-details span against the bound.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import harness, provenance
from bench.progress import log
from bench.shape_worlds import KIND_OF, SHAPES, Shape
from bench.shapes_report import markdown, summary
from bench.sync_env import sync_environment

PLATFORM_SYNC = str(Path(sys.executable).with_name("platform-sync"))
LATENCY_MS = (80, 200)
MEAN_LATENCY = sum(LATENCY_MS) / 2 / 1000
ERROR_SHARE = 0.03
FOREIGN_SHARE = 0.01
FAILED = ("429", "500", "502", "503", "504", "dropped", "disconnected")  # spent no budget


def fault_spec(seed: int, foreign: float = FOREIGN_SHARE) -> str:
    low, high = LATENCY_MS
    return (
        f"latency_ms={low},latency_max_ms={high},error={ERROR_SHARE},foreign_429={foreign:g},"
        f"timeline=1,seed={seed}"
    )


def limit_of(operation: str) -> int:
    """The operation's limit a minute at the sandbox (spec part 8, else the sandbox's default)."""
    from sandbox.ratelimit import DEFAULT_LIMIT, SPEC_LIMITS

    return SPEC_LIMITS.get(operation, DEFAULT_LIMIT)


def figures(stats: Mapping[str, Any], time_scale: float, focus: Mapping[str, str]) -> dict[str, Any]:
    """Per operation of the sandbox's stats: requests, span, in flight, the bound and span / bound."""
    out: dict[str, Any] = {}
    counts = stats.get("operations", {})
    for operation, span in sorted((stats.get("timeline") or {}).items(), key=lambda kv: kv[1]["first"]):
        if operation == "token_exchange":
            continue
        statuses = {str(k): int(v) for k, v in counts.get(operation, {}).items()}
        seconds = max(span["last"] - span["first"], 1e-9)
        limit = limit_of(operation)
        rate = limit * time_scale / 60.0
        spent = sum(n for status, n in statuses.items() if status not in FAILED)
        bound = spent / rate
        out[operation] = {
            "kind": KIND_OF.get(operation, "other"),
            "focus": operation in focus,
            "requests": span["requests"],
            "statuses": statuses,
            "first": round(span["first"], 2),
            "span": round(seconds, 2),
            "in_flight": round(span["requests"] * MEAN_LATENCY / seconds, 2),
            "limit_per_minute": limit,
            "rate_per_second": round(rate, 2),
            "allowed_in_flight": round(rate * MEAN_LATENCY, 2),
            "spent": spent,
            "bound": round(bound, 2),
            "burst_bound": round(max(0, spent - limit) / rate, 2),  # the bucket starts full
            "of_bound": round(seconds / bound, 3) if bound > 0 else None,
        }
    return out


def source_options(
    api: Any, catalog: Mapping[str, Any], shape: Shape, settings: Mapping[str, Any], time_scale: float
) -> dict[str, Any]:
    from sandbox.options import catalog_source_options

    return {
        "base_url": api.base_url,
        "access_token": api.token(),
        **catalog_source_options(catalog, by_course=shape.by_course),
        "rate_limit_time_scale": time_scale,
        **settings,
    }


def run_ours(source: Mapping[str, Any], cap_seconds: float, code: Path | None = None) -> dict[str, Any]:
    """One full sync by the real command in a folder of its own, stopped after `cap_seconds`; with
    `code`, its `sources` and `pipelines` are imported from there (a snapshot of the code under test)."""
    from bench.shapes_rest_api import run_capped

    folder = Path(tempfile.mkdtemp(prefix="shapes-ours-"))
    env = sync_environment(folder, dict(source))
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(code), env.get("PYTHONPATH")) if p)
    try:
        done = run_capped(
            [PLATFORM_SYNC, "sync", "--no-progress"], folder, env, folder / "sync.log", cap_seconds
        )
        if done["exit_status"] not in (0, 3) and not done["stopped"]:
            done["log_tail"] = (folder / "sync.log").read_text(errors="replace")[-1500:]
        return done
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_shape(shape: Shape, time_scale: float, options: argparse.Namespace) -> dict[str, Any]:
    """Both contenders on one sandbox of the shape at `time_scale`, each on a fresh token, the fault
    generator restarted and the stats reset before it."""
    from bench import shapes_rest_api
    from sandbox.running import running_sandbox_process

    world = shape.world(options.seed)
    now = datetime.now(UTC)
    settings = shape.settings(world, now.date())
    sampled = time_scale == 1
    cap = options.sample_seconds if sampled else options.max_seconds
    spec = fault_spec(options.seed, options.foreign_429)
    result: dict[str, Any] = {
        "shape": shape.name,
        "description": shape.description,
        "time_scale": time_scale,
        "sampled": sampled,
        "cap_seconds": cap,
        "code_digest": code_digest(options.code),  # the code under test as this shape's runs started
        "settings": {k: (f"{len(v)} ids" if k == "sale_ids" else v) for k, v in settings.items()},
        "runs": {},
    }
    with running_sandbox_process(
        seed=options.seed,
        scale=shape.parts.sales,
        time_scale=time_scale,
        faults=spec,
        world_factory=shape.factory,
    ) as api:
        catalog = api.catalog()
        contenders = ["ours"] + ([] if options.no_rest_api else ["rest_api"])
        for contender in contenders:
            api.set_faults(spec)
            api.reset_stats()
            load_before = harness.load_average()
            log(f"{shape.name} at time scale {time_scale:g}: {contender} (at most {cap:g} s)")
            source = source_options(api, catalog, shape, settings, time_scale)
            if contender == "ours":
                run = run_ours(source, cap, options.code)
            else:
                plan = shapes_rest_api.plan(shape, catalog, settings, now)
                work = Path(tempfile.mkdtemp(prefix="shapes-rest-api-"))
                config = {"base_url": api.base_url, "token": source["access_token"], **plan}
                try:
                    run = shapes_rest_api.run(config, work, min(cap, options.rest_api_seconds))
                finally:
                    shutil.rmtree(work, ignore_errors=True)
            stats = api.stats()
            run["load_average"] = {"before": load_before, "after": harness.load_average()}
            run["faults"] = stats.get("faults", {})
            run["operations"] = figures(stats, time_scale, shape.focus)
            result["runs"][contender] = run
            focus = {op: run["operations"].get(op, {}) for op in shape.focus}
            log(
                f"  {run['seconds']} s{' (stopped)' if run['stopped'] else ''}, exit {run['exit_status']}: "
                + "; ".join(
                    f"{op} {f.get('requests', 0)} req, {f.get('in_flight', '-')} in flight, "
                    f"{f.get('of_bound', '-')}x bound"
                    for op, f in focus.items()
                )
            )
    return result


def code_digest(code: Path | None = None) -> str:
    """A hash of the code under test (sources/ and pipelines/ of `code` or the repository, the repository's
    sandbox/): whether it changed during the run."""
    digest = hashlib.blake2b(digest_size=8)
    for root, folder in ((code, "sources"), (code, "pipelines"), (None, "sandbox")):
        base = root or harness.ROOT
        for path in sorted((base / folder).rglob("*.py")):
            digest.update(str(path.relative_to(base)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def write(out: Path, document: Mapping[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "shapes.json").write_text(json.dumps(document, indent=2) + "\n")
    (out / "shapes.md").write_text(markdown(document))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--shapes", default=",".join(SHAPES), help="comma-separated, of: " + ", ".join(SHAPES)
    )
    parser.add_argument("--time-scales", default="1,10,60", help="1 is sampled (--sample-seconds)")
    parser.add_argument("--seed", type=int, default=45)
    parser.add_argument("--max-seconds", type=float, default=180.0, help="a run is stopped after this")
    parser.add_argument("--sample-seconds", type=float, default=90.0, help="the cap at time scale 1")
    parser.add_argument("--rest-api-seconds", type=float, default=120.0, help="the rest_api runs' cap")
    parser.add_argument("--no-rest-api", action="store_true")
    parser.add_argument("--foreign-429", type=float, default=FOREIGN_SHARE, help="share of foreign 429s")
    parser.add_argument(
        "--code",
        type=Path,
        help="import the sync's sources/ and pipelines/ from this folder, a snapshot of the code under test "
        "(e.g. `git archive HEAD sources pipelines | tar -x -C DIR`), not from the working tree",
    )
    parser.add_argument("--code-label", default="", help="what --code holds, for the report (e.g. a commit)")
    parser.add_argument(
        "--out", type=Path, default=Path(f"bench/results/{datetime.now(UTC).date().isoformat()}-shapes")
    )
    options = parser.parse_args(argv)
    names = [name.strip() for name in options.shapes.split(",") if name.strip()]
    unknown = [name for name in names if name not in SHAPES]
    if unknown:
        parser.error(f"unknown shapes {unknown}; known: {', '.join(SHAPES)}")
    time_scales = [float(text) for text in options.time_scales.split(",")]
    document: dict[str, Any] = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "faults": fault_spec(options.seed, options.foreign_429),
        "mean_latency_seconds": MEAN_LATENCY,
        "machine": harness.machine(),
        "versions": provenance.versions(),
        "git_at_start": {**provenance.git_state(), "code_digest": code_digest(options.code)},
        "code": str(options.code) if options.code else "the repository's working tree",
        "code_label": options.code_label,
        "results": [],
    }
    for time_scale in time_scales:
        for name in names:
            document["results"].append(run_shape(SHAPES[name], time_scale, options))
            document["summary"] = summary(document["results"])
            write(options.out, document)
    document["git_at_end"] = {**provenance.git_state(), "code_digest": code_digest(options.code)}
    write(options.out, document)
    print((options.out / "shapes.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
