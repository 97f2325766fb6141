"""What a sync's outcome means for its caller: the exit status (0 loaded, 1 failed, 2 bad configuration, 3
partial) and the lines that say what went wrong, one per cause. The command line and each account's run
(`pipelines/accounts`) give the same verdict on the same outcome."""

from __future__ import annotations

from collections.abc import Sequence

from pipelines.sync.messages import grouped_causes
from pipelines.sync.platform_pipeline import SyncResult
from sources.platform.resources import STREAMS
from sources.platform_client.errors import REAUTHORIZE_HINT

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_PARTIAL = 0, 1, 2, 3


def sync_exit_status(result: SyncResult, resources: Sequence[str] | None) -> tuple[int, str | None]:
    """1 when the token was rejected or nothing that was due got loaded, 3 when some of it did, else 0;
    with what to tell the user when the run failed.

    A rejected token fails every resource that had not finished: a scheduler must see a failure, not a
    warning, and the user must authorize again."""
    report = result.report
    if any(REAUTHORIZE_HINT in reason for reason in report.failed.values()):
        return EXIT_FAILED, (
            "the access token was rejected (expired or revoked): authorize again with "
            "`platform-sync auth --code CODE`, or set SOURCES__PLATFORM__ACCESS_TOKEN."
        )
    due = [name for name in (resources or STREAMS) if name not in report.not_due]
    if due and all(name in report.failed or name in report.skipped for name in due):
        return EXIT_FAILED, "no resource was loaded."
    if (report.failed or report.skipped) and not _anything_read(result, due):
        # the resources that did not fail asked nothing (nothing configured: no event ids, no sale ids):
        # nothing was loaded, which a scheduler must see as a failure, not as a partial run
        return EXIT_FAILED, "nothing was loaded: every resource that had something to read failed."
    return (EXIT_PARTIAL if result.is_partial else EXIT_OK), None


def _anything_read(result: SyncResult, due: Sequence[str]) -> bool:
    """Whether some due resource that neither failed nor was skipped asked the API anything."""
    report = result.report
    return any(
        result.requests.get(STREAMS[name].operation, 0) > 0
        for name in due
        if name not in report.failed and name not in report.skipped
    )


def failure_lines(result: SyncResult, failure: str | None) -> list[str]:
    """What went wrong, one line per cause: a rejected token once (it fails every resource), then each
    other cause with the resources it failed or skipped."""
    report = result.report
    rejected = {name for name, reason in report.failed.items() if REAUTHORIZE_HINT in reason}
    lines = [f"FAILED: {failure}"] if rejected and failure else []
    others = {name: reason for name, reason in report.failed.items() if name not in rejected}
    return [*lines, *grouped_causes(others, "failed"), *grouped_causes(report.skipped, "skipped")]
