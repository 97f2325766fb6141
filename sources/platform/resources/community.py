"""Community: snapshots of each configured community's most commented posts and of its commenters
(spec 4.14, 4.18)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from sources.platform.fastpath.batches import Batch, Rows
from sources.platform.fastpath.interleave import FAN_PAGES_WAITING, FAN_WALKS_AT_ONCE
from sources.platform.models import CommunityMember, CommunityPost
from sources.platform.resources.context import SourceContext
from sources.platform.resources.page_lists import PageList
from sources.platform.resources.stream import BIGINT_KEY, Stream, WriteDisposition
from sources.platform_client.errors import NotFoundError, PermissionDeniedError

# Each snapshot row says which community, over how many days, and when it was taken.
SNAPSHOT_COLUMNS = {
    "community_id": BIGINT_KEY,
    "days": BIGINT_KEY,
    "snapshot_at": {"data_type": "timestamp", "timezone": True, "nullable": False},
}
# A snapshot is new rows (its key holds its time), yet merged on that key rather than appended: dlt loads an
# appended table and each of its child tables as separate jobs, each its own transaction, so a load that
# failed midway (a full disk, CI 2026-12-06) left the newest snapshot's commenters without their posts until
# the rerun; merged, a snapshot and its child rows are one SQL job, one transaction
# (`pipelines/sync/load_failure.py`), and a package loaded twice cannot make a snapshot appear twice.
SNAPSHOT_DISPOSITION: WriteDisposition = "merge"


def _communities(
    ctx: SourceContext,
) -> Iterator[tuple[int, dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """Each configured community: its id, its path and query parameters, and the columns its snapshot
    rows get."""
    days = ctx.settings.community_days
    for community_id in ctx.settings.community_ids:
        extra = {"community_id": community_id, "days": days, "snapshot_at": ctx.snapshot_at}
        yield community_id, {"communityId": community_id}, {"days": days}, extra


def snapshot_time(ctx: SourceContext) -> datetime:
    """When this run's snapshots were taken: our clock's run start, or the API's time when the two
    disagree by more than `clock_tolerance_seconds` (`runclock.RunClock.stamp`), so a snapshot taken
    while our clock was wrong never wins "latest" once it is fixed."""
    clock = ctx.report.run_clock
    return ctx.snapshot_at if clock is None else clock.stamp()


def read_top_posts(ctx: SourceContext, stream: Stream) -> Iterator[Rows]:
    """The five most commented posts of each community, stamped with this run's snapshot time."""
    communities = {community_id: (path, extra) for community_id, path, _, extra in _communities(ctx)}
    params = {"days": ctx.settings.community_days}
    answers = ctx.client.each(stream.operation, communities, lambda cid: communities[cid][0], params)
    for community_id, future in answers:  # several communities at once
        extra = communities[community_id][1]
        try:
            answer = future.result()
        except NotFoundError:
            continue  # "no posts with comments to show": an empty snapshot, not an error
        except PermissionDeniedError as exc:
            ctx.report.warn(f"community {community_id} was not read: {exc}")
            continue
        extra["snapshot_at"] = snapshot_time(ctx)  # after an answer: the API's clock is known
        yield ctx.parse(stream, answer.get("items") or [], extra)


def read_commenters(ctx: SourceContext, stream: Stream) -> Iterator[Batch]:
    """The members who commented in each community, stamped with this run's snapshot time, several
    communities' lists at once (`SourceContext.pages`)."""
    communities = {community: (path, params, extra) for community, path, params, extra in _communities(ctx)}

    def page_list(community_id: int) -> PageList:
        path, params, extra = communities[community_id]

        def columns() -> dict[str, Any]:  # after an answer: the API's clock is known
            return {**extra, "snapshot_at": snapshot_time(ctx)}

        return PageList(params, path, columns, parent=community_id)

    def ended(community_id: int, error: BaseException | None) -> None:
        if error is not None:
            ctx.report.warn(f"community {community_id} was not read: {error}")

    # A snapshot appended as it comes: a record twice (the list moved under the walk) would be a
    # duplicate row, so each commenter comes once (`distinct`).
    yield from ctx.pages(
        stream,
        [page_list(community_id) for community_id in communities],
        distinct=True,
        parallel=FAN_WALKS_AT_ONCE,
        depth=FAN_PAGES_WAITING,
        tolerated=(PermissionDeniedError,),
        on_end=ended,
    )


COMMUNITY_TOP_POSTS = Stream(
    "community_top_posts",
    "top_commented_posts",
    CommunityPost,
    ("community_id", "id", "snapshot_at"),
    SNAPSHOT_DISPOSITION,
    read=read_top_posts,
    extra_columns=SNAPSHOT_COLUMNS,
    description="The five most commented posts of each community, a snapshot appended every rescan_hours.",
    full_scan=True,
    fans_out=True,
)
COMMUNITY_COMMENTERS = Stream(
    "community_commenters",
    "list_community_commenters",
    CommunityMember,
    ("community_id", "id", "snapshot_at"),
    SNAPSHOT_DISPOSITION,
    read=read_commenters,
    extra_columns=SNAPSHOT_COLUMNS,
    description="Members who commented in each community, a snapshot appended every rescan_hours.",
    full_scan=True,
    fans_out=True,
)
