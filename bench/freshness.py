"""Fresh as the budget allows (issue 47), measured: scheduled runs against a world that breaks the old
rule (whole lists of dozens of pages, comments and transfers sent newest first, or oldest first as the
sandbox sends them), at an hourly and a daily schedule, our default settings against a run that reads
everything (`rescan_hours = 0`).

After every run (the sandbox's world stands still while a run reads it, and moves one interval between
runs), each whole list and fan is compared with the API, and each loaded sale's status with the world's:
its rows missing, extra or stale (a field that changes differs), how stale the table got (`stale_hours`:
the most runs in a row a row differed, times the interval: the change came at most that long before the
run), and the promise the run printed (its
`_platform_freshness` rows: `refresh`, `stale_within_hours`).
The run's start is moved with the world's clock (the source's `now`, in this process), so that the
schedule's interval passes for the sync as it does for the API.

    .venv/bin/python -m bench.freshness --out bench/results/freshness.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import dlt
import duckdb
import httpx
import pendulum

from pipelines.sync.platform_pipeline import sync
from sandbox.options import catalog_source_options
from sandbox.running import running_sandbox
from sandbox.world import SyntheticWorld, WorldError
from sources.platform.run_budget import HEADS, NEW_SALES, REVERIFY, THE_REST, WHOLE_SCANS

TIME_SCALE = 600.0
# The settings of each way of running. The sandbox runs its limits TIME_SCALE times faster, and the budget
# arithmetic with them: at the default share this world's scans all fit every run. `tight` is the
# arithmetic of an account 100 times larger at the spec's own rates (the share over TIME_SCALE x 100):
# there the fans and the large lists wait, and only the heads (or tails) of the sorted lists are read.
MODES: dict[str, dict[str, Any]] = {
    "budget": {},
    "tight": {"scan_budget_share": 0.1 / TIME_SCALE / 100, "details_budget_share": 0.8 / TIME_SCALE / 100},
    "everything": {"rescan_hours": 0},
}
# The order of the lists with a creation time: newest first (their heads are read between whole scans),
# or the sandbox's own, oldest first (their tails are).
ORDERS = {"newest first": "newest_first=list_lesson_comments+list_transfers", "oldest first": None}
# table -> (API path, the API fields compared, the table's columns holding them)
LISTS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "transfers": ("/store/v1/financial/transfers", ("id", "status"), ("id", "status")),
    "lesson_comments": (
        "/course/v1/comments",
        ("id", "isAnswered", "isRead", "status"),
        ("id", "is_answered", "is_read", "status"),
    ),
    "products": ("/store/v1/products", ("id", "name"), ("id", "name")),
    "affiliations": ("/store/v1/affiliates", ("id",), ("id",)),
}


def pages(client: httpx.Client, path: str) -> Iterator[dict[str, Any]]:
    number = 1
    while True:
        envelope = client.get(path, params={"page": number, "itemsPerPage": 100}).json()
        yield from envelope["items"]
        if number >= int(envelope["pages"]):
            return
        number += 1


def truth(client: httpx.Client) -> dict[str, set[tuple[str, ...]]]:
    """What the API lists now, as text tuples of the compared fields."""
    out = {}
    for table, (path, fields, _) in LISTS.items():
        out[table] = {tuple(_text(item.get(f)) for f in fields) for item in pages(client, path)}
    products = [str(p["id"]) for p in pages(client, "/store/v1/products")]
    out["product_campaigns"] = {
        (product, str(c["id"]))
        for product in products
        for c in client.get(f"/store/v1/products/{product}/campaigns").json()
    }
    return out


def loaded(database: str) -> dict[str, set[tuple[str, ...]]]:
    out = {}
    with duckdb.connect(database, read_only=True) as connection:
        for table, (_, _, columns) in LISTS.items():
            sql = f"select {', '.join(columns)} from platform_raw.{table} where _platform_deleted_at is null"
            out[table] = {tuple(_text(v) for v in row) for row in connection.execute(sql).fetchall()}
        sql = "select product_id, id from platform_raw.product_campaigns where _platform_deleted_at is null"
        rows = connection.execute(sql).fetchall()
        out["product_campaigns"] = {tuple(_text(v) for v in row) for row in rows}
    return out


def sales_compared(database: str, world: SyntheticWorld) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
    """The loaded sales' statuses, and the world's for the same ids (the API cannot list sales: only the
    sales the sync found are compared; the ones it has not fetched yet are the backlog it reports)."""
    with duckdb.connect(database, read_only=True) as connection:
        rows = connection.execute("select id, status from platform_raw.sales").fetchall()
    table: set[tuple[str, ...]] = {(str(sale_id), _text(status)) for sale_id, status in rows}
    now: set[tuple[str, ...]] = set()
    for sale_id, _ in table:
        try:
            now.add((sale_id, _text(world.sale(sale_id)["status"])))
        except WorldError:  # gone from the platform
            continue
    return now, table


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def run_schedule(hours: float, mode: str, order: str, runs: int, seed: int, scale: int) -> dict[str, Any]:
    """`runs` scheduled runs `hours` apart under the settings of `mode` (`MODES`), the lists in `order`."""
    interval = timedelta(hours=hours)
    world_model = SyntheticWorld(seed, scale)  # the sales are compared by id, in this process
    served = running_sandbox(
        seed=seed, scale=scale, time_scale=TIME_SCALE, faults=ORDERS[order], world=world_model
    )
    with served as sandbox, tempfile.TemporaryDirectory() as folder:
        database = str(Path(folder) / "warehouse.duckdb")
        pipeline = dlt.pipeline(
            pipeline_name="freshness_bench",
            destination=dlt.destinations.duckdb(database),
            dataset_name="platform_raw",
            pipelines_dir=str(Path(folder) / "pipelines"),
        )
        options: dict[str, Any] = {
            "base_url": sandbox.base_url,
            "access_token": sandbox.token(),
            "start_date": "2020-01-01",
            **catalog_source_options(sandbox.catalog(), by_course=False),  # comments: one walk
            "rate_limit_time_scale": TIME_SCALE,
            "items_per_page": 10,  # lists of dozens of pages: past the old rule's 20 requests
            "run_interval_hours": hours,
            **MODES[mode],
        }
        headers = {"Authorization": f"Bearer {options['access_token']}"}
        start = pendulum.now("UTC")
        out = []
        differing: dict[str, dict[tuple[str, ...], int]] = {}  # table -> row -> runs in a row it differed
        with httpx.Client(base_url=sandbox.base_url, headers=headers, timeout=30) as client:
            for number in range(runs):
                sandbox.reset_stats()
                started = start + interval * number
                result = sync(pipeline, source_options={**options, "now": lambda at=started: at})
                stats = sandbox.stats()["operations"]
                world, table = truth(client), loaded(database)
                world["sales"], table["sales"] = sales_compared(database, world_model)
                promises = {
                    r["table_name"]: (r["refresh"], r["stale_within_hours"]) for r in result.freshness
                }
                for name in world:
                    before = differing.get(name, {})
                    differing[name] = {row: before.get(row, 0) + 1 for row in world[name] ^ table[name]}
                out.append(
                    {
                        "run": number,
                        "requests": sum(sum(answers.values()) for answers in stats.values()),
                        "requests_by_operation": {op: sum(a.values()) for op, a in stats.items()},
                        # the run's own split (the summary's "requests by purpose") and its budget
                        "requests_by_purpose": result.report.requests_by_purpose(),
                        "budget": result.report.budget.lines() if result.report.budget else [],
                        "failed": sorted(result.report.failed),
                        "not_due": sorted(result.report.not_due),
                        "tables": {
                            name: {
                                "rows": len(world[name]),
                                "missing": len(world[name] - table[name]),
                                "extra": len(table[name] - world[name]),
                                "refresh": promises.get(name, ("", None))[0],
                                "stale_within_hours": promises.get(name, ("", None))[1],
                                "stale_hours": max(differing[name].values(), default=0) * hours,
                            }
                            for name in world
                        },
                    }
                )
                sandbox.advance(interval.total_seconds())
    return {"schedule_hours": hours, "mode": mode, "order": order, "runs": out}


def markdown(results: list[dict[str, Any]]) -> str:
    lines = [
        "# Fresh as the budget allows (issue 47)",
        "",
        "Rows that differ from the API right after each run (missing + extra: a stale row counts in both), "
        "per table, the most hours a row of it had been differing (`@ N h`: runs in a row times the "
        "interval), and the requests the run made. `budget`: the default settings; `tight`: the budget "
        "of an account 100 times larger at the spec's rates; `everything`: `rescan_hours = 0`. "
        "Run 0 is the first sync. `by purpose`: the run's requests as its summary splits them (whole "
        "scans / heads and tails / sale details new or changed / re-verification / the rest).",
        "",
    ]
    for one in results:
        tables = list(one["runs"][0]["tables"])
        lines += [f"## every {one['schedule_hours']:g} h, {one['mode']}, lists {one['order']}", ""]
        lines.append("| run | requests | by purpose | " + " | ".join(tables) + " |")
        lines.append("|---|---|---|" + "---|" * len(tables))
        for run in one["runs"]:
            cells = [_cell(t) for t in (run["tables"][name] for name in tables)]
            lines.append(
                f"| {run['run']} | {run['requests']:,} | {_purposes(run)} | " + " | ".join(cells) + " |"
            )
        last = one["runs"][-1]["tables"]
        lines += ["", "Promises printed by the last run, and the most staleness any run reached:", ""]
        lines += [
            f"- {name}: {t['refresh']} (stale within {t['stale_within_hours']} h); reached "
            f"{max(run['tables'][name]['stale_hours'] for run in one['runs']):g} h"
            for name, t in last.items()
        ]
        lines += ["", "Budget of the last run:", "", "```", *one["runs"][-1]["budget"], "```", ""]
    return "\n".join(lines)


def _cell(table: dict[str, Any]) -> str:
    differing = table["missing"] + table["extra"]
    reached = f" @ {table['stale_hours']:g} h" if differing else ""
    return f"{differing}/{table['rows']}{reached}"


def _purposes(run: dict[str, Any]) -> str:
    split = run["requests_by_purpose"]
    named = (WHOLE_SCANS, HEADS, NEW_SALES, REVERIFY, THE_REST)
    return " / ".join(f"{split.get(purpose, 0):,}" for purpose in named)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.freshness", description=__doc__)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--scale", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path("bench/results/freshness.json"))
    parser.add_argument("--orders", nargs="+", choices=list(ORDERS), default=list(ORDERS))
    parser.add_argument("--modes", nargs="+", choices=list(MODES), default=list(MODES))
    parser.add_argument("--hours", nargs="+", type=float, default=[1, 24])
    args = parser.parse_args(argv)
    results = [
        run_schedule(hours, mode, order, args.runs, args.seed, args.scale)
        for order in args.orders
        for hours in args.hours
        for mode in args.modes
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1, default=str))
    args.out.with_suffix(".md").write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
