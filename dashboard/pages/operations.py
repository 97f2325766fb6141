"""Cash, Events, Learning & community: the pages about money out, people in rooms and students."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

from dashboard.components import (
    chart,
    count,
    hours,
    kpi,
    kpi_row,
    money,
    number,
    rate,
    section,
    series_by,
    table,
)
from dashboard.filters import Filters
from dashboard.labels import label
from dashboard.pages.base import MARTS, Page, by_month
from dashboard.warehouse import Session

NO_PRODUCT = (
    "Transfers, cash flow and fiscal documents are not per product: the product filter does not apply."
)


def cash(session: Session, filters: Filters) -> list[Any]:
    params: list[Any] = []
    where = by_month(filters).where("month_start", currency="currency", params=params)
    flow = session.rows(
        f"""
        select month_start, currency, net_sales_credited_amount, transfers_out_amount, net_cash_flow_amount,
            cumulative_balance_amount
        from {MARTS}.monthly_cash_flow where true{where} order by currency, month_start
        """,
        params,
    )
    flow_figure = go.Figure()
    cards = []
    for currency, points in series_by(flow).items():
        x = [r[0] for r in points]
        flow_figure.add_bar(x=x, y=[number(r[2]) for r in points], name=f"credited sales {currency}")
        flow_figure.add_bar(x=x, y=[-number(r[3]) for r in points], name=f"transfers out {currency}")
        flow_figure.add_scatter(
            x=x, y=[number(r[5]) for r in points], name=f"balance {currency}", mode="lines+markers"
        )
        cards += [
            kpi(
                f"kpi-cash-in-{currency}",
                "Credited sales",
                money(sum(number(r[2]) for r in points), currency),
            ),
            kpi(
                f"kpi-cash-out-{currency}",
                "Transfers out",
                money(sum(number(r[3]) for r in points), currency),
            ),
            _balance_card(currency, points[-1][0], points[-1][5], filters.sales_partial),
        ]
    flow_figure.update_layout(barmode="relative")
    params = []
    where = filters.where("cast(created_at as date)", currency="currency", params=params)
    transfers = session.rows(
        f"""
        select cast(date_trunc('month', created_at) as date), transfer_status, count(*), sum(transfer_amount)
        from {MARTS}.fct_transfers where true{where} group by 1, 2 order by 1, 2
        """,
        params,
    )
    transfer_figure = go.Figure()
    for status, points in series_by(transfers).items():
        transfer_figure.add_bar(x=[r[0] for r in points], y=[r[2] for r in points], name=label(status))
    transfer_figure.update_layout(barmode="stack", yaxis_title="transfers")
    params = []
    where = by_month(filters).where("month_start", currency="currency", params=params)
    # Sums of counts are cast back to integers: on PostgreSQL a sum of bigints is a numeric, which the
    # tables would show as 12.00 (tests/pipelines/sync/test_postgres_destination.py compares every page
    # with DuckDB's).
    documents = session.rows(
        f"""
        select month_start, document_status, cast(sum(count_documents) as bigint), sum(base_value_amount)
        from {MARTS}.fiscal_documents_status where true{where} group by 1, 2 order by 1, 2
        """,
        params,
    )
    document_figure = go.Figure()
    for status, points in series_by(documents).items():
        document_figure.add_bar(x=[r[0] for r in points], y=[r[2] for r in points], name=label(status))
    document_figure.update_layout(barmode="stack", yaxis_title="documents")
    return [
        kpi_row(cards),
        section("Monthly cash flow", chart("chart-cash-flow", flow_figure), note=NO_PRODUCT),
        section(
            "Transfers by status and month",
            chart("chart-transfers", transfer_figure),
            note="By the month the transfer was requested.",
        ),
        section(
            "Fiscal documents by status",
            chart("chart-fiscal-documents", document_figure),
            note="By emission month, each document's current status.",
        ),
    ]


def _balance_card(currency: str, month: Any, balance: Any, sales_partial: bool) -> Any:
    """The balance at the end of the last month: the account's balance only when every sale behind it
    was found; else said to be the balance of the sales found (issue 51: a negative balance of a partial
    coverage stood as the account's)."""
    if not sales_partial:
        return kpi(f"kpi-balance-{currency}", f"Balance end of {month:%b %Y}", money(balance, currency))
    return kpi(
        f"kpi-balance-{currency}",
        f"Balance of the sales found, end of {month:%b %Y}",
        money(balance, currency),
        "partial: not the account's balance, sales coverage is partial (see the notice)",
    )


# The attendee statuses the spec lists, as the events table's columns (each attendee has one).
ATTENDEE_STATUSES = ("confirmed", "presence_confirmed", "paid", "locked", "refunded")


def events(session: Session, filters: Filters) -> list[Any]:
    params: list[Any] = []
    where = filters.where("cast(event_starts_at as date)", params=params)
    by_status = ", ".join(f"cast(sum(count_{status}) as bigint)" for status in ATTENDEE_STATUSES)
    rows = session.rows(
        f"""
        select coalesce(event_title, event_id), cast(event_starts_at as date),
            cast(sum(count_attendees) as bigint), cast(sum(count_checked_in) as bigint),
            {by_status}, cast(sum(count_unlisted_status) as bigint)
        from {MARTS}.event_attendance where true{where}
        group by event_id, event_title, event_starts_at order by 2, 1
        """,
        params,
    )
    # The rate as the card shows it (it was 0.6889 here against 69.0% on the card), then each status.
    table_rows = [(*row[:4], rate(row[3] / row[2] if row[2] else None), *row[4:]) for row in rows]
    attendees = sum(int(r[2] or 0) for r in rows)
    checked_in = sum(int(r[3] or 0) for r in rows)
    figure = go.Figure()
    figure.add_bar(x=[r[0] for r in rows], y=[r[2] for r in rows], name="tickets sold (attendees)")
    figure.add_bar(x=[r[0] for r in rows], y=[r[3] for r in rows], name="checked in")
    figure.update_layout(barmode="group")
    return [
        kpi_row(
            [
                kpi("kpi-events", "Events", count(len(rows)), "starting in the period"),
                kpi("kpi-attendees", "Tickets sold", count(attendees), "attendees of these events"),
                kpi("kpi-checked-in", "Checked in", count(checked_in)),
                kpi("kpi-checkin-rate", "Check-in rate", rate(checked_in / attendees if attendees else None)),
            ]
        ),
        section(
            "Tickets sold and attendance by event",
            chart("chart-events", figure),
            table(
                "table-events",
                [
                    "event",
                    "starts",
                    "tickets sold",
                    "checked in",
                    "check-in rate",
                    *(f"status {label(status).lower()}" for status in ATTENDEE_STATUSES),
                    "status not in the spec",
                ],
                table_rows,
            ),
            note=(
                "Events starting in the period; the product and currency filters do not apply. Tickets "
                "sold are the attendees; the status columns count them by the status the platform gives "
                "each attendee (one each), so a ticket sold may be 'confirmed' rather than 'paid'."
            ),
        ),
    ]


def learning(session: Session, filters: Filters) -> list[Any]:
    account: list[Any] = []
    of_account = filters.where(None, params=account)  # the course marts are not dated: the account only
    courses = session.rows(
        f"""
        select coalesce(cast(course_id as varchar), '(course not recorded)'),
            cast(sum(count_comments) as bigint), cast(sum(count_answered) as bigint),
            cast(sum(count_unread) as bigint), max(last_comment_at)
        from {MARTS}.course_engagement where true{of_account} group by 1 order by 2 desc, 1
        """,
        account,
    )
    comments = sum(int(r[1] or 0) for r in courses)
    answered = sum(int(r[2] or 0) for r in courses)
    # The API says whether a comment was answered, not when: the marts time what the builds observed.
    observed, response_hours = session.rows(
        f"""
        select cast(sum(count_responses_observed) as bigint),
            sum(avg_observed_response_hours * count_responses_observed)
                / nullif(sum(count_responses_observed), 0)
        from {MARTS}.course_engagement where true{of_account}
        """,
        account,
    )[0]
    course_figure = go.Figure()
    course_figure.add_bar(x=[r[0] for r in courses], y=[r[2] for r in courses], name="answered")
    course_figure.add_bar(
        x=[r[0] for r in courses], y=[(r[1] or 0) - (r[2] or 0) for r in courses], name="not answered"
    )
    course_figure.update_layout(barmode="stack", xaxis_type="category", yaxis_title="comments")
    waiting = session.rows(
        f"""
        select course_id, lesson_id, count_comments - count_answered, count_comments, last_comment_at
        from {MARTS}.course_engagement where count_comments > count_answered{of_account}
        order by 3 desc, last_comment_at limit 20
        """,
        account,
    )
    params: list[Any] = []
    where = filters.where("snapshot_on", params=params)
    community = session.rows(
        f"""
        select snapshot_on, cast(community_id as varchar), top_posts_comments, top_posts_likes,
            count_commenting_members
        from {MARTS}.community_engagement where true{where} order by 2, 1
        """,
        params,
    )
    engagement = go.Figure()
    for community_id, points in series_by(community).items():
        engagement.add_bar(
            x=[r[0] for r in points], y=[r[2] for r in points], name=f"community {community_id}"
        )
    engagement.update_layout(barmode="group", xaxis_type="category", yaxis_title="comments on the top posts")
    top_posts = session.rows(
        f"""
        select community_id, snapshot_on, most_commented_post_title, most_commented_post_comments,
            top_posts_likes, count_commenting_members
        from {MARTS}.community_engagement where true{where} order by snapshot_on desc, 4 desc limit 20
        """,
        params,
    )
    return [
        kpi_row(
            [
                kpi("kpi-comments", "Lesson comments", count(comments), "all time"),
                kpi("kpi-answered", "Answered", count(answered)),
                kpi("kpi-answered-rate", "Answered rate", rate(answered / comments if comments else None)),
                kpi(
                    "kpi-response-time",
                    "Response time (observed)",
                    hours(response_hours),
                    f"average of {count(observed)} answer{'' if observed == 1 else 's'} seen arriving",
                ),
            ]
        ),
        section(
            "Lesson comments by course: answered or not",
            chart("chart-lesson-comments", course_figure),
            table(
                "table-waiting-lessons",
                ["course", "lesson", "not answered", "comments", "last comment"],
                waiting,
            ),
            note=(
                "All time: the marts count comments per lesson, and the lessons with the most comments "
                "waiting for an answer are listed. The API says whether a comment was answered, not "
                "when: the response time is from the build that first saw a comment unanswered to the "
                "first that saw it answered, as precise as the schedule of `platform-sync models`."
            ),
        ),
        section(
            "Community engagement",
            chart("chart-community", engagement),
            note="Snapshots taken in the period (comments on each community's top posts).",
        ),
        section(
            "Top posts",
            table(
                "table-top-posts",
                [
                    "community",
                    "snapshot",
                    "most commented post",
                    "comments",
                    "likes on top posts",
                    "members commenting",
                ],
                top_posts,
            ),
        ),
    ]


PAGES = (
    Page(
        "/cash",
        "Cash",
        cash,
        ("monthly_cash_flow", "fct_transfers", "fiscal_documents_status"),
        sales_figures=True,  # credited sales, hence the balance
    ),
    Page("/events", "Events", events, ("event_attendance",)),
    Page("/learning", "Learning & community", learning, ("course_engagement", "community_engagement")),
)
