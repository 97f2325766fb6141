"""dlt's generic `rest_api` source as the contender of `bench/shapes.py`: what a dlt user writes first for
the reads of a world shape, with dlt's defaults (page-number paging over the paged lists, one child
request per parent record or id, resolved from a parent resource, bearer auth).

    python -m bench.shapes_rest_api CONFIG RESULT      # the child process (`run` below starts it)

Only the reads a shape is about (`Shape.focus`) are configured: the attendees of each event and the
enrollments of each student, the event details (from a resource of the configured event ids); the
transfers and the lesson comments in one walk each; the products with their campaigns and partners as
child resources; the subscription and fiscal-document windows of the shape's settings; the sale details
from a resource of the configured sale ids. The paged lists are `bench.worker.rest_api_config`'s (the
throughput benchmark's contender); loaded as parquet into DuckDB.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from bench import harness
from bench.shape_worlds import Shape
from sources.platform.settings import DEFAULT_ITEMS_PER_PAGE, parse_start_date
from sources.platform_client.operations import OPERATIONS_BY_NAME
from sources.platform_client.windows import date_windows, iso_z


def _path(operation: str, **params: object) -> str:
    return OPERATIONS_BY_NAME[operation].render_path(params)


def _listing(resource: str, operation: str, params: Mapping[str, str] | None = None, **path: object) -> Any:
    return {
        "resource": resource,
        "operation": operation,
        "path": _path(operation, **path),
        "params": params or {},
    }


def _child(name: str, operation: str, parent: str) -> dict[str, str]:
    """One request per record of `parent`, its `id` in the path."""
    path = OPERATIONS_BY_NAME[operation].path.replace("{id}", f"{{resources.{parent}.id}}")
    return {"name": name, "path": path.lstrip("/")}


def plan(
    shape: Shape, catalog: Mapping[str, Any], settings: Mapping[str, Any], now: datetime
) -> dict[str, Any]:
    """The listings, id resources and child resources of `shape`'s reads (the child's config)."""
    start = parse_start_date(str(settings["start_date"]), now)
    listings: list[Any] = []
    parents: list[dict[str, str]] = []  # paged lists whose records are parents
    ids: dict[str, list[str]] = {}  # resources of configured ids
    children: list[dict[str, str]] = []
    if shape.name == "small_lists":
        for event in catalog["events"]:
            params = {"modifiedAtGte": iso_z(start), "order": "asc"}
            listings.append(_listing("event_attendees", "list_attendees", params, id=event["id"]))
        for school in catalog["schools"]:
            for student in school["student_slugs"]:
                path = {"teamSlug": school["team_slug"], "studentSlug": student}
                listings.append(_listing("enrollments", "list_enrollments", **path))
        ids["event_ids"] = [event["id"] for event in catalog["events"]]
        children.append(_child("events", "event_details", "event_ids"))
    elif shape.name == "deep_lists":
        listings.append(_listing("transfers", "list_transfers"))
        listings.append(_listing("lesson_comments", "list_lesson_comments"))
    elif shape.name == "fan_500":
        parents.append({"name": "products", "path": _path("list_products").lstrip("/")})
        children.append(_child("product_campaigns", "list_product_campaigns", "products"))
        children.append(_child("product_partners", "list_product_partners", "products"))
    elif shape.name == "windows_100":
        windows = list(date_windows(start, now, int(settings["subscriptions_window_days"])))
        for number, (lower, upper) in enumerate(windows, 1):
            params = {"filterBy": "update", "startDate": iso_z(lower)}
            if number < len(windows):  # the newest window open, as the source's
                params["endDate"] = iso_z(upper)
            listings.append(_listing("subscriptions", "list_subscriptions", params))
        end = now + timedelta(days=1)
        for lower, upper in date_windows(start, end, int(settings["fiscal_documents_window_days"])):
            params = {"startDate": iso_z(lower), "endDate": iso_z(upper)}
            listings.append(_listing("fiscal_documents", "list_fiscal_documents", params))
    elif shape.name == "ids_5000":
        ids["sale_ids"] = list(settings["sale_ids"])
        children.append(_child("sales", "sale_details", "sale_ids"))
    return {"listings": listings, "parents": parents, "ids": ids, "children": children}


def _pages(values: list[str]) -> Iterator[list[dict[str, str]]]:
    """Configured ids as a parent's pages: a dependent resource takes its parent's items page by page."""
    for start in range(0, len(values), DEFAULT_ITEMS_PER_PAGE):
        yield [{"id": value} for value in values[start : start + DEFAULT_ITEMS_PER_PAGE]]


def source_config(config: Mapping[str, Any]) -> Any:
    """dlt's `RESTAPIConfig` of a plan (`plan`), with the id resources as dlt resources."""
    import dlt

    from bench.worker import rest_api_config

    rest = rest_api_config(config["base_url"], config["token"], config["listings"], DEFAULT_ITEMS_PER_PAGE)
    resources: list[Any] = rest["resources"]
    for parent in config["parents"]:
        params = {"itemsPerPage": DEFAULT_ITEMS_PER_PAGE}
        resources.append({"name": parent["name"], "endpoint": {"path": parent["path"], "params": params}})
    for name, values in config["ids"].items():
        resources.append(dlt.resource(list(_pages(values)), name=name))
    for child in config["children"]:
        endpoint = {"path": child["path"], "data_selector": "$", "paginator": "single_page"}
        resources.append({"name": child["name"], "endpoint": endpoint})
    return rest


def run(config: Mapping[str, Any], workdir: Path, cap_seconds: float) -> dict[str, Any]:
    """Run the contender in a child process of its own session, stopped after `cap_seconds`."""
    workdir.mkdir(parents=True, exist_ok=True)
    config_path, result_path = workdir / "rest_api.config.json", workdir / "rest_api.result.json"
    config_path.write_text(json.dumps({**config, "workdir": str(workdir)}))
    command = [sys.executable, "-m", "bench.shapes_rest_api", str(config_path), str(result_path)]
    done = run_capped(command, harness.ROOT, harness.child_env(), workdir / "rest_api.log", cap_seconds)
    if result_path.exists():
        done["rows"] = json.loads(result_path.read_text()).get("rows")
    elif not done["stopped"]:
        done["log_tail"] = (workdir / "rest_api.log").read_text(errors="replace")[-1500:]
    return done


def run_capped(
    command: list[str], cwd: Path, env: dict[str, str], log: Path, cap_seconds: float
) -> dict[str, Any]:
    """Run `command` in a session of its own, its output in `log`, stopped after `cap_seconds`
    (`wait_or_stop`): its exit status, whether it was stopped, and its seconds."""
    started = time.monotonic()
    with log.open("w") as output:
        process = subprocess.Popen(
            command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        status, stopped = wait_or_stop(process, cap_seconds)
    return {"exit_status": status, "stopped": stopped, "seconds": round(time.monotonic() - started, 1)}


def wait_or_stop(process: subprocess.Popen[Any], cap_seconds: float) -> tuple[int, bool]:
    """The exit status of `process` (started in a session of its own); after `cap_seconds` the session
    is sent SIGTERM, then SIGKILL if it has not ended 20 s later. (status, whether it was stopped)"""
    try:
        return process.wait(cap_seconds), False
    except subprocess.TimeoutExpired:
        pass
    for sig, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 20.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            return process.wait(grace), True
        except subprocess.TimeoutExpired:
            continue
    return process.wait(), True


def main(config_path: str, result_path: str) -> int:
    import dlt
    from dlt.sources.rest_api import rest_api_source

    config = json.loads(Path(config_path).read_text())
    workdir = Path(config["workdir"])
    pipeline = dlt.pipeline(
        pipeline_name="bench_shapes_rest_api",
        destination=dlt.destinations.duckdb(str(workdir / "rest_api.duckdb")),
        dataset_name="rest_api_raw",
        pipelines_dir=str(workdir / "pipelines"),
    )
    pipeline.run(rest_api_source(source_config(config)), loader_file_format="parquet")
    trace = pipeline.last_trace
    info = trace.last_normalize_info if trace else None
    rows = {t: n for t, n in sorted((info.row_counts if info else {}).items()) if not t.startswith("_dlt")}
    Path(result_path).write_text(json.dumps({"rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1], sys.argv[2]))
