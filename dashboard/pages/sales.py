"""Overview, Subscriptions, Products & affiliates: the pages about what was sold."""

from __future__ import annotations

from collections.abc import Collection
from decimal import Decimal
from typing import Any

import plotly.graph_objects as go
from dash import html

from dashboard.components import (
    change,
    chart,
    count,
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
from dashboard.pages.base import MARTS, Page, by_month, month_to_date, newest_day, spec_enum
from dashboard.warehouse import Session

# A sale counts on its payment day (its creation day when the API gave none), a refund on its refund
# day: the same rules as marts.daily_sales_overview and `make demo`'s headline figures.
PAID_DAY = "coalesce(paid_on, created_on)"
REFUND_DAY = "cast(coalesce(refunded_at, updated_at) as date)"
NO_METHOD = "(none)"  # a paid sale the API sent without a payment method


def sales_kpis(session: Session, filters: Filters) -> dict[str, dict[str, Any]]:
    """Per currency: paid sales, gross and net revenue, average ticket, refunds, refund rate.

    The refund rate is the share of the period's paid sales that have been refunded; refunds are the
    sales refunded in the period (by refund day), with their amount.
    """
    params: list[Any] = []
    paid_where = filters.where(PAID_DAY, product="product_id", currency="currency", params=params)
    paid = session.rows(
        f"""
        select currency, count(*), sum(gross_amount), sum(net_revenue_amount),
            sum(case when is_refunded then 1 else 0 end)
        from {MARTS}.fct_sales where was_paid{paid_where} group by currency
        """,
        params,
    )
    params = []
    refund_where = filters.where(REFUND_DAY, product="product_id", currency="currency", params=params)
    refunds = session.rows(
        f"""
        select currency, count(*), sum(refunded_amount)
        from {MARTS}.fct_sales where is_refunded{refund_where} group by currency
        """,
        params,
    )
    figures: dict[str, dict[str, Any]] = {}
    empty = {"paid_sales": 0, "gross": Decimal(0), "net": Decimal(0), "refunded_of_paid": 0}
    for currency, paid_sales, gross, net, refunded_of_paid in paid:
        figures[currency] = {
            "paid_sales": paid_sales,
            "gross": gross,
            "net": net,
            "refunded_of_paid": refunded_of_paid,
        }
    for currency, refund_count, refunded in refunds:
        figures.setdefault(currency, dict(empty)).update(refunds=refund_count, refunded=refunded)
    for values in figures.values():
        values.setdefault("refunds", 0)
        values.setdefault("refunded", Decimal(0))
        paid_sales = values["paid_sales"]
        values["average_ticket"] = values["gross"] / paid_sales if paid_sales else None
        values["refund_rate"] = values["refunded_of_paid"] / paid_sales if paid_sales else None
    return figures


def overview(session: Session, filters: Filters) -> list[Any]:
    current, previous = sales_kpis(session, filters), sales_kpis(session, filters.previous())
    rows: list[Any] = []
    for currency in sorted(current):
        now, before = current[currency], previous.get(currency, {})
        rows.append(html.H4(f"{currency}: {filters.start} to {filters.end}", className="currency-title"))
        rows.append(
            kpi_row(
                [
                    kpi(
                        f"kpi-gross-{currency}",
                        "Gross revenue",
                        money(now["gross"], currency),
                        change(now["gross"], before.get("gross")),
                    ),
                    kpi(
                        f"kpi-net-{currency}",
                        "Net revenue",
                        money(now["net"], currency),
                        change(now["net"], before.get("net")),
                    ),
                    kpi(
                        f"kpi-paid-{currency}",
                        "Paid sales",
                        count(now["paid_sales"]),
                        change(now["paid_sales"], before.get("paid_sales")),
                    ),
                    kpi(
                        f"kpi-ticket-{currency}",
                        "Average ticket",
                        money(now["average_ticket"], currency),
                        change(now["average_ticket"], before.get("average_ticket")),
                    ),
                    kpi(
                        f"kpi-refunds-{currency}",
                        "Refunds",
                        count(now["refunds"]),
                        f"{money(now['refunded'], currency)} refunded",
                    ),
                    kpi(
                        f"kpi-refund-rate-{currency}",
                        "Refund rate",
                        rate(now["refund_rate"]),
                        f"previous period {rate(before.get('refund_rate'))}",
                    ),
                ]
            )
        )
    if not rows:
        rows.append(html.P("No paid sale or refund in the chosen period and filters.", className="empty"))
    return [
        html.Div(rows, id="overview-kpis"),
        section("Revenue by day", chart("chart-revenue-day", _revenue_figure(session, filters, "day"))),
        section("Revenue by month", chart("chart-revenue-month", _revenue_figure(session, filters, "month"))),
    ]


def _revenue_figure(session: Session, filters: Filters, grain: str) -> go.Figure:
    params: list[Any] = []
    where = filters.where(PAID_DAY, product="product_id", currency="currency", params=params)
    period = PAID_DAY if grain == "day" else f"cast(date_trunc('month', {PAID_DAY}) as date)"
    rows = session.rows(
        f"""
        select {period} as period, currency, sum(gross_amount), sum(net_revenue_amount)
        from {MARTS}.fct_sales where was_paid{where} group by 1, 2 order by 1, 2
        """,
        params,
    )
    figure = go.Figure()
    for currency, points in series_by(rows).items():
        periods = [row[0] for row in points]
        figure.add_bar(x=periods, y=[number(r[2]) for r in points], name=f"gross {currency}")
        figure.add_bar(x=periods, y=[number(r[3]) for r in points], name=f"net {currency}")
    # Days are many and thin: gross and net drawn over each other; months side by side.
    figure.update_layout(barmode="overlay" if grain == "day" else "group", yaxis_title="amount")
    return figure


# --------------------------------------------------------------------------------------- subscriptions


def subscriptions(session: Session, filters: Filters) -> list[Any]:
    params: list[Any] = []
    where = by_month(filters).where("month_start", currency="currency", params=params)
    months = session.rows(
        f"""
        select month_start, currency, mrr_amount, new_mrr_amount, churned_mrr_amount,
            count_active_subscriptions, churn_rate, expansion_mrr_amount, contraction_mrr_amount
        from {MARTS}.subscriptions_mrr_monthly where true{where} order by currency, month_start
        """,
        params,
    )
    newest = newest_day(session)
    mrr, movements, active = go.Figure(), go.Figure(), go.Figure()
    cards = []
    to_date_note = "."
    for currency, points in series_by(months).items():
        x = [row[0] for row in points]
        mrr.add_scatter(x=x, y=[number(r[2]) for r in points], name=f"MRR {currency}", mode="lines+markers")
        movements.add_bar(x=x, y=[number(r[3]) for r in points], name=f"new {currency}")
        movements.add_bar(x=x, y=[number(r[7]) for r in points], name=f"expansion {currency}")
        movements.add_bar(x=x, y=[-number(r[8]) for r in points], name=f"contraction {currency}")
        movements.add_bar(x=x, y=[-number(r[4]) for r in points], name=f"churn {currency}")
        active.add_scatter(x=x, y=[r[5] for r in points], name=f"active {currency}", mode="lines+markers")
        last = points[-1]
        # The data's newest month is to date, not a whole month: its figures say so (issue 51).
        to_date = f" to {newest:%d %b}" if month_to_date(last[0], newest) else ""
        if to_date:
            to_date_note = f"; {last[0]:%b %Y} is not over: to {newest:%d %b %Y}, the newest day of the data."
        cards += [
            kpi(
                f"kpi-mrr-{currency}",
                f"MRR {last[0]:%b %Y}{to_date}",
                money(last[2], currency),
                "month not over: to the newest data" if to_date else "at the month's end",
            ),
            kpi(
                f"kpi-active-{currency}",
                "Active subscriptions",
                count(last[5]),
                f"{currency}, {'to date' if to_date else 'end of month'}",
            ),
            kpi(
                f"kpi-churn-{currency}",
                "Churn rate",
                rate(last[6]),
                f"{currency}, {last[0]:%b %Y}{to_date}{' (month not over)' if to_date else ''}",
            ),
        ]
    movements.update_layout(barmode="relative")
    status_params: list[Any] = []
    status_where = filters.where(None, product="product_id", currency="currency", params=status_params)
    statuses = session.rows(
        f"""
        select subscription_status, count(*) from {MARTS}.fct_subscriptions
        where cast(started_at as date) <= ?{status_where} group by 1 order by 2 desc, 1
        """,
        [filters.end, *status_params],
    )
    breakdown = go.Figure(
        go.Bar(x=[label(r[0]) for r in statuses], y=[r[1] for r in statuses], name="subscriptions")
    )
    return [
        kpi_row(cards),
        section(
            "MRR by month",
            chart("chart-mrr", mrr),
            note=f"MRR at each month's end (all products){to_date_note}",
        ),
        section(
            "MRR movements",
            chart("chart-mrr-movements", movements),
            note=(
                "New, expansion, contraction and churned MRR add up to the month's change. The API gives "
                "each subscription's current price only: the models keep its history from the first "
                "`platform-sync models` on, so price changes before that are not shown."
            ),
        ),
        section("Active subscriptions", chart("chart-active-subscriptions", active)),
        section(
            "Status breakdown",
            chart("chart-subscription-status", breakdown),
            note="Subscriptions started by the end of the period, by their current status.",
        ),
    ]


# ---------------------------------------------------------------------------------- products, affiliates


def products(session: Session, filters: Filters) -> list[Any]:
    params: list[Any] = []
    where = filters.where(
        "coalesce(s.paid_on, s.created_on)",
        product="s.product_id",
        currency="s.currency",
        account="s.account",
        params=params,
    )
    # one name per product id: two accounts may both hold a product (a co-produced one), and its
    # sales must not count twice through the join
    top = session.rows(
        f"""
        select coalesce(p.product_name, s.product_id) as product, s.currency, count(*),
            sum(s.gross_amount), sum(s.net_revenue_amount)
        from {MARTS}.fct_sales as s left join (
            select product_id, min(product_name) as product_name from {MARTS}.dim_products group by 1
        ) as p on s.product_id = p.product_id
        where s.was_paid{where} group by 1, 2 order by 5 desc, 1 limit 10
        """,
        params,
    )
    top_figure = go.Figure()
    for currency, points in series_by(top).items():
        top_figure.add_bar(
            y=[r[0] for r in points][::-1],
            x=[number(r[4]) for r in points][::-1],
            orientation="h",
            name=f"net revenue {currency}",
        )
    params = []
    where = filters.where(PAID_DAY, product="product_id", currency="currency", params=params)
    methods = session.rows(
        f"""
        select coalesce(payment_method, '{NO_METHOD}'), currency, count(*), sum(gross_amount)
        from {MARTS}.fct_sales where was_paid{where} group by 1, 2 order by 3 desc, 1
        """,
        params,
    )
    listed = spec_enum("sale_payment_method")
    method_rows = [(label(m), c, n, g, _listed(m, listed)) for m, c, n, g in methods]
    method_figure = go.Figure()
    for currency, points in series_by(methods).items():
        method_figure.add_bar(
            x=[label(r[0]) for r in points], y=[r[2] for r in points], name=f"paid sales {currency}"
        )
    params = []
    where = filters.where(PAID_DAY, product="product_id", currency="currency", params=params)
    affiliates = session.rows(
        f"""
        select coalesce(affiliate_name, affiliate_id), currency, count(*), sum(gross_amount),
            sum(affiliates_gain_amount), sum(net_revenue_amount)
        from {MARTS}.fct_sales where was_paid and affiliate_id is not null{where}
        group by 1, 2 order by 4 desc, 1
        """,
        params,
    )
    affiliate_figure = go.Figure()
    for currency, points in series_by(affiliates).items():
        shown = points[:10][::-1]
        affiliate_figure.add_bar(
            y=[r[0] for r in shown],
            x=[number(r[3]) for r in shown],
            orientation="h",
            name=f"gross {currency}",
        )
    return [
        section(
            "Top products by net revenue",
            chart("chart-top-products", top_figure),
            table("table-top-products", ["product", "currency", "paid sales", "gross", "net revenue"], top),
        ),
        section(
            "Sales by payment method",
            chart("chart-payment-methods", method_figure),
            table(
                "table-payment-methods",
                ["payment method", "currency", "paid sales", "gross", "in the spec"],
                method_rows,
            ),
            note="As the marts hold them: a method the API spec does not list is its own row.",
        ),
        section(
            "Affiliate performance",
            chart("chart-affiliates", affiliate_figure),
            table(
                "table-affiliates",
                ["affiliate", "currency", "paid sales", "gross", "affiliate gains", "net revenue"],
                affiliates,
            ),
            note="Paid sales made through an affiliate in the period.",
        ),
    ]


PAGES = (
    Page("/", "Overview", overview, ("fct_sales",), sales_figures=True),
    Page(
        "/subscriptions", "Subscriptions", subscriptions, ("subscriptions_mrr_monthly", "fct_subscriptions")
    ),
    Page("/products", "Products & affiliates", products, ("fct_sales", "dim_products"), sales_figures=True),
)


def _listed(method: str, listed: Collection[str]) -> str:
    """Whether the spec lists the payment method; a sale the API sent without one is no new method."""
    if method == NO_METHOD:
        return "none sent"
    return "yes" if method in listed else "no: added by the API"
