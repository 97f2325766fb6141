"""The table printed at the end of a sync: rows per table, requests, time, and what went wrong."""

from __future__ import annotations

import sys
from typing import TextIO

from pipelines.sync.coverage import coverage_lines
from pipelines.sync.deletions import deletion_summary
from pipelines.sync.platform_pipeline import SyncResult
from pipelines.sync.progress import ResourceLine
from sources.platform.departures import Quarantined
from sources.platform.freshness import freshness_lines
from sources.platform.resources import STREAMS
from sources.platform.run_budget import split_line

# The setting a resource takes its parents or ids from (`.dlt/config.toml`, [sources.platform]): empty, the
# resource asks nothing, and the summary says so rather than leaving it out (issue 51).
CONFIGURED_BY = {
    "events": "event_ids",
    "event_attendees": "event_ids",
    "community_top_posts": "community_ids",
    "community_commenters": "community_ids",
    "enrollments": "schools",
    "deliveries": "schools",
}


def print_summary(result: SyncResult, out: TextIO = sys.stdout, *, status: int | None = None) -> None:
    """The summary on stdout; its last line agrees with the exit status (`status`, when known)."""
    print("", file=out)
    print(f"{'table':40} {'rows loaded':>12}", file=out)
    for table, count in result.rows.items():
        print(f"{table:40} {count:>12,}", file=out)
    for line in nothing_loaded_lines(result):
        print(line, file=out)
    print(f"{'total':40} {sum(result.rows.values()):>12,}", file=out)
    print("", file=out)
    print(f"{'operation':40} {'requests':>12}", file=out)
    for operation, count in sorted(result.requests.items()):
        print(f"{operation:40} {count:>12,}", file=out)
    print(f"{'total':40} {sum(result.requests.values()):>12,}", file=out)
    print(split_line(result.report.requests_by_purpose()), file=out)
    if result.report.budget is not None:
        for line in result.report.budget.lines():
            print(line, file=out)
    for operation, (limited, foreign) in sorted(result.report.rate_limited.items()):
        print(
            f"{operation}: {limited:,} answered 429, {foreign:,} of them from another client of this "
            "account (the pace was kept; the others slowed it down and it climbed back)",
            file=out,
        )
    print("", file=out)
    steps = ", ".join(f"{step} {seconds:.1f}s" for step, seconds in result.seconds.items())
    print(f"time: {steps}", file=out)
    if (passes := result.extra.get("checkpoints", 0)) > 1:
        print(f"loaded in {passes} checkpoints (checkpoint_requests sale details each)", file=out)
    for resource, reason in sorted(result.report.not_due.items()):
        print(f"{resource}: not due ({reason})", file=out)
    if result.report.not_due:
        print(
            "resources not due keep their tables as last loaded (scan_budget_share, rescan_hours); "
            "`platform-sync sync --rescan` reads them now.",
            file=out,
        )
    if lines := freshness_lines(result.freshness):
        print("freshness (table _platform_freshness):", file=out)
        for line in lines:
            print(f"  {line}", file=out)
    for line in coverage_lines(result.coverage):
        print(line, file=out)
    if result.retired:
        _print_retired(result, out)
    if deleted := deletion_summary(result.deleted):
        print(deleted, file=out)
    if (clock := result.report.run_clock) and (skew := clock.skew_line()):
        print(skew, file=out)
    # the reasons are said once per cause on stderr (`pipelines/sync/messages.py`)
    for resource in result.report.skipped:
        print(f"SKIPPED {resource}", file=out)
    for resource in result.report.failed:
        print(f"FAILED {resource}", file=out)
    for warning in result.report.warnings:
        print(f"warning: {warning}", file=out)
    _print_departures(result, out)
    if status == 1:
        print("the run FAILED (exit status 1): the reasons are on stderr.", file=out)
    elif result.is_partial:
        print(
            "the run was PARTIAL (exit status 3): the resources above were not fully loaded, all others "
            "were; the reasons are on stderr.",
            file=out,
        )


def nothing_loaded_lines(result: SyncResult) -> list[str]:
    """A line for each resource of the run that loaded no row, and why: nothing configured for it, or
    nothing new in the requests it made (the resources not due, skipped or failed are said below)."""
    loaded = {table.split("__")[0] for table, rows in result.rows.items() if rows}
    report = result.report
    said = set(report.not_due) | set(report.skipped) | set(report.failed)
    lines = []
    for row in result.freshness:
        name = str(row["table_name"])
        if name in loaded or name in said or name not in STREAMS:
            continue
        asked = result.requests.get(STREAMS[name].operation, 0)
        if not asked and name in CONFIGURED_BY:
            why = f"nothing configured: `{CONFIGURED_BY[name]}` is empty in [sources.platform]"
        elif not asked:
            why = "nothing to ask in this run"
        else:
            why = f"nothing new in {asked:,} request{'s' if asked != 1 else ''}"
        lines.append(f"{name:40} {0:>12}  ({why})")
    return lines


def _print_retired(result: SyncResult, out: TextIO) -> None:
    """The ids the API answered 404 for in `retire_after_not_found` runs: no longer requested."""
    counts: dict[str, int] = {}
    for row in result.retired:
        counts[row["kind"]] = counts.get(row["kind"], 0) + 1
    kinds = ", ".join(f"{count:,} {kind}" for kind, count in sorted(counts.items()))
    now = len(result.report.retired_now)
    print(
        f"retired ids (the API answers 404; no longer requested; table _platform_retired_ids): {kinds}"
        f" ({now:,} retired by this run)",
        file=out,
    )


def _print_departures(result: SyncResult, out: TextIO) -> None:
    """What the API sent that the spec does not document (loaded all the same), and the records that
    could not be keyed (not loaded: quarantined)."""
    departures = result.report.departures
    if lines := departures.summary():
        print("the API departed from its spec (the records loaded; table _platform_departures):", file=out)
        for line in lines:
            print(f"  {line}", file=out)
    quarantined = departures.quarantined()
    if quarantined:
        counts: dict[str, int] = {}
        for item in quarantined:
            counts[item.resource] = counts.get(item.resource, 0) + 1
        for resource, count in sorted(counts.items()):
            noun = "record" if count == 1 else "records"
            print(
                f"QUARANTINED {resource}: {count} {noun} without a usable key were not loaded "
                f"(table _platform_quarantine, e.g. {_first_reason(quarantined, resource)})",
                file=out,
            )


def _first_reason(quarantined: list[Quarantined], resource: str) -> str:
    return next(item.reason for item in quarantined if item.resource == resource)


def print_interrupted(
    step: str,
    lines: list[ResourceLine],
    tables: list[str],
    status: int,
    out: TextIO = sys.stdout,
    kept: str | None = None,
) -> None:
    """What an interrupted sync had done: rows read and requests made per resource, the tables loaded,
    and what its finished checkpoints kept (`kept`, `pipelines/sync/checkpoints.py`)."""
    print("", file=out)
    print(f"{'resource':40} {'rows read':>12} {'requests':>12}", file=out)
    for line in lines:
        print(f"{line.resource:40} {line.rows:>12,} {line.requests:>12,}", file=out)
    print(f"tables loaded by this run: {', '.join(tables) or 'none'}", file=out)
    if kept:
        print(kept, file=out)
    if step == "extract":
        print("rows read in the extract step were not loaded: the next run reads them again.", file=out)
    else:
        print(
            f"interrupted in the {step or 'first'} step: the next run loads what this one left first.",
            file=out,
        )
    print(f"the run was INTERRUPTED (exit status {status}).", file=out)
