"""Sales coverage on the dashboard: the API cannot list sales, so the figures of the pages built on sales
count only the sales the sync found (`_platform_sales_coverage`, written after each sync by
`pipelines/sync/coverage.py`). Those pages say when coverage is partial and how to complete it; Data health
shows the counts by channel.
"""

from __future__ import annotations

from typing import Any

from dash import html

from dashboard.components import table
from dashboard.warehouse import Session

COVERAGE_TABLE = "_platform_sales_coverage"
CHANNEL_NAMES = {
    "subscriptions": "subscriptions (first invoice)",
    "fiscal_documents": "fiscal documents",
    "event_attendees": "event attendees",
    "order_bumps": "order bumps (main sale)",
    "webhooks": "webhooks",
    "sale_ids": "configured sale_ids",
    "all": "all channels",
}
HOW_TO_COMPLETE = (
    "To find the others, run `platform-sync webhooks serve` with `platform-sync webhooks load` beside "
    "the sync (the platform announces each sale), or list the sale ids you know in `sale_ids`."
)


def coverage_rows(session: Session, raw: str) -> dict[str, tuple[int, int, int]] | None:
    """(named, loaded, retired) by channel, or None when the sync has not recorded coverage yet."""
    if COVERAGE_TABLE not in session.tables(raw):
        return None
    rows = session.rows(f"select channel, named, loaded, retired from {raw}.{COVERAGE_TABLE}")
    return {str(channel): (int(named), int(loaded), int(retired)) for channel, named, loaded, retired in rows}


def partial_reasons(rows: dict[str, tuple[int, int, int]]) -> list[str]:
    """Why the known sales may not be all the account's sales (the rule of `pipelines/sync/coverage.py`)."""
    reasons = []
    if rows.get("webhooks", (0, 0, 0))[0] == 0:
        reasons.append(
            "no webhook announcement is loaded, so a sale with no subscription, fiscal document or "
            "attendee is never found"
        )
    named, loaded, retired = rows.get("all", (0, 0, 0))
    if (waiting := named - loaded - retired) > 0:
        reasons.append(f"{waiting:,} sales found are not fetched yet (sales_max_requests)")
    return reasons


def coverage_notice(session: Session, raw: str, account: str | None = None) -> html.Div | None:
    """The banner of a page whose figures depend on sales: None when coverage is complete as far as the
    sync can tell. `account`: the figures are several accounts', and this is the notice of one of them."""
    rows = coverage_rows(session, raw)
    element_id = f"coverage-notice-{account}" if account else "coverage-notice"
    whose = [html.Strong(f"Account {account}: ")] if account else []
    if rows is None:
        return html.Div(
            [
                *whose,
                html.Strong("Sales coverage is not recorded yet. "),
                f"The API cannot list sales; these figures count the sales the sync found. {HOW_TO_COMPLETE}",
            ],
            className="coverage",
            id=element_id,
        )
    reasons = partial_reasons(rows)
    if not reasons:
        return None
    loaded = rows.get("all", (0, 0, 0))[1]
    return html.Div(
        [
            *whose,
            html.Strong(
                f"Sales coverage is partial: these figures count the {loaded:,} sales the sync found. "
            ),
            f"The API cannot list sales, and {'; '.join(reasons)}. {HOW_TO_COMPLETE} ",
            html.A("Data health", href="/health"),
            " shows the sales found by channel.",
        ],
        className="coverage",
        id=element_id,
    )


def coverage_section(session: Session, raw: str) -> list[Any]:
    """Data health's part: the sales found by channel, and whether coverage is partial."""
    rows = coverage_rows(session, raw)
    if rows is None:
        missing = f"Sales coverage is not recorded yet ({raw}.{COVERAGE_TABLE} does not exist)."
        return [html.P(missing, id="coverage-not-recorded")]
    reasons = partial_reasons(rows)
    status = (
        f"Partial: {'; '.join(reasons)}. {HOW_TO_COMPLETE}"
        if reasons
        else "Every sale the channels name is loaded, and webhooks announce new ones."
    )
    order = list(CHANNEL_NAMES)
    table_rows = [
        (CHANNEL_NAMES.get(channel, channel), *counts)
        for channel, counts in sorted(
            rows.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)
        )
    ]
    columns = ["channel", "sale ids named", "loaded", "retired (unknown to the API)"]
    return [html.P(status, id="coverage-status"), table("table-coverage", columns, table_rows)]
