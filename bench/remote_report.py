"""The remote section's report (bench/remote.py): its figures as markdown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

FOREIGN_SHARE = 0.02


def fmt_number(value: float | None, pattern: str) -> str:
    return "n/a" if value is None else pattern.format(value)


def fmt_spread(values: Sequence[float] | None, pattern: str) -> str:
    return "n/a" if not values else f"{pattern.format(values[0])}-{pattern.format(values[1])}"


def _hidden_row(name: str, row: Mapping[str, Any]) -> str:
    return (
        f"| {name} | {row['seconds_without']:.2f} s | {row['seconds_with']:.2f} s | "
        f"{row['added_seconds']:.2f} s | {fmt_number(row['added_share'], '{:.0%}')} | "
        f"{row['requests']} | {fmt_number(row['in_flight'], '{:.1f}')} | "
        f"{fmt_number(row['server_in_flight'], '{:.1f}')} "
        f"({fmt_number(row['server_busy_seconds'], '{:.1f} s')}) |"
    )


def markdown(figures: Mapping[str, Any]) -> str:
    """The section's report."""
    lines = [
        "# Remote API benchmark (issue 27)",
        "",
        f"Generated {figures['generated_at']}; "
        f"command `{figures['command']}`; git {figures.get('git', {}).get('commit', '?')}.",
        "",
    ]
    latency = figures.get("latency")
    if latency:
        lists = latency["ours_lists"]
        lines += [
            f"## (a) {latency['latency_ms']:g} ms a request, rate limits on (time scale "
            f"{latency['time_scale']:g})",
            "",
            f"Paged lists at world scale {latency['lists_scale']}, {len(lists['pairs'])} pairs of runs "
            "(without, then with latency):",
            "",
            "| run | without latency | with latency | added | added share | requests | in flight "
            "(requests x latency / added) | in flight at the server (busy time) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for number, pair in enumerate(lists["pairs"], 1):
            lines.append(_hidden_row(f"our sync, paged lists, pair {number}", pair))
        lines.append(_hidden_row("dlt rest_api, same lists", latency["rest_api_lists"]))
        lines += [
            "",
            "The requests' phase of the same pairs (first request to last answer at the sandbox):",
            "",
            "| pair | without latency | with latency | added | in flight (requests x latency / added) |",
            "|---|---|---|---|---|",
        ]
        for number, pair in enumerate(lists["pairs"], 1):
            if "phase_added" in pair:
                lines.append(
                    f"| {number} | {pair['phase_without']:.2f} s | {pair['phase_with']:.2f} s | "
                    f"{pair['phase_added']:.2f} s | {fmt_number(pair['phase_in_flight'], '{:.1f}')} |"
                )
        lines += [
            "",
            f"Paged lists: median added time of the requests' phase "
            f"{fmt_number(lists['phase_added_median'], '{:.2f} s')} (spread "
            f"{fmt_spread(lists['phase_added_spread'], '{:.2f} s')}; 8 in flight allow "
            f"{lists['phase_added_allowed']:.2f} s): {fmt_number(lists['phase_in_flight_median'], '{:.1f}')} "
            "in flight by the formula; "
            f"{fmt_number(lists['in_flight_median'], '{:.1f}')} on the wall time "
            f"(spread {fmt_spread(lists['in_flight_spread'], '{:.1f}')}, {lists['in_flight_not_positive']} "
            "without a positive added time); "
            f"{fmt_number(lists['server_in_flight_median'], '{:.1f}')} at the sandbox "
            f"(spread {fmt_spread(lists['server_in_flight_spread'], '{:.1f}')}); added share median "
            f"{fmt_number(lists['added_share_median'], '{:.0%}')} "
            f"(spread {fmt_spread(lists['added_share_spread'], '{:.0%}')}).",
            "",
            f"Every resource at world scale {latency['world_scale']}, one pair:",
            "",
            "| run | without latency | with latency | added | added share | requests | in flight "
            "(requests x latency / added) | in flight at the server (busy time) |",
            "|---|---|---|---|---|---|---|---|",
            _hidden_row("our sync, every resource", latency["ours_full"]),
            "",
        ]
    foreign = figures.get("foreign")
    if foreign:
        lines += [
            f"## (b) 429s from another client, {foreign['share']:g} of requests (world scale "
            f"{foreign['world_scale']}, time scale {foreign['time_scale']:g})",
            "",
            "The sale details from their first request to their last answer, against the bound of the "
            "answers served: `window` (ceil(N/L)-1)·W, L at once then L more each window, the least time "
            "of a client that never sends more than L in any window (judged); `bucket` (N-L)·W/L, the "
            "sandbox's token bucket, full at the start; `nominal` N·W/L.",
            "",
            "| run | whole run | sale details served (429s) | first, last | span | window bound | over "
            "| bucket bound | over | nominal | over |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for label in ("without", "with"):
            run = foreign[label]
            d = run["details"]
            b, o = d["bounds"], d["over"]
            lines.append(
                f"| {label} | {run['seconds']:.1f} s | {d['served']} ({d['rate_limited']}) | "
                f"{fmt_number(d['first'], '{:.1f}')} s, {fmt_number(d['last'], '{:.1f}')} s | "
                f"{fmt_number(d['seconds'], '{:.1f} s')} | {b['window']:.1f} s | "
                f"{fmt_number(o['window'], 'x{:.3f}')} | "
                f"{b['bucket']:.1f} s | {fmt_number(o['bucket'], 'x{:.3f}')} | {b['nominal']:.1f} s | "
                f"{fmt_number(o['nominal'], 'x{:.3f}')} |"
            )
        lines += [
            "",
            "The whole sync against the sale details' window bound plus what the run without foreign 429s "
            "did besides them (lists before the first sale detail, the load after the last answer): "
            + ", ".join(
                f"{label} {foreign[label]['seconds']:.1f} s of {foreign[label]['whole_bound']:.1f} s, "
                f"{fmt_number(foreign[label]['over_whole_bound'], 'x{:.3f}')}"
                for label in ("without", "with")
            )
            + ".",
            "",
        ]
    load = figures.get("load_average", {})
    lines += [f"Load average (1, 5, 15 min) at start {load.get('start')}, at end {load.get('end')}.", ""]
    lines += ["## Targets", ""]
    for target in figures.get("targets", []):
        value = target["value"]
        shown = "n/a" if value is None else f"{value:.3g}"
        lines.append(f"- {'met' if target['met'] else 'NOT MET'}: {target['text']} ({shown})")
    return "\n".join(lines) + "\n"
