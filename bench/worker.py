"""One measured run, in a process of its own: `python -m bench.worker TASK CONFIG.json RESULT.json`.

Tasks:
- `ours`: `pipelines.sync.platform_pipeline.sync` (our source into DuckDB, as `platform-sync sync` does), then
  optionally `dbt build` (`pipelines.dbt.runner.run_models`) a number of times on the loaded data.
- `rest_api`: dlt's generic `rest_api_source` over the same listings into DuckDB, with dlt's defaults.
- `floor`: a bare httpx loop that fetches and parses every page of the listings and writes it to disk,
  then DuckDB reading those files (`read_json`) into one table per resource.

Each run has its own DuckDB file and dlt pipelines folder in the run's work folder. The times cover the
work itself (extract to load), not the interpreter's start and imports (reported apart). The result
holds the process's peak resident memory (`ru_maxrss`; for our sync, with its normalize workers: see
`Timeline`) and row counts read from the run itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()


def cpu_seconds() -> float:
    """CPU (user and system) of this process and of its children that have ended (normalize workers,
    page decoders)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def peak_rss_mb() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Timeline(threading.Thread):
    """Memory of this process and its children every `interval` seconds, to tell in which step the peak is.

    Alone, the process's resident memory (RSS). With children (dlt's normalize workers, forked from this
    process), the sum of their proportional set sizes (PSS): the pages a forked worker shares with this
    process count once, where a sum of RSS would count them in every process.
    """

    def __init__(self, interval: float = 0.1) -> None:
        super().__init__(daemon=True)
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self._halt = threading.Event()

    def run(self) -> None:
        import psutil

        process = psutil.Process()
        while not self._halt.is_set():
            started = time.perf_counter()
            with contextlib.suppress(psutil.Error):
                self.samples.append((time.time(), _tree_memory(process) / 2**20))
            # Reading the PSS of a large process walks its page tables in the kernel: waiting ten times
            # as long as a sample took keeps the sampler under a tenth of a core of the measured run's.
            self._halt.wait(max(self.interval, 10 * (time.perf_counter() - started)))

    def peak_step(self, steps: list[tuple[str, float, float]]) -> dict[str, Any]:
        """The step (name, start, end as epoch seconds) during which the sampled peak happened."""
        self._halt.set()
        if not self.samples:
            return {}
        at, rss = max(self.samples, key=lambda sample: sample[1])
        name = next((step for step, start, end in steps if start <= at <= end), "other")
        by_step = {
            step: max((v for t, v in self.samples if start <= t <= end), default=0.0)
            for step, start, end in steps
        }
        return {"peak_step": name, "sampled_peak_mb": rss, "peak_mb_by_step": by_step}


def _tree_memory(process: Any) -> int:
    import psutil

    children = process.children(recursive=True)
    if not children:
        return int(process.memory_info().rss)
    total = 0
    for member in [process, *children]:
        with contextlib.suppress(psutil.Error):  # a worker may exit between listing and reading
            total += member.memory_full_info().pss
    return total


def _trace_steps(pipeline: Any) -> list[tuple[str, float, float]]:
    trace = pipeline.last_trace
    steps = []
    for step in trace.steps if trace else []:
        if step.step in ("extract", "normalize", "load") and step.finished_at and step.started_at:
            steps.append((step.step, step.started_at.timestamp(), step.finished_at.timestamp()))
    return steps


def _duckdb_env(workdir: Path, name: str) -> Path:
    path = workdir / f"{name}.duckdb"
    os.environ["DESTINATION__DUCKDB__CREDENTIALS__DATABASE"] = str(path)
    return path


# ------------------------------------------------------------------------------------------------ ours


def run_ours(config: Mapping[str, Any]) -> dict[str, Any]:
    workdir = Path(config["workdir"])
    database = _duckdb_env(workdir, "ours")
    from pipelines.sync.platform_pipeline import make_pipeline, sync
    from pipelines.sync.process_settings import apply_process_settings

    apply_process_settings()  # as `platform-sync sync` does: the process is ours
    imported = time.perf_counter() - STARTED
    pipeline = make_pipeline(pipelines_dir=workdir / "pipelines")
    source_options = dict(config["source_options"])
    if config.get("sale_ids_from_database"):
        source_options["sale_ids"] = loaded_sale_ids(database, int(config["sale_ids_from_database"]))
    timeline = Timeline()
    timeline.start()
    started, cpu_started, thread_started = time.perf_counter(), cpu_seconds(), time.thread_time()
    result = sync(pipeline, resources=config.get("resources"), source_options=source_options)
    seconds = time.perf_counter() - started
    cpu, main_thread_cpu = cpu_seconds() - cpu_started, time.thread_time() - thread_started
    sync_peak = peak_rss_mb()
    memory = timeline.peak_step(_trace_steps(pipeline))
    rows = dict(result.rows)
    list_resources = config.get("count_resources") or []
    out: dict[str, Any] = {
        "seconds": seconds,
        "steps": {k: v for k, v in result.seconds.items() if k != "total"},
        "cpu_seconds": cpu,  # the sync's, with its helper processes and normalize workers
        "main_thread_cpu_seconds": main_thread_cpu,
        "import_seconds": imported,
        "rows_by_table": rows,
        "items": sum(rows.get(name, 0) for name in list_resources),
        "rows": sum(rows.values()),
        "requests": dict(result.requests),
        "failed": dict(result.report.failed),
        "skipped": dict(result.report.skipped),
        "not_due": sorted(result.report.not_due),
        "warnings": list(result.report.warnings)[:20],
        # The process's own peak, or its workers' and its together if that was higher (see Timeline).
        "peak_rss_mb": max(sync_peak, memory.get("sampled_peak_mb", 0.0)),
        "process_peak_rss_mb": sync_peak,
        "memory": memory,
        "database_mb": database.stat().st_size / 1e6 if database.exists() else 0.0,
    }
    models_runs = int(config.get("models_runs") or 0)
    if models_runs:
        from pipelines.dbt.runner import run_models

        timings, statuses = [], []
        for _ in range(models_runs):
            began = time.perf_counter()
            models = run_models(pipeline, "build", echo=False, target_path=workdir / "dbt-target")
            timings.append(time.perf_counter() - began)
            statuses.append(
                {
                    "returncode": models.returncode,
                    "nodes": len(models.nodes),
                    "failed": [node.unique_id for node in models.failed][:20],
                }
            )
            if not models.success:
                (workdir / "dbt-output.txt").write_text(models.output)
                break
        out["models"] = {"seconds": timings, "runs": statuses}
    return out


def loaded_sale_ids(database: Path, limit: int) -> list[str]:
    """Sale ids referenced by the rows already loaded (subscriptions' first invoices, fiscal documents'
    sales), smallest first: the same ids on every run, so their pages are recorded once."""
    import duckdb

    with duckdb.connect(str(database), read_only=True) as connection:
        rows = connection.execute(
            "select id from (select first_invoice_id as id from platform_raw.subscriptions "
            "union select sale__id from platform_raw.fiscal_documents) "
            "where id is not null order by id limit ?",
            [limit],
        ).fetchall()
    return [str(row[0]) for row in rows]


# -------------------------------------------------------------------------------------------- rest_api


def rest_api_config(
    base_url: str, token: str, listings: list[dict[str, Any]], items_per_page: int
) -> Any:  # dlt's RESTAPIConfig, a TypedDict
    """What a dlt user writes first: one rest_api resource per listing, page-number paging, bearer auth."""
    resources = []
    counters: dict[str, int] = defaultdict(int)
    for listing in listings:
        counters[listing["resource"]] += 1
        resources.append(
            {
                "name": f"{listing['resource']}_{counters[listing['resource']]}",
                "table_name": listing["resource"],
                "endpoint": {
                    "path": listing["path"].lstrip("/"),
                    "params": {**listing["params"], "itemsPerPage": items_per_page},
                },
            }
        )
    return {
        "client": {
            "base_url": base_url.rstrip("/") + "/",
            "auth": {"type": "bearer", "token": token},
            "paginator": {"type": "page_number", "base_page": 1, "page_param": "page", "total_path": "pages"},
        },
        "resource_defaults": {"endpoint": {"data_selector": "items"}},
        "resources": resources,
    }


def run_rest_api(config: Mapping[str, Any]) -> dict[str, Any]:
    workdir = Path(config["workdir"])
    database = workdir / "rest_api.duckdb"
    import dlt
    from dlt.sources.rest_api import rest_api_source

    imported = time.perf_counter() - STARTED
    source = rest_api_source(
        rest_api_config(config["base_url"], config["token"], config["listings"], config["items_per_page"])
    )
    pipeline = dlt.pipeline(
        pipeline_name="bench_rest_api",
        destination=dlt.destinations.duckdb(str(database)),
        dataset_name="rest_api_raw",
        pipelines_dir=str(workdir / "pipelines"),
    )
    timeline = Timeline()
    timeline.start()
    started = time.perf_counter()
    file_format: Any = config.get("loader_file_format")  # None: dlt's default (insert_values)
    pipeline.run(source, loader_file_format=file_format)
    seconds = time.perf_counter() - started
    memory = timeline.peak_step(_trace_steps(pipeline))
    trace = pipeline.last_trace
    info = trace.last_normalize_info if trace else None
    rows = {t: n for t, n in sorted((info.row_counts if info else {}).items()) if not t.startswith("_dlt")}
    steps = {name: end - start for name, start, end in _trace_steps(pipeline)}
    resources = {listing["resource"] for listing in config["listings"]}
    return {
        "seconds": seconds,
        "steps": steps,
        "import_seconds": imported,
        "rows_by_table": rows,
        "items": sum(n for t, n in rows.items() if t in resources),
        "rows": sum(rows.values()),
        "loader_file_format": config.get("loader_file_format") or "insert_values (dlt's default for DuckDB)",
        "peak_rss_mb": peak_rss_mb(),
        "memory": memory,
        "database_mb": database.stat().st_size / 1e6 if database.exists() else 0.0,
    }


# ----------------------------------------------------------------------------------------------- floor


def fetch_pages(
    base_url: str,
    token: str,
    listings: list[dict[str, Any]],
    items_per_page: int,
    workers: int,
    out_dir: Path | None,
) -> dict[str, Any]:
    """Fetch and parse every page: one thread per resource walking its listings (like our source's
    resources, which dlt runs in parallel), one pooled keep-alive client. Returns counts per resource."""
    import httpx

    by_resource: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for listing in listings:
        by_resource[listing["resource"]].append(listing)
    counts: dict[str, dict[str, int]] = {r: {"pages": 0, "items": 0, "bytes": 0} for r in by_resource}
    lock = threading.Lock()
    client = httpx.Client(
        base_url=base_url,
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
        timeout=300.0,
        limits=httpx.Limits(max_connections=max(workers, 10), max_keepalive_connections=max(workers, 10)),
    )

    def walk(resource_name: str) -> None:
        directory = out_dir / resource_name if out_dir else None
        if directory:
            directory.mkdir(parents=True, exist_ok=True)
        sequence = 0
        for listing in by_resource[resource_name]:
            page = 1
            while True:
                response = client.get(
                    listing["path"],
                    params={**listing["params"], "page": page, "itemsPerPage": items_per_page},
                )
                response.raise_for_status()
                body = response.content
                document = json.loads(body)
                items = document["items"]
                if directory and items:
                    sequence += 1
                    (directory / f"{sequence:07d}.json").write_bytes(body)
                with lock:
                    tally = counts[resource_name]
                    tally["pages"] += 1
                    tally["items"] += len(items)
                    tally["bytes"] += len(body)
                if not items or page >= int(document["pages"]):
                    break
                page += 1

    with client, ThreadPoolExecutor(workers, thread_name_prefix="floor") as pool:
        for future in [pool.submit(walk, name) for name in by_resource]:
            future.result()
    return counts


def run_floor(config: Mapping[str, Any]) -> dict[str, Any]:
    workdir = Path(config["workdir"])
    pages_dir = workdir / "pages"
    import duckdb
    import httpx  # noqa: F401 - imported before the clock starts, like the others' imports

    imported = time.perf_counter() - STARTED
    started = time.perf_counter()
    counts = fetch_pages(
        config["base_url"],
        config["token"],
        config["listings"],
        config["items_per_page"],
        config["workers"],
        pages_dir if config.get("load", True) else None,
    )
    fetched = time.perf_counter()
    rows: dict[str, int] = {}
    if config.get("load", True):
        connection = duckdb.connect(str(workdir / "floor.duckdb"))
        for resource_name in sorted(counts):
            if not counts[resource_name]["items"]:
                continue
            files = str(pages_dir / resource_name / "*.json")
            # DuckDB infers the columns from a sample; if a later page does not fit, infer from all of them.
            for sample in ("", "sample_size = -1, "):
                try:
                    connection.execute(
                        f"create or replace table {resource_name} as select unnest(items, recursive := true) "
                        f"from read_json('{files}', format = 'auto', {sample}maximum_object_size = 268435456)"
                    )
                    break
                except duckdb.Error:
                    if sample:
                        raise
            row = connection.execute(f"select count(*) from {resource_name}").fetchone()
            rows[resource_name] = int(row[0]) if row else 0
        connection.close()
    loaded = time.perf_counter()
    return {
        "seconds": loaded - started,
        "steps": {"fetch": fetched - started, "load": loaded - fetched},
        "import_seconds": imported,
        "pages_by_resource": counts,
        "pages": sum(c["pages"] for c in counts.values()),
        "bytes": sum(c["bytes"] for c in counts.values()),
        "items": sum(c["items"] for c in counts.values()),
        "rows_by_table": rows,
        "rows": sum(rows.values()),
        "workers": config["workers"],
        "peak_rss_mb": peak_rss_mb(),
    }


TASKS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "ours": run_ours,
    "rest_api": run_rest_api,
    "floor": run_floor,
}


def main(argv: list[str]) -> int:
    task, config_path, result_path = argv
    config = json.loads(Path(config_path).read_text())
    os.environ.update(config.get("env") or {})  # experiments: dlt configuration by environment
    result = TASKS[task](config)
    result["task"] = task
    result["process_seconds"] = time.perf_counter() - STARTED
    result["peak_rss_mb_at_exit"] = peak_rss_mb()
    Path(result_path).write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
