"""The benchmark's report: the targets checked against the figures, a Markdown page and a chart.

Everything here is computed from `figures.json` alone, so a report can be rebuilt from its figures
(`python -m bench.report bench/results/figures.json`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bench.stats import dig, ratio
from bench.tolerance import TOLERANCE_MAX, tolerance_ratio

FLOOR_RATIO_MAX = 2.0
REST_API_RATIO_MIN = 3.0
BOUND_RATIO_MAX = 1.10
INCREMENTAL_SHARE_MAX = 0.05
PEAK_MB_MAX = 500.0
PEAK_GROWTH_MAX = 1.5

# Contenders shown, in this order (figures of contenders since removed are ignored).
ORDER = ("ours", "ours_rows", "floor", "rest_api_parquet", "rest_api")


def _fmt(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}x"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _rows(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _scale_name(entry: Mapping[str, Any]) -> str:
    rows = entry["target_rows"]
    return f"{rows / 1e6:g}M" if rows >= 1_000_000 else f"{rows / 1e3:g}k"


def _scales(figures: Mapping[str, Any]) -> list[dict[str, Any]]:
    return sorted(figures.get("throughput", []), key=lambda e: e["target_rows"])


def _median_ratio(entry: Mapping[str, Any], name: str) -> float | None:
    value = dig(entry, "ratios", name, "median")
    return None if value is None else float(value)


def _runs_text(count: int) -> str:
    return f"{count} run{'s' if count != 1 else ''}"


# ------------------------------------------------------------------------------------------- targets


def targets(figures: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each target of the issue with the figure that decides it; `met` is None when not measured."""
    scales = _scales(figures)
    out: list[dict[str, Any]] = []

    def add(target_id: str, text: str, value: float | None, met: bool | None, limit: str) -> None:
        out.append({"id": target_id, "text": text, "value": value, "limit": limit, "met": met})

    if scales:
        largest, smallest = scales[-1], scales[0]
        name = _scale_name(largest)
        value = _median_ratio(largest, "ours_over_floor")
        add(
            "floor_ratio",
            f"sync time / fetch-plus-load floor at {name} rows: "
            f"{_fmt(value)}x (target <= {FLOOR_RATIO_MAX:g}x)",
            value,
            None if value is None else value <= FLOOR_RATIO_MAX,
            f"<= {FLOOR_RATIO_MAX}",
        )
        measured = [e for e in scales if _median_ratio(e, "rest_api_over_ours") is not None]
        if measured:
            entry = measured[-1]
            value = _median_ratio(entry, "rest_api_over_ours")
            add(
                "rest_api_ratio",
                f"generic rest_api (dlt defaults) time / sync time at {_scale_name(entry)} rows: "
                f"{_fmt(value)}x (target >= {REST_API_RATIO_MIN:g}x)",
                value,
                None if value is None else value >= REST_API_RATIO_MIN,
                f">= {REST_API_RATIO_MIN}",
            )
        value = _median_ratio(largest, "rest_api_parquet_over_ours")
        add(
            "rest_api_parquet_ratio",
            f"generic rest_api with parquet time / sync time at {name} rows: {_fmt(value)}x "
            f"(the same target against a rest_api tuned like ours)",
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
            growth = ratio(peak, dig(smallest, "contenders", "ours", "median", "peak_rss_mb"))
            times = largest["target_rows"] / smallest["target_rows"]
            add(
                "memory_growth",
                f"peak memory at {name} / at {_scale_name(smallest)} rows: {_fmt(growth)}x "
                f"(target < {PEAK_GROWTH_MAX:g}x for {times:g}x the rows)",
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
            f"rate-limited full sync, wall time / bound: {_fmt(value, 3)}x (target <= {BOUND_RATIO_MAX:g}x)",
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
                f"incremental run with nothing new, {what}: {_pct(value)} of a full run's "
                f"(target < {100 * INCREMENTAL_SHARE_MAX:g}%)",
                value,
                None if value is None else value < INCREMENTAL_SHARE_MAX,
                f"< {INCREMENTAL_SHARE_MAX}",
            )
    value = tolerance_ratio(figures)
    if figures.get("tolerance"):
        entry = figures["tolerance"]
        add(
            "tolerance",
            f"sync on pages drifting at {entry['drift']:g} / on exact pages at {_scale_name(entry)} rows: "
            f"{_fmt(value, 3)}x (target <= {TOLERANCE_MAX:g}x: the tolerant path costs at most 10%)",
            value,
            None if value is None else value <= TOLERANCE_MAX,
            f"<= {TOLERANCE_MAX}",
        )
    return out


# --------------------------------------------------------------------------------------------- chart

STYLES = {
    "floor": "k--o",
    "ours": "C0-o",
    "ours_rows": "C2-d",
    "rest_api_parquet": "C1-s",
    "rest_api": "C3-^",
}


def chart(figures: Mapping[str, Any], path: Path) -> None:
    """Throughput (rows/s) and peak memory (MB) by scale, per contender."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scales = _scales(figures)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.4))
    for name in ORDER:
        points = [
            (e.get("items") or e["target_rows"], e["contenders"][name])
            for e in scales
            if dig(e, "contenders", name, "median", "seconds") is not None
        ]
        if not points:
            continue
        label = points[0][1]["label"]
        xs = [p[0] for p in points]
        left.plot(xs, [p[1]["median"]["rows_per_second"] for p in points], STYLES[name], label=label)
        right.plot(xs, [p[1]["median"]["peak_rss_mb"] for p in points], STYLES[name], label=label)
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_xlabel("rows (items of the paged lists)")
        axis.grid(True, which="both", alpha=0.3)
    left.set_yscale("log")
    right.set_yscale("log")
    from matplotlib.ticker import FuncFormatter

    for axis in (left, right):
        axis.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:,.0f}"))
        # a range within one decade (memory: 300-900 MB) would show no number at all otherwise
        axis.yaxis.set_minor_formatter(
            FuncFormatter(lambda value, _: f"{value:,.0f}" if f"{value:.0f}"[0] in "25" else "")
        )
    left.set_ylabel("rows per second (median)")
    left.set_title("Throughput, extract to load")
    right.set_ylabel("peak resident memory, MB (median)")
    right.set_title("Peak memory of the run's process")
    right.axhline(PEAK_MB_MAX, color="grey", linestyle=":", linewidth=1)
    right.annotate(
        f"target {PEAK_MB_MAX:g} MB",
        (0.01, PEAK_MB_MAX),
        xycoords=("axes fraction", "data"),
        va="bottom",
        fontsize=8,
        color="grey",
    )
    handles, labels = left.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    machine = figures.get("machine", {})
    fig.suptitle(
        f"platform-sync bench, {str(figures.get('generated_at', ''))[:10]}, {machine.get('cores')} cores; "
        "medians of the runs (see report.md for run counts)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------------------------ markdown


def markdown(figures: Mapping[str, Any]) -> str:
    scales = _scales(figures)
    lines = _intro(figures)
    lines += _headline(figures, scales)
    lines += _throughput_section(figures, scales)
    lines += _memory_section(scales)
    lines += _models_section(scales)
    lines += _tolerance_section(figures)
    lines += _rate_limit_section(figures.get("rate_limits"))
    lines += _method_section(figures)
    return "\n".join(lines) + "\n"


def _intro(figures: Mapping[str, Any]) -> list[str]:
    machine, versions, git = figures["machine"], figures["versions"], figures["git"]
    load = figures["load_average"]
    dirty = " with uncommitted changes in sources/, pipelines/ or sandbox/" if git["dirty"] else ""
    end = figures.get("git_at_end") or git
    if end["commit"] != git["commit"]:
        dirty += f" (commit {end['commit']} when it ended: the code changed during the benchmark)"
    return [
        "# platform-sync benchmark",
        "",
        f"Measured **{figures['generated_at'][:10]}** on **{machine['cores']} cores** "
        f"({machine['cpu_model'] or 'CPU model unknown'}, {machine['memory_gb']} GB RAM), "
        f"Python {machine['python']}, dlt {versions['dlt']}, DuckDB {versions['duckdb']}, "
        f"commit {git['commit']}{dirty}.",
        f"`{figures['command'].strip()}` ({figures['mode']} mode) took "
        f"{figures['duration_seconds'] / 60:.1f} min. Load average {load['start']} at the start and "
        f"{load.get('end')} at the end: the machine is shared, so absolute times are noisy. The headline "
        "figures are ratios of runs measured back to back, and every figure is a median of runs (the "
        "tables say how many).",
        "",
    ]


def _headline(figures: Mapping[str, Any], scales: list[dict[str, Any]]) -> list[str]:
    lines = ["## Headline", ""]
    for entry in scales:
        parts = [
            f"our sync takes **{_fmt(_median_ratio(entry, 'ours_over_floor'))}x** the fetch-plus-load floor"
        ]
        value = _median_ratio(entry, "rest_api_over_ours")
        if value is not None:
            parts.append(f"the generic rest_api with dlt's defaults takes **{_fmt(value)}x** our time")
        value = _median_ratio(entry, "rest_api_parquet_over_ours")
        if value is not None:
            parts.append(f"rest_api with parquet files takes **{_fmt(value)}x** our time")
        peak = dig(entry, "contenders", "ours", "median", "peak_rss_mb")
        parts.append(f"peak memory {_fmt(peak, 0)} MB")
        lines.append(f"- **{_scale_name(entry)} rows**: " + "; ".join(parts) + ".")
    limits = figures.get("rate_limits")
    if limits:
        med = limits["median"]
        lines.append(
            f"- **Rate limits on**: a full sync takes **{_fmt(med['wall_over_bound'], 2)}x** the bound the "
            f"limits impose, with {med['rate_limited']} answers 429; a run with nothing new takes "
            f"**{_pct(med['incremental_time_share'])}** of the time "
            f"and **{_pct(med['incremental_request_share'])}**"
            " of the requests of a full run."
        )
    lines += ["", "| target | figure | met |", "|---|---|---|"]
    for target in figures.get("targets", []):
        met = {True: "yes", False: "**no**", None: "not measured"}[target["met"]]
        lines.append(f"| {target['id']} | {target['text']} | {met} |")
    lines += ["", "![throughput and memory by scale](chart.png)", ""]
    return lines


def _steps_text(name: str, steps: Mapping[str, float | None]) -> str:
    if name == "floor":
        return f"fetch {_fmt(steps.get('fetch'), 1)}, read_json {_fmt(steps.get('load'), 1)}"
    return " / ".join(_fmt(steps.get(step), 1) for step in ("extract", "normalize", "load"))


def _throughput_section(figures: Mapping[str, Any], scales: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Throughput: the paged lists, rate limits off",
        "",
        "Rows are the items of the paged list endpoints loaded into DuckDB (root tables); our source and "
        "rest_api also write child tables, counted in the next column. Time is extract to load inside the "
        "run's process, without interpreter start-up. Ratios are taken run by run (each run measures every "
        "contender back to back, under the same load), then the median of those.",
        "",
        "| scale | rows | rows with child tables | contender | runs | median s | min-max s | rows/s "
        "| extract / normalize / load s | peak MB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for entry in scales:
        for name in ORDER:
            contender = dig(entry, "contenders", name)
            if not contender or contender["median"]["seconds"] is None:
                continue
            med, spread = contender["median"], contender["seconds"]
            lines.append(
                f"| {_scale_name(entry)} | {_rows(med['items'])} "
                f"| {_rows(med['rows'])} | {contender['label']} "
                f"| {contender['runs']} | {_fmt(med['seconds'], 1)} | {_fmt(spread['min'], 1)}-"
                f"{_fmt(spread['max'], 1)} | {_rows(med['rows_per_second'])} | "
                f"{_steps_text(name, med['steps'])} | {_fmt(med['peak_rss_mb'], 0)} |"
            )
    lines += [
        "",
        "| scale | world scale | pages | ours / floor | rest_api defaults / ours | rest_api parquet / ours "
        "| ours without Arrow / ours | same rows for all |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in scales:
        same = entry["same_data"]
        lines.append(
            f"| {_scale_name(entry)} | {entry['world_scale']:,} | {_rows(entry['recording']['pages'])} "
            f"| {_x(_median_ratio(entry, 'ours_over_floor'))} "
            f"| {_x(_median_ratio(entry, 'rest_api_over_ours'))} "
            f"| {_x(_median_ratio(entry, 'rest_api_parquet_over_ours'))} "
            f"| {_x(_median_ratio(entry, 'ours_rows_over_ours'))} "
            f"| {'yes' if same['equal'] else 'no: ' + json.dumps(same['items_by_contender'])} |"
        )
    lines += ["", "Where our sync's time goes (median step times, share of extract + normalize + load):", ""]
    for entry in scales:
        steps = dig(entry, "contenders", "ours", "median", "steps") or {}
        total = sum(v for v in steps.values() if v) or None
        shares = ", ".join(
            f"{step} {_pct(ratio(steps.get(step), total))}" for step in ("extract", "normalize", "load")
        )
        lines.append(f"- {_scale_name(entry)}: {shares}.")
    lines += ["", "The effect of the Arrow path (`arrow_pages`, on by default), median step times:", ""]
    for entry in scales:
        rows_only = dig(entry, "contenders", "ours_rows", "median", "steps")
        steps = dig(entry, "contenders", "ours", "median", "steps") or {}
        if not rows_only:
            continue
        lines.append(
            f"- {_scale_name(entry)}: every row normalized by dlt, extract / normalize / load "
            f"{_steps_text('ours_rows', rows_only)} s; flat pages as Arrow tables "
            f"{_steps_text('ours', steps)} s; the run takes "
            f"{_x(_median_ratio(entry, 'ours_rows_over_ours'))} as long without them."
        )
    lines += [
        "",
        "What bounds each step. Extract: fetching, parsing and validating every record (pydantic) and "
        "packing flat pages into Arrow. The resources run in dlt's thread pool but share the "
        "interpreter's lock; the pages of the large flat lists (from a walk's fourth page on) are "
        "parsed, validated and packed by one helper process on the second core "
        "(`sources/platform/fastpath/offload.py`). While the lists with child tables are read, the sync's "
        "process is the bound; after them, the helper decoding the fiscal documents and lesson comments. "
        "Normalize: only the records with lists (subscriptions, attendees) go through dlt's row-by-row "
        "normalizer, for their child tables, in worker processes (two on two cores: "
        "`pipelines/parallelism.py`; dlt hands each worker whole files, so the larger of the two tables "
        "bounds the step); the flat tables' files are loaded as extracted. Handing dlt the child tables "
        "as Arrow tables too is not possible in dlt 1.31: a nested table written during extract fails "
        "the extract's metrics (`Extract._compute_metrics` looks up the `resource` of every table with "
        "files, and a nested table may not have one). Load: DuckDB's merge (staging, dedup by the "
        "version column, delete and insert).",
        "",
        f"The server. The sandbox built these pages in the recording pass (bare httpx, "
        f"{figures['settings']['extract_workers']} threads); the page server then served the same pages:",
        "",
    ]
    for entry in scales:
        rec = entry["recording"]
        fetch = dig(entry, "contenders", "floor", "median", "steps", "fetch")
        reused = f", pages reused from an earlier benchmark: {rec['date'][:10]}" if rec.get("reused") else ""
        lines.append(
            f"- {_scale_name(entry)}: the sandbox served "
            f"{_rows(rec['pages'])} pages ({rec['bytes'] / 1e6:,.0f} MB) "
            f"in {_fmt(rec['seconds'], 1)} s, {_fmt(rec['pages_per_second'], 0)} pages/s{reused}; the page "
            f"server in {_fmt(fetch, 1)} s "
            f"({_x(ratio(fetch, rec['seconds']))} the sandbox's time). Page server CPU "
            f"during one run of ours: {_fmt(dig(entry, 'page_server', 'cpu_seconds_per_run', 'ours'), 1)} s; "
            f"requests it had to pass to the sandbox during measured runs: "
            f"{entry['page_server']['misses_during_measured_runs']}."
        )
    lines += [
        "",
        "Against the live sandbox every contender waits for the world to build pages (its pages/s above "
        "is a ceiling for all of them), which is why the measured runs read recorded pages.",
        "",
    ]
    return lines


def _memory_section(scales: list[dict[str, Any]]) -> list[str]:
    lines = [
        "## Memory",
        "",
        "Peak memory of the run, median of the runs: the process's resident memory (`ru_maxrss`), or, when "
        "higher, the sampled memory of the process and its children together (the page-decoding helper "
        "during the extract, the normalize workers; their proportional set sizes, so that the pages a "
        "forked worker shares with the process count once); the step during which the sampled peak fell "
        "(sampled every 0.1 s, less often while a sample of several processes is slow); the peak of each "
        "step of our sync.",
        "",
        "| scale | ours | peak in | ours: extract / normalize / load peak MB | top-up of the other resources "
        "| rest_api parquet | floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in scales:
        ours = dig(entry, "contenders", "ours") or {}
        by_step = (
            (dig(entry, "runs") or [{}])[-1].get("ours", {}).get("memory", {}).get("peak_mb_by_step", {})
        )
        lines.append(
            f"| {_scale_name(entry)} | {_fmt(dig(ours, 'median', 'peak_rss_mb'), 0)} MB "
            f"| {', '.join(sorted(set(ours.get('peak_step', [])))) or '-'} "
            f"| {' / '.join(_fmt(by_step.get(s), 0) for s in ('extract', 'normalize', 'load'))} "
            f"| {_fmt(dig(entry, 'models', 'topup', 'peak_rss_mb'), 0)} MB "
            f"| {_fmt(dig(entry, 'contenders', 'rest_api_parquet', 'median', 'peak_rss_mb'), 0)} MB "
            f"| {_fmt(dig(entry, 'contenders', 'floor', 'median', 'peak_rss_mb'), 0)} MB |"
        )
    lines.append("")
    return lines


def _models_section(scales: list[dict[str, Any]]) -> list[str]:
    with_models = [e for e in scales if e.get("models")]
    if not with_models:
        return []
    lines = [
        "## Models: `dbt build`",
        "",
        "On the DuckDB file of the last measured sync at each scale, completed by a second sync of the "
        "resources that are not paged lists (sale details of the first sale ids referenced, capped; product "
        "campaigns and partners; events; deliveries; top posts; webhook origins), `dbt build` "
        "(`pipelines.models.run_models`) runs as many times as the table says.",
        "",
        "| scale | raw rows | DuckDB MB | runs | dbt build median s | min-max s | nodes | all ok |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for entry in with_models:
        models = entry["models"]
        spread = models["models"]["seconds"]
        raw_rows = (dig(entry, "contenders", "ours", "median", "rows") or 0) + (models["topup"]["rows"] or 0)
        ok = "yes" if models["models"]["ok"] else "no: " + ", ".join(models["models"]["failed_nodes"][:5])
        lines.append(
            f"| {_scale_name(entry)} | {_rows(raw_rows)} | {_fmt(models['database_mb'], 0)} "
            f"| {models['models']['runs']} | {_fmt(spread['median'], 1)} "
            f"| {_fmt(spread['min'], 1)}-{_fmt(spread['max'], 1)} "
            f"| {models['models']['nodes'] or '-'} | {ok} |"
        )
    if len(with_models) > 1:
        first, last = with_models[0], with_models[-1]
        growth = ratio(
            last["models"]["models"]["seconds"]["median"], first["models"]["models"]["seconds"]["median"]
        )
        lines += [
            "",
            f"`dbt build` at {_scale_name(last)} takes {_fmt(growth)}x its time at {_scale_name(first)}, "
            f"for {last['target_rows'] / first['target_rows']:g}x the rows.",
        ]
    lines.append("")
    return lines


def _rate_limit_section(limits: Mapping[str, Any] | None) -> list[str]:
    if not limits:
        return []
    med = limits["median"]
    first = limits["runs"][0]
    bound = first["bound"]
    window = 60 / limits["time_scale"]
    limit = bound["limit_per_window"]
    steps = med.get("full_steps") or {}
    full_steps = " / ".join(_fmt(steps.get(step), 1) for step in ("extract", "normalize", "load"))
    projected_ratio, projected_share = _real_time_projection(limits)
    lines = [
        "## Request economy with rate limits on",
        "",
        f"World scale {limits['world_scale']:,}; sandbox and client time scale {limits['time_scale']:g} "
        f"({limit} requests a minute become {limit} per {window:g} s). A full sync of every resource with "
        "the default settings (sale details up to `sales_max_requests` = 5000) against the sandbox with "
        "its limits on, then a run with nothing new on the same pipeline folder and DuckDB file. The bound "
        "is the slowest rate-limited operation's requests divided by its rate; the sandbox's buckets start "
        "full, so the burst-aware bound subtracts one window's worth.",
        "",
        f"| figure | median of {_runs_text(len(limits['runs']))} |",
        "|---|---|",
        f"| bound: {bound['operation']} requests / rate | {_fmt(med['bound_seconds'], 1)} s "
        f"({bound['requests']} requests at {bound['limit_per_window']} per {bound['window_seconds']:g} s) |",
        f"| full sync, wall time | {_fmt(med['full_seconds'], 1)} s |",
        f"| wall time / bound | {_fmt(med['wall_over_bound'], 3)}x (burst-aware bound: "
        f"{_fmt(med['wall_over_burst_bound'], 3)}x) |",
        f"| of which extract / normalize / load | {full_steps} s |",
        f"| extract (where the requests are) / bound | {_x(med.get('extract_over_bound'))} |",
        f"| 429 answers, full and incremental runs (worst run) | {med['rate_limited']} |",
        f"| requests, full / incremental | {_rows(med['full_requests'])} "
        f"/ {_rows(med['incremental_requests'])} |",
        f"| incremental / full, time | {_pct(med['incremental_time_share'])} |",
        f"| incremental / full, requests | {_pct(med['incremental_request_share'])} |",
        "",
        f"Projection, not measured: at the API's real time scale (1) the bound and the rate-governed extract "
        f"grow {limits['time_scale']:g} times while normalize, load and the rest of the run do not, so the "
        f"same full sync would take about {_x(projected_ratio)} the bound and the run with nothing new about "
        f"{_pct(projected_share)} of its time (the request share does not depend on the time scale).",
        "",
        *_not_due_text(first["incremental"]),
        "Requests by operation in the first run:",
        "",
        "| operation | full | incremental | its own bound, s |",
        "|---|---|---|---|",
    ]
    full_ops = first["full"]["requests_by_operation"]
    incremental_ops = first["incremental"]["requests_by_operation"]
    for operation in sorted(set(full_ops) | set(incremental_ops)):
        lines.append(
            f"| {operation} | {full_ops.get(operation, 0)} | {incremental_ops.get(operation, 0)} "
            f"| {_fmt(dig(first, 'bounds_by_operation', operation, 'seconds'), 1)} |"
        )
    lines.append("")
    return lines


def _not_due_text(incremental: Mapping[str, Any]) -> list[str]:
    """Which full-scan resources the run with nothing new left unread (figures from before `rescan_hours`
    existed do not say, and get no sentence)."""
    if "not_due" not in incremental:
        return []
    not_due = incremental["not_due"]
    if not not_due:
        return ["The run with nothing new read every resource again, the full-scan ones included.", ""]
    return [
        f"The run with nothing new skipped {len(not_due)} full-scan resources (which the API gives only "
        f"whole), as their last complete scan is younger than `rescan_hours`: {', '.join(not_due)}. Its "
        "requests are those of the other resources.",
        "",
    ]


def _real_time_projection(limits: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """Wall time / bound and incremental / full time if the windows were not shortened: the extract
    (paced by the limits) scales with the time scale, the rest of the run does not."""
    med = limits["median"]
    scale = float(limits["time_scale"])
    extract = (med.get("full_steps") or {}).get("extract")
    if not extract or not med.get("bound_seconds") or med.get("full_seconds") is None:
        return None, None
    fixed = med["full_seconds"] - extract
    full_real = extract * scale + fixed
    incremental = (
        med["incremental_time_share"] * med["full_seconds"] if med["incremental_time_share"] else None
    )
    return full_real / (med["bound_seconds"] * scale), ratio(incremental, full_real)


def _tolerance_section(figures: Mapping[str, Any]) -> list[str]:
    entry = figures.get("tolerance")
    if not entry:
        return []
    runs = entry["ratios"]["drifting_over_exact"]["per_run"]
    departed = entry.get("departed_records")
    return [
        "## An API that departs from its spec",
        "",
        f"Our sync of the paged lists at {_scale_name(entry)} rows on the pages of a sandbox drifting at "
        f"{entry['drift']:g} ({f'{departed:,}' + ' departing records' if departed else 'departing records'}"
        ": nulls, unlisted values and fields, values of other types), against the same sync on the same "
        f"world's exact pages, in turns: {_fmt(entry['seconds']['drifting'], 1)} s against "
        f"{_fmt(entry['seconds']['exact'], 1)} s (median), **{_x(tolerance_ratio(figures))}** "
        f"(runs: {', '.join(_x(r) for r in runs)}; target <= {TOLERANCE_MAX:g}x). Items loaded: "
        f"{_rows(entry['items']['drifting'])} and {_rows(entry['items']['exact'])}.",
        "",
    ]


def _method_section(figures: Mapping[str, Any]) -> list[str]:
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
        f"{_runs_text(settings['runs'])} per scale, {settings['large_runs']} "
        f"from {settings['large_rows']:,} rows on.",
        "- **Ours**: `pipelines.platform_pipeline.sync(make_pipeline(...), resources=<list resources>)`: "
        "pages parsed with orjson, pydantic validation, then pages of flat models packed into Arrow tables "
        "with their row ids (dlt loads the extracted parquet files as they are), models with lists "
        "normalized by dlt into child tables; merge into "
        f"DuckDB with its memory limit{memory_limit}, one load job at a time, each merged table deduplicated "
        "by its version column (`dedup_sort`); writers buffering 1,000 rows per table; freed memory handed "
        "back to the system before the load step (`pipelines/memory.py`).",
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
        f"{_runs_text(settings['rest_api_default_runs'])} per scale; with parquet, "
        f"{_runs_text(settings['rest_api_large_runs'])} at the large scale.",
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


def main(argv: Sequence[str] | None = None) -> int:
    """Rebuild report.md and chart.png next to a figures.json."""
    path = Path((argv if argv is not None else sys.argv[1:])[0])
    figures = json.loads(path.read_text())
    figures["targets"] = targets(figures)
    chart(figures, path.parent / "chart.png")
    (path.parent / "report.md").write_text(markdown(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
