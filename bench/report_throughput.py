"""The report's sections on the benchmark's first part: throughput, memory and `dbt build`, by scale."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from bench.report_figures import ORDER, median_ratio
from bench.report_format import fmt, fmt_pct, fmt_rows, fmt_x, scale_name
from bench.stats import dig, ratio


def steps_text(name: str, steps: Mapping[str, float | None]) -> str:
    if name == "floor":
        return f"fetch {fmt(steps.get('fetch'), 1)}, read_json {fmt(steps.get('load'), 1)}"
    return " / ".join(fmt(steps.get(step), 1) for step in ("extract", "normalize", "load"))


def throughput_section(figures: Mapping[str, Any], scales: list[dict[str, Any]]) -> list[str]:
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
                f"| {scale_name(entry)} | {fmt_rows(med['items'])} "
                f"| {fmt_rows(med['rows'])} | {contender['label']} "
                f"| {contender['runs']} | {fmt(med['seconds'], 1)} | {fmt(spread['min'], 1)}-"
                f"{fmt(spread['max'], 1)} | {fmt_rows(med['rows_per_second'])} | "
                f"{steps_text(name, med['steps'])} | {fmt(med['peak_rss_mb'], 0)} |"
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
            f"| {scale_name(entry)} | {entry['world_scale']:,} | {fmt_rows(entry['recording']['pages'])} "
            f"| {fmt_x(median_ratio(entry, 'ours_over_floor'))} "
            f"| {fmt_x(median_ratio(entry, 'rest_api_over_ours'))} "
            f"| {fmt_x(median_ratio(entry, 'rest_api_parquet_over_ours'))} "
            f"| {fmt_x(median_ratio(entry, 'ours_rows_over_ours'))} "
            f"| {'yes' if same['equal'] else 'no: ' + json.dumps(same['items_by_contender'])} |"
        )
    lines += ["", "Where our sync's time goes (median step times, share of extract + normalize + load):", ""]
    for entry in scales:
        steps = dig(entry, "contenders", "ours", "median", "steps") or {}
        total = sum(v for v in steps.values() if v) or None
        shares = ", ".join(
            f"{step} {fmt_pct(ratio(steps.get(step), total))}" for step in ("extract", "normalize", "load")
        )
        lines.append(f"- {scale_name(entry)}: {shares}.")
    lines += ["", "The effect of the Arrow path (`arrow_pages`, on by default), median step times:", ""]
    for entry in scales:
        rows_only = dig(entry, "contenders", "ours_rows", "median", "steps")
        steps = dig(entry, "contenders", "ours", "median", "steps") or {}
        if not rows_only:
            continue
        lines.append(
            f"- {scale_name(entry)}: every row normalized by dlt, extract / normalize / load "
            f"{steps_text('ours_rows', rows_only)} s; flat pages as Arrow tables "
            f"{steps_text('ours', steps)} s; the run takes "
            f"{fmt_x(median_ratio(entry, 'ours_rows_over_ours'))} as long without them."
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
        "`pipelines/sync/parallelism.py`; dlt hands each worker whole files, so the larger of the two tables "
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
            f"- {scale_name(entry)}: the sandbox served "
            f"{fmt_rows(rec['pages'])} pages ({rec['bytes'] / 1e6:,.0f} MB) "
            f"in {fmt(rec['seconds'], 1)} s, {fmt(rec['pages_per_second'], 0)} pages/s{reused}; the page "
            f"server in {fmt(fetch, 1)} s "
            f"({fmt_x(ratio(fetch, rec['seconds']))} the sandbox's time). Page server CPU "
            f"during one run of ours: {fmt(dig(entry, 'page_server', 'cpu_seconds_per_run', 'ours'), 1)} s; "
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


def memory_section(scales: list[dict[str, Any]]) -> list[str]:
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
            f"| {scale_name(entry)} | {fmt(dig(ours, 'median', 'peak_rss_mb'), 0)} MB "
            f"| {', '.join(sorted(set(ours.get('peak_step', [])))) or '-'} "
            f"| {' / '.join(fmt(by_step.get(s), 0) for s in ('extract', 'normalize', 'load'))} "
            f"| {fmt(dig(entry, 'models', 'topup', 'peak_rss_mb'), 0)} MB "
            f"| {fmt(dig(entry, 'contenders', 'rest_api_parquet', 'median', 'peak_rss_mb'), 0)} MB "
            f"| {fmt(dig(entry, 'contenders', 'floor', 'median', 'peak_rss_mb'), 0)} MB |"
        )
    lines.append("")
    return lines


def models_section(scales: list[dict[str, Any]]) -> list[str]:
    with_models = [e for e in scales if e.get("models")]
    if not with_models:
        return []
    lines = [
        "## Models: `dbt build`",
        "",
        "On the DuckDB file of the last measured sync at each scale, completed by a second sync of the "
        "resources that are not paged lists (sale details of the first sale ids referenced, capped; product "
        "campaigns and partners; events; deliveries; top posts; webhook origins), `dbt build` "
        "(`pipelines.dbt.runner.run_models`) runs as many times as the table says.",
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
            f"| {scale_name(entry)} | {fmt_rows(raw_rows)} | {fmt(models['database_mb'], 0)} "
            f"| {models['models']['runs']} | {fmt(spread['median'], 1)} "
            f"| {fmt(spread['min'], 1)}-{fmt(spread['max'], 1)} "
            f"| {models['models']['nodes'] or '-'} | {ok} |"
        )
    if len(with_models) > 1:
        first, last = with_models[0], with_models[-1]
        growth = ratio(
            last["models"]["models"]["seconds"]["median"], first["models"]["models"]["seconds"]["median"]
        )
        lines += [
            "",
            f"`dbt build` at {scale_name(last)} takes {fmt(growth)}x its time at {scale_name(first)}, "
            f"for {last['target_rows'] / first['target_rows']:g}x the rows.",
        ]
    lines.append("")
    return lines
