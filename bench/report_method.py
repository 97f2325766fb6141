"""The report's Method section: how the rows, pages, runs and contenders of the benchmark were set up."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.report_format import runs_text


def method_section(figures: Mapping[str, Any]) -> list[str]:
    settings = figures["settings"]
    workers = settings["extract_workers"]
    memory_limit = f" ({settings['duckdb_memory_limit']})" if settings.get("duckdb_memory_limit") else ""
    return [
        "## Method",
        "",
        "- **Rows and scales.** Scales are sales-equivalent rows: the items of the paged lists "
        f"({', '.join(settings['list_resources'])}). A sandbox world of scale N (N sales) holds about "
        f"{settings['items_per_sale']} N of them (lesson comments N/2, fiscal documents about 0.47 N, "
        "subscriptions N/5, attendees about N/11, transfers N/30, ...), so the world scale is rows / "
        f"{settings['items_per_sale']}. Sale details (one "
        "request per sale, 30 a minute) and the per-product, "
        "per-event and per-delivery lookups are not paged "
        "lists: the throughput runs leave them out (our sync "
        "runs with `resources=` the list resources); the top-up before the models reads them, with sale "
        f"details for the first {settings['full_sync_sales_cap']} sale ids referenced.",
        "- **Pages.** The sandbox (rate limits off) sits behind `bench/pageserver.py`, which records each "
        "answer the first time it is asked for and serves it "
        "from memory afterwards (a request is its method, "
        "path and sorted query, date-times cut to their date). A recording pass fetches every listing once; "
        "the measured runs are then served without the sandbox, so they show the pipelines' own cost. "
        "Recorded pages are kept in `bench/work/pages/` (by seed, scale and a hash of `sandbox/`) for later "
        "benchmarks.",
        "- **Runs.** Every measured run is a fresh process "
        "(`python -m bench.worker`) with its own DuckDB file "
        "and dlt pipelines folder, working in the repository (so `.dlt/config.toml` applies: `[extract] "
        f"workers = {workers}`). The client's own pacing is "
        "off (`rate_limit_time_scale` = 1e6), as the sandbox "
        "enforces no limits here. Contenders run in a rotating order within each run. "
        f"{runs_text(settings['runs'])} per scale, {settings['large_runs']} "
        f"from {settings['large_rows']:,} rows on.",
        "- **Ours**: `pipelines.sync.platform_pipeline.sync(make_pipeline(...), "
        "resources=<list resources>)`: "
        "pages parsed with orjson, pydantic validation, then pages of flat models packed into Arrow tables "
        "with their row ids (dlt loads the extracted parquet files as they are), models with lists "
        "normalized by dlt into child tables; merge into "
        f"DuckDB with its memory limit{memory_limit}, one load job at a time, each merged table deduplicated "
        "by its version column (`dedup_sort`); writers buffering 1,000 rows per table; freed memory handed "
        "back to the system before the load step (`pipelines/sync/memory.py`).",
        "- **Ours without Arrow**: the same sync with the source's `arrow_pages = false`, so that dlt "
        "normalizes every row: the effect of the Arrow path. At the large scale it runs as often as "
        "rest_api with parquet.",
        "- **rest_api**: `dlt.sources.rest_api.rest_api_source`, one resource per listing (same path and "
        "query, `page_number` paginator on `page` from 1 with "
        "`total_path` `pages`, `itemsPerPage` 100, bearer "
        "auth, `data_selector` `items`) into DuckDB: with dlt's defaults (append, `insert_values`, resources "
        'one after another), and with `loader_file_format="parquet"`. The default loader grows with the '
        "rows (its load step runs SQL inserts) and would take most of the benchmark's time at a million "
        f"rows, so it runs up to {settings['rest_api_default_max_rows']:,} rows, "
        f"{runs_text(settings['rest_api_default_runs'])} per scale; with parquet, "
        f"{runs_text(settings['rest_api_large_runs'])} at the large scale.",
        "- **Floor**: httpx, one pooled client, one thread "
        f"per resource ({workers} threads, like dlt's extract "
        "pool running our resources in parallel), fetch + `json.loads` + write every page to a file; then "
        "DuckDB `read_json` of those files with `unnest(items, recursive := true)`, one table per resource "
        "(no child tables, DuckDB's inferred types).",
        "- **Memory**: `ru_maxrss` of the run's process, or for our sync the sampled memory of the process "
        "and its children (decoding helper, normalize workers) together (PSS) when higher "
        "(`process_peak_rss_mb` is the process alone; "
        "the parent also samples the sum of the RSS of the process and its children with psutil, which "
        "counts the pages forked workers share with the process twice: `sampled_peak_rss_mb` in "
        "figures.json).",
        "- **Rate limits**: against the live sandbox with its limits on; requests and 429s from "
        "`/sandbox/stats`.",
        "",
    ]
