"""The summary and the markdown of `bench/shapes.py`: per kind of read, the worst shape, and a table of
every run's reads that its shape is about."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.shape_worlds import KINDS

IN_FLIGHT_TARGET = 8.0
DETAILS_TARGET = 1.15
MIN_REQUESTS = 20  # fewer requests than this make no figure of in flight
BURST_SHARE = 0.25
CONTENDERS = ("ours", "rest_api")


def _rows(results: Sequence[Mapping[str, Any]], contender: str) -> list[dict[str, Any]]:
    """Every focus operation of every run of `contender`, with its shape and time scale."""
    rows = []
    for result in results:
        run = result["runs"].get(contender)
        if not run:
            continue
        for operation, figure in run["operations"].items():
            if figure["focus"] and figure["requests"] >= MIN_REQUESTS:
                rows.append(
                    {
                        "shape": result["shape"],
                        "time_scale": result["time_scale"],
                        "operation": operation,
                        "stopped": run["stopped"],
                        "load_average": run["load_average"]["before"][0],
                        **figure,
                    }
                )
    return rows


def _brief(row: Mapping[str, Any] | None, key: str) -> dict[str, Any] | None:
    if row is None:
        return None
    names = ("shape", "time_scale", "operation", "requests", "in_flight", "allowed_in_flight", "of_bound")
    return {"figure": row[key], **{name: row[name] for name in names}, "stopped": row["stopped"]}


def _limit_binds(row: Mapping[str, Any]) -> bool:
    """Whether the read's time is the limit's: it allows fewer than `IN_FLIGHT_TARGET` in flight, and the
    sandbox bucket's first burst (a window's limit, spent at once) is at most `BURST_SHARE` of the
    requests (else the span is the burst's and the latency's, not the rate's)."""
    return (
        row["allowed_in_flight"] < IN_FLIGHT_TARGET
        and bool(row["of_bound"])
        and row["limit_per_minute"] <= BURST_SHARE * row["spent"]
    )


def summary(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per contender and kind of read: the lowest in flight where the limit allows `IN_FLIGHT_TARGET` or
    more, the highest span / bound where the limit binds (`_limit_binds`); the sale details' highest
    span / bound where it binds; whether the issue's two targets are met by our sync."""
    out: dict[str, Any] = {}
    for contender in CONTENDERS:
        rows = _rows(results, contender)
        if not rows:
            continue
        kinds: dict[str, Any] = {}
        for kind in KINDS:
            of_kind = [row for row in rows if row["kind"] == kind]
            free = [row for row in of_kind if row["allowed_in_flight"] >= IN_FLIGHT_TARGET]
            bound = [row for row in of_kind if _limit_binds(row)]
            kinds[kind] = {
                "worst_in_flight": _brief(min(free, key=lambda r: r["in_flight"], default=None), "in_flight"),
                "worst_of_bound": _brief(max(bound, key=lambda r: r["of_bound"], default=None), "of_bound"),
            }
        details = [row for row in rows if row["operation"] == "sale_details" and _limit_binds(row)]
        worst_details = max(details, key=lambda r: r["of_bound"], default=None)
        lows = [k["worst_in_flight"]["figure"] for k in kinds.values() if k["worst_in_flight"]]
        out[contender] = {
            "kinds": kinds,
            "sale_details": _brief(worst_details, "of_bound"),
            # None: not measured (no read of the kind where the limit allows 8, no sale details)
            "in_flight_target_met": min(lows) >= IN_FLIGHT_TARGET if lows else None,
            "details_target_met": worst_details["of_bound"] <= DETAILS_TARGET if worst_details else None,
        }
    return out


def _number(value: Any, digits: int = 2) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _worst(brief: Mapping[str, Any] | None, key: str) -> str:
    if brief is None:
        return "-"
    figure = f"{brief['figure']:.2f}" + ("x" if key == "of_bound" else "")
    note = " (stopped)" if brief["stopped"] else ""
    return f"**{figure}** {brief['shape']} ts {brief['time_scale']:g} `{brief['operation']}`{note}"


def summary_table(document: Mapping[str, Any]) -> list[str]:
    """The worst shape per kind of read, ours beside dlt's rest_api."""
    found = document.get("summary") or {}
    lines = [
        "| kind of read | ours: lowest in flight (limit allows >= 8) | rest_api: same "
        "| ours: highest span/bound (the limit binds) | rest_api: same |",
        "|---|---|---|---|---|",
    ]
    for kind in KINDS:
        cells = []
        for key in ("worst_in_flight", "worst_of_bound"):
            for contender in CONTENDERS:
                cells.append(_worst(found.get(contender, {}).get("kinds", {}).get(kind, {}).get(key), key))
        lines.append(f"| {kind} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |")
    for contender in CONTENDERS:
        details = found.get(contender, {}).get("sale_details")
        if details:
            lines.append("")
            lines.append(
                f"Sale details, worst span against the bound, {contender}: {_worst(details, 'of_bound')} "
                f"({details['requests']:,} requests, {details['in_flight']:.2f} in flight)."
            )
    ours = found.get("ours")
    if ours:
        verdicts = {True: "met", False: "NOT met", None: "not measured"}
        lines += [
            "",
            f"Targets (ours): >= 8 in flight on every kind of read the limits allow: "
            f"{verdicts[ours['in_flight_target_met']]}; sale details within {DETAILS_TARGET}x of the "
            f"bound: {verdicts[ours['details_target_met']]}.",
        ]
    return lines


def runs_table(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every run's focus operations, ours and rest_api on adjacent lines."""
    lines = [
        "| shape | time scale | operation (kind) | contender | requests | span s | in flight | allowed "
        "| bound s | span/bound | run s | load (1 min) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for result in results:
        focus = [op for run in result["runs"].values() for op, f in run["operations"].items() if f["focus"]]
        for operation in dict.fromkeys(focus):
            for contender in CONTENDERS:
                run = result["runs"].get(contender)
                figure = (run or {}).get("operations", {}).get(operation)
                if run is None or figure is None:
                    continue
                seconds = f"{run['seconds']:.0f}" + (" stopped" if run["stopped"] else "")
                load = f"{run['load_average']['before'][0]:.1f}/{run['load_average']['after'][0]:.1f}"
                sampled = " (sampled)" if result["sampled"] else ""
                lines.append(
                    f"| {result['shape']} | {result['time_scale']:g}{sampled} "
                    f"| `{operation}` ({figure['kind']}) | {contender} | {figure['requests']:,} "
                    f"| {_number(figure['span'], 1)} | {_number(figure['in_flight'])} "
                    f"| {_number(figure['allowed_in_flight'], 1)} | {_number(figure['bound'], 1)} "
                    f"| {_number(figure['of_bound'])} | {seconds} | {load} |"
                )
    return lines


def markdown(document: Mapping[str, Any]) -> str:
    git = document.get("git_at_start", {})
    at_end = document.get("git_at_end", {}).get("code_digest", "-")
    machine = document.get("machine", {})
    lines = [
        "# Requests in flight over world shapes (issue 45)",
        "",
        f"Measured {document.get('measured')} by `python -m bench.shapes` on {machine.get('cores')} cores "
        f"({machine.get('cpu_model')}), repository at commit {git.get('commit')}"
        f"{' with sources/, pipelines/ or sandbox/ changed' if git.get('dirty') else ''}; the sync's code: "
        f"{document.get('code_label') or document.get('code') or 'the working tree'} (digest "
        f"{git.get('code_digest')} at start, {at_end} at end); "
        f"dlt {document.get('versions', {}).get('dlt')}. Sandbox faults: `{document.get('faults')}`.",
        "",
        "In flight = requests x the mean latency (0.14 s) / span (first request to last answer at the "
        "sandbox). Allowed = the operation's rate at the sandbox, at the time scale, x 0.14 s. Bound = the "
        "requests that spent the limit's budget (answered neither 429 nor 5xx) / that rate. A run stopped "
        "at its cap is measured on what it did until then; time scale 1 is sampled so. Load: the machine's "
        "1-minute load average before/after the run. The worst in flight is taken where the limit allows "
        "8 or more; the worst span/bound where the limit binds: it allows fewer than 8 in flight and the "
        "sandbox bucket's first burst (a window's limit at once) is at most a quarter of the requests. "
        f"Reads of fewer than {MIN_REQUESTS} requests are left out.",
        "",
        "## The worst shape per kind of read",
        "",
        *summary_table(document),
        "",
        "## Every run",
        "",
        *runs_table(document.get("results", [])),
        "",
    ]
    for result in document.get("results", []):
        for contender, run in result["runs"].items():
            if run.get("log_tail"):
                lines += [f"{result['shape']} ts {result['time_scale']:g} {contender} failed:", "```"]
                lines += [run["log_tail"], "```", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Rebuild the summary and the markdown of a `shapes.json` (`python -m bench.shapes_report FILE`)."""
    import json
    import sys
    from pathlib import Path

    path = Path((argv if argv is not None else sys.argv[1:])[0])
    document = json.loads(path.read_text())
    document["summary"] = summary(document["results"])
    path.write_text(json.dumps(document, indent=2) + "\n")
    path.with_suffix(".md").write_text(markdown(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
