"""The benchmark's report: targets checked against the figures, a Markdown page and a chart."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from bench.stats import dig, ratio

# (id, text with {value}, limit, comparison) — checked by `targets` from figures.json.
FLOOR_RATIO_MAX = 2.0
REST_API_RATIO_MIN = 3.0
BOUND_RATIO_MAX = 1.10
INCREMENTAL_SHARE_MAX = 0.05
PEAK_MB_MAX = 500.0
PEAK_GROWTH_MAX = 1.5


def _fmt(value: float | None, digits: int = 2, suffix: str = "") -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}{suffix}"


def _rows(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _scale_name(entry: Mapping[str, Any]) -> str:
    rows = entry["target_rows"]
    return f"{rows / 1e6:g}M" if rows >= 1_000_000 else f"{rows / 1e3:g}k"


def targets(figures: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each target of the issue with the figure that decides it; `met` is None when it was not measured."""
    scales = sorted(figures.get("throughput", []), key=lambda e: e["target_rows"])
    out: list[dict[str, Any]] = []

    def add(target_id: str, text: str, value: float | None, met: bool | None, limit: str) -> None:
        out.append({"id": target_id, "text": text, "value": value, "limit": limit, "met": met})

    if scales:
        largest, smallest = scales[-1], scales[0]
        name = _scale_name(largest)
        value = dig(largest, "ratios", "ours_over_floor", "median")
        add(
            "floor_ratio",
            f"sync time / fetch-plus-load floor at {name} rows: {_fmt(value)}x (target <= {FLOOR_RATIO_MAX:g}x)",
            value,
            None if value is None else value <= FLOOR_RATIO_MAX,
            f"<= {FLOOR_RATIO_MAX}",
        )
        with_default = [e for e in scales if dig(e, "ratios", "rest_api_over_ours", "median") is not None]
        if with_default:
            entry = with_default[-1]
            value = dig(entry, "ratios", "rest_api_over_ours", "median")
            add(
                "rest_api_ratio",
                f"generic rest_api (dlt defaults) time / sync time at {_scale_name(entry)} rows: {_fmt(value)}x "
                f"(target >= {REST_API_RATIO_MIN:g}x)",
                value,
                value >= REST_API_RATIO_MIN,
                f">= {REST_API_RATIO_MIN}",
            )
        value = dig(largest, "ratios", "rest_api_parquet_over_ours", "median")
        add(
            "rest_api_parquet_ratio",
            f"generic rest_api with parquet time / sync time at {name} rows: {_fmt(value)}x "
            f"(same target, >= {REST_API_RATIO_MIN:g}x, against a tuned rest_api)",
            value,
            None if value is None else value >= REST_API_RATIO_MIN,
            f">= {REST_API_RATIO_MIN}",
        )
        peak = dig(largest, "contenders", "ours", "median", "peak_rss_mb")
        add(
            "peak_memory",
            f"peak memory of the sync at {name} rows: {_fmt(peak, 0)} MB (target < {PEAK_MB_MAX:g} MB)",
            peak,
            None if peak is None else peak < PEAK_MB_MAX,
            f"< {PEAK_MB_MAX}",
        )
        if len(scales) > 1:
            small = dig(smallest, "contenders", "ours", "median", "peak_rss_mb")
            growth = ratio(peak, small)
            add(
                "memory_growth",
                f"peak memory {name} / {_scale_name(smallest)} rows: {_fmt(growth)}x "
                f"(target < {PEAK_GROWTH_MAX:g}x for {largest['target_rows'] / smallest['target_rows']:g}x the data)",
                growth,
                None if growth is None else growth < PEAK_GROWTH_MAX,
                f"< {PEAK_GROWTH_MAX}",
            )
    limits = figures.get("rate_limits")
    if limits:
        med = limits["median"]
        value = med["wall_over_bound"]
        add(
            "rate_limit_bound",
            f"rate-limited full sync wall time / bound: {_fmt(value, 3)}x (target <= {BOUND_RATIO_MAX:g}x)",
            value,
            None if value is None else value <= BOUND_RATIO_MAX,
            f"<= {BOUND_RATIO_MAX}",
        )
        add(
            "no_429",
            f"429 answers with rate limits on: {med['rate_limited']} (target 0)",
            med["rate_limited"],
            med["rate_limited"] == 0,
            "== 0",
        )
        for key, what in (("incremental_time_share", "time"), ("incremental_request_share", "requests")):
            value = med[key]
            add(
                f"incremental_{what}",
                f"incremental run with nothing new, {what}: {_fmt(None if value is None else 100 * value, 1)}% "
                f"of a full run (target < {100 * INCREMENTAL_SHARE_MAX:g}%)",
                value,
                None if value is None else value < INCREMENTAL_SHARE_MAX,
                f"< {INCREMENTAL_SHARE_MAX}",
            )
    return out


# ---------------------------------------------------------------------------------------------- chart


def chart(figures: Mapping[str, Any], path: Path) -> None:
    """Throughput (rows/s) and peak memory (MB) by scale, per contender."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = sorted(figures.get("throughput", []), key=lambda e: e["target_rows"])
    names = ["floor", "ours", "rest_api_parquet", "rest_api"]
    styles = {"floor": "k--o", "ours": "C0-o", "rest_api_parquet": "C1-s", "rest_api": "C3-^"}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in names:
        points = [
            (e["items"] or e["target_rows"], dig(e, "contenders", name, "median"))
            for e in scales
            if dig(e, "contenders", name, "median", "seconds") is not None
        ]
        if not points:
            continue
        label = dig(scales[0], "contenders", name, "label") or name
        xs = [p[0] for p in points]
        left.plot(xs, [p[1]["rows_per_second"] for p in points], styles[name], label=label)
        right.plot(xs, [p[1]["peak_rss_mb"] for p in points], styles[name], label=label)
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_xlabel("rows (items of the paged lists)")
        axis.grid(True, which="both", alpha=0.3)
    left.set_yscale("log")
    left.set_ylabel("rows per second (median)")
    left.set_title("Throughput, extract to load")
    right.set_ylabel("peak resident memory, MB (median)")
    right.set_title("Peak memory of the process")
    right.axhline(PEAK_MB_MAX, color="grey", linestyle=":", linewidth=1)
    right.text(
        right.get_xlim()[0], PEAK_MB_MAX, f" target {PEAK_MB_MAX:g} MB", va="bottom", fontsize=8, color="grey"
    )
    left.legend(fontsize=8, loc="lower left")
    machine = figures.get("machine", {})
    fig.suptitle(
        f"platform-sync bench, {figures.get('generated_at', '')[:10]}, {machine.get('cores')} cores, "
        f"medians of {figures.get('settings', {}).get('runs')} runs",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------- markdown


def markdown(figures: Mapping[str, Any]) -> str:
    machine = figures["machine"]
    settings = figures["settings"]
    scales = sorted(figures.get("throughput", []), key=lambda e: e["target_rows"])
    lines = [
        "# platform-sync benchmark",
        "",
        f"Measured {figures['generated_at'][:10]} on {machine['cores']} cores ({machine['cpu_model'] or 'unknown CPU'}, "
        f"{machine['memory_gb']} GB), Python {machine['python']}, dlt {figures['versions']['dlt']}, "
        f"DuckDB {figures['versions']['duckdb']}; commit {figures['git']['commit']}"
        f"{' (with uncommitted changes in sources/pipelines/sandbox)' if figures['git']['dirty'] else ''}. "
        f"`{figures['command'].strip()}` ({figures['mode']} mode) took {figures['duration_seconds'] / 60:.1f} min. "
        f"Load average {figures['load_average']['start']} at the start, {figures['load_average'].get('end')} at the end: "
        "other work shares this machine, so the headline figures are ratios of runs measured side by side, and "
        f"every figure is the median of {settings['runs']} runs unless it says otherwise.",
        "",
        "## Headline",
        "",
        "| target | figure | met |",
        "|---|---|---|",
    ]
    for target in figures.get("targets", []):
        met = {True: "yes", False: "**no**", None: "not measured"}[target["met"]]
        lines.append(f"| {target['id']} | {target['text']} | {met} |")
    lines += ["", "![throughput and memory by scale](chart.png)", ""]
    lines += _throughput_section(figures, scales)
    lines += _memory_section(scales)
    lines += _models_section(scales)
    lines += _rate_limit_section(figures.get("rate_limits"))
    lines += _method_section(figures, scales)
    return "\n".join(lines) + "\n"


def _throughput_section(figures: Mapping[str, Any], scales: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Throughput: full sync of the paged lists, rate limits off",
        "",
        "Rows are the items of the paged list endpoints loaded into DuckDB (root tables; the child tables our "
        "source and rest_api also write are counted apart). Time is extract to load, in the process of the run, "
        "without interpreter start-up. Ratios are taken run by run (each run measures every contender back to "
        "back under the same load) and the median of those is shown.",
        "",
        "| scale | world scale | rows | rows incl. child tables | pages | contender | median s | min-max s | rows/s | "
        "extract / normalize / load s | peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in scales:
        for name in ("ours", "floor", "rest_api_parquet", "rest_api"):
            contender = dig(entry, "contenders", name)
            if not contender or contender["median"]["seconds"] is None:
                continue
            med = contender["median"]
            steps = med.get("steps", {})
            step_text = " / ".join(
                _fmt(steps.get(s), 1) for s in ("extract", "normalize", "load") if s in steps
            )
            if name == "floor":
                step_text = f"fetch {_fmt(steps.get('fetch'), 1)} / read_json {_fmt(steps.get('load'), 1)}"
            spread = contender["seconds"]
            runs = f" ({contender['runs']} run{'s' if contender['runs'] != 1 else ''})"
            lines.append(
                f"| {_scale_name(entry)} | {entry['world_scale']:,} | {_rows(med['items'])} | {_rows(med['rows'])} | "
                f"{_rows(entry['recording']['pages'])} | {contender['label']}{runs if contender['runs'] != settings_runs(figures) else ''} | "
                f"{_fmt(med['seconds'], 1)} | {_fmt(spread['min'], 1)}-{_fmt(spread['max'], 1)} | "
                f"{_rows(med['rows_per_second'])} | {step_text} | {_fmt(med['peak_rss_mb'], 0)} |"
            )
    lines += [
        "",
        "| scale | ours / floor | rest_api (defaults) / ours | rest_api (parquet) / ours | same rows everywhere |",
        "|---|---|---|---|---|",
    ]
    for entry in scales:
        ratios = entry["ratios"]
        lines.append(
            f"| {_scale_name(entry)} | {_fmt(dig(ratios, 'ours_over_floor', 'median'))}x | "
            f"{_fmt(dig(ratios, 'rest_api_over_ours', 'median'))}x | "
            f"{_fmt(dig(ratios, 'rest_api_parquet_over_ours', 'median'))}x | "
            f"{'yes' if entry['same_data']['equal'] else 'no: ' + str(entry['same_data']['items_by_contender'])} |"
        )
    lines += [
        "",
        "The server: the sandbox built these pages (recording pass, bare httpx with "
        f"{figures['settings']['extract_workers']} threads) at:",
        "",
    ]
    for entry in scales:
        rec = entry["recording"]
        floor_fetch = dig(entry, "contenders", "floor", "median", "steps", "fetch")
        lines.append(
            f"- {_scale_name(entry)}: {_rows(rec['pages'])} pages ({rec['bytes'] / 1e6:,.0f} MB) in {_fmt(rec['seconds'], 1)} s, "
            f"{_fmt(rec['pages_per_second'], 0)} pages/s (recorded {rec['date'][:10]}"
            f"{', reused from bench/work/pages' if rec.get('reused') else ''}); the same pages from the page server: "
            f"{_fmt(floor_fetch, 1)} s ({_fmt(ratio(rec['seconds'], floor_fetch), 1)}x faster). "
            f"Page server CPU per run: ours {_fmt(dig(entry, 'page_server', 'cpu_seconds_per_run', 'ours'), 1)} s; "
            f"pages the page server had to fetch from the sandbox during measured runs: "
            f"{entry['page_server']['misses_during_measured_runs']}."
        )
    lines += [
        "",
        "Against the live sandbox every contender would wait for the world: its pages/s above are the ceiling "
        "for all of them, so the contenders read recorded pages to show their own cost.",
        "",
    ]
    return lines


def settings_runs(figures: Mapping[str, Any]) -> int:
    return int(figures["settings"]["runs"])


def _memory_section(scales: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Memory",
        "",
        "Peak resident memory (`ru_maxrss`) of the sync's process, median of the runs; the step in which the "
        "sampled peak fell (RSS sampled every 0.1 s).",
        "",
        "| scale | ours: list resources | peak during | ours: top-up of the other resources | rest_api (parquet) | floor |",
        "|---|---|---|---|---|---|",
    ]
    for entry in scales:
        ours = dig(entry, "contenders", "ours") or {}
        steps = sorted(set(ours.get("peak_step", [])))
        lines.append(
            f"| {_scale_name(entry)} | {_fmt(dig(ours, 'median', 'peak_rss_mb'), 0)} MB | {', '.join(steps) or '-'} | "
            f"{_fmt(dig(entry, 'models', 'topup', 'peak_rss_mb'), 0)} MB | "
            f"{_fmt(dig(entry, 'contenders', 'rest_api_parquet', 'median', 'peak_rss_mb'), 0)} MB | "
            f"{_fmt(dig(entry, 'contenders', 'floor', 'median', 'peak_rss_mb'), 0)} MB |"
        )
    lines.append("")
    return lines


def _models_section(scales: list[dict[str, Any]]) -> list[str]:
    if not any(entry.get("models") for entry in scales):
        return []
    lines = [
        "## Models: `dbt build`",
        "",
        "On the DuckDB file of the last measured sync at each scale, completed by a second sync of the resources "
        "that are not paged lists (sale details for the first sale ids referenced, capped; product campaigns and "
        "partners; events; deliveries; top posts; webhook origins), `dbt build` (`pipelines.models.run_models`) "
        "runs several times.",
        "",
        "| scale | raw rows (list resources + top-up) | DuckDB file MB | dbt build median s | min-max s | nodes | ok |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in scales:
        models = entry.get("models")
        if not models:
            continue
        spread = models["models"]["seconds"]
        raw_rows = (dig(entry, "contenders", "ours", "median", "rows") or 0) + (models["topup"]["rows"] or 0)
        lines.append(
            f"| {_scale_name(entry)} | {_rows(raw_rows)} | {_fmt(models['database_mb'], 0)} | "
            f"{_fmt(spread['median'], 1)} | {_fmt(spread['min'], 1)}-{_fmt(spread['max'], 1)} | "
            f"{models['models']['nodes'] or '-'} | "
            f"{'yes' if models['models']['ok'] else 'no: ' + ', '.join(models['models']['failed_nodes'][:5])} |"
        )
    with_models = [e for e in scales if e.get("models")]
    if len(with_models) > 1:
        a = with_models[0]["models"]["models"]["seconds"]["median"]
        b = with_models[-1]["models"]["models"]["seconds"]["median"]
        lines += [
            "",
            f"`dbt build` at {_scale_name(with_models[-1])} / {_scale_name(with_models[0])}: {_fmt(ratio(b, a))}x "
            f"for {with_models[-1]['target_rows'] / with_models[0]['target_rows']:g}x the rows.",
        ]
    lines.append("")
    return lines


def _rate_limit_section(limits: Mapping[str, Any] | None) -> list[str]:
    if not limits:
        return []
    med = limits["median"]
    first = limits["runs"][0]
    bound = first["bound"]
    lines = [
        "## Request economy with rate limits on",
        "",
        f"World scale {limits['world_scale']:,}, sandbox and client time scale {limits['time_scale']:g} (a limit of "
        f"30/minute becomes 30 per {60 / limits['time_scale']:g} s). A full sync of every resource with the defaults "
        "(sale details up to `sales_max_requests` = 5000), then a run with nothing new on the same pipeline folder "
        "and DuckDB file. The bound is the slowest rate-limited operation's requests divided by its rate; the "
        "sandbox's token buckets start full, so the burst-aware bound subtracts one window's worth.",
        "",
        f"| figure | median of {len(limits['runs'])} run(s) |",
        "|---|---|",
        f"| bound: {bound['operation']} requests / rate | {_fmt(med['bound_seconds'], 1)} s "
        f"({bound['requests']} requests at {bound['limit_per_window']} per {bound['window_seconds']:g} s) |",
        f"| full sync wall time | {_fmt(med['full_seconds'], 1)} s |",
        f"| wall time / bound | {_fmt(med['wall_over_bound'], 3)}x (burst-aware bound: {_fmt(med['wall_over_burst_bound'], 3)}x) |",
        f"| 429 answers (full + incremental, worst run) | {med['rate_limited']} |",
        f"| requests, full / incremental | {_rows(med['full_requests'])} / {_rows(med['incremental_requests'])} |",
        f"| incremental / full, time | {_fmt(None if med['incremental_time_share'] is None else 100 * med['incremental_time_share'], 1)}% |",
        f"| incremental / full, requests | {_fmt(None if med['incremental_request_share'] is None else 100 * med['incremental_request_share'], 1)}% |",
        "",
        "Requests by operation in the first run (full / incremental):",
        "",
        "| operation | full | incremental | bound if alone, s |",
        "|---|---|---|---|",
    ]
    full_ops = first["full"]["requests_by_operation"]
    incremental_ops = first["incremental"]["requests_by_operation"]
    for operation in sorted(set(full_ops) | set(incremental_ops)):
        lines.append(
            f"| {operation} | {full_ops.get(operation, 0)} | {incremental_ops.get(operation, 0)} | "
            f"{_fmt(dig(first, 'bounds_by_operation', operation, 'seconds'), 1)} |"
        )
    lines.append("")
    return lines


def _method_section(figures: Mapping[str, Any], scales: list[dict[str, Any]]) -> list[str]:
    settings = figures["settings"]
    return [
        "## Method",
        "",
        f"- Scales are sales-equivalent rows: the items of the paged lists ({', '.join(settings['list_resources'])}). "
        f"The sandbox world of scale N (N sales) holds about {settings['items_per_sale']} N such items (lesson comments "
        "N/2, fiscal documents ~0.47 N, subscriptions N/5, attendees ~N/11, transfers N/30, ...), so the world scale is "
        "rows / "
        + f"{settings['items_per_sale']}. Sale details (one request per sale) and the per-product, per-event "
        "and per-delivery lookups are not paged lists: the throughput runs leave them out (our sync runs with "
        "`resources=` the list resources); the top-up before the models reads them, sale details for the first "
        f"{settings['full_sync_sales_cap']} sale ids referenced (`sale_ids`, `sales_max_requests`).",
        "- Pages: the sandbox (rate limits off) sits behind `bench/pageserver.py`, which records each page the first "
        "time it is asked for and then serves it from memory (a request is its method, path and sorted query, "
        "date-times cut to their date). The recording pass fetches every listing once; measured runs are then served "
        "without the sandbox, so they show the pipelines' own cost. Recorded pages are kept in `bench/work/pages/` "
        "(keyed by seed, scale and a hash of `sandbox/`) and reused by later benchmarks.",
        f"- Every measured run is a fresh process (`python -m bench.worker`) with its own DuckDB file and dlt "
        f"pipelines folder, working folder the repository (so `.dlt/config.toml` applies: `[extract] workers = "
        f"{settings['extract_workers']}`). The client's own pacing is off (`rate_limit_time_scale` = 1e6) since the "
        "sandbox enforces no limits here.",
        "- Ours: `pipelines.platform_pipeline.sync(make_pipeline(...), resources=<the list resources>)`: pydantic "
        "validation, dlt extract, normalize to parquet, merge into DuckDB.",
        "- rest_api: `dlt.sources.rest_api.rest_api_source` with one resource per listing (same paths and query, "
        "`page_number` paginator on `page`/`pages` from 1, `itemsPerPage` = 100, bearer auth, `data_selector` "
        "`items`), into DuckDB: with dlt's defaults (append, `insert_values`, resources one after another), and with "
        '`loader_file_format="parquet"`. The default loader takes hours at a million rows, so it runs only up to '
        f"{settings['rest_api_default_max_rows']:,} rows and {settings['rest_api_default_runs']} time(s) per scale.",
        f"- Floor: httpx, one pooled client, one thread per resource ({settings['extract_workers']} threads, like "
        "dlt's extract pool running our resources), fetch + `json.loads` every page + write it to a file; then "
        "DuckDB `read_json` of those files with `unnest(items, recursive := true)` into one table per resource (no "
        "child tables, no types beyond DuckDB's inference).",
        "- Memory: `ru_maxrss` of the run's process (checked against psutil sampling of the process and its "
        "children from the parent).",
        "- Rate limits: against the live sandbox with its limits on; requests and 429s from `/sandbox/stats`.",
        "",
    ]
