"""Building blocks of the pages: KPI cards, charts, tables and messages, with one way to format values."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import plotly.graph_objects as go
from dash import dash_table, dcc, html

HOW_TO_FILL = "Run `platform-sync sync` and then `platform-sync models` to load the data and build the marts."


def money(value: Any, currency: str) -> str:
    """`BRL 1,234.56`: the tests parse this back, so it is the one money format of the dashboard."""
    return f"{currency} {Decimal(value or 0):,.2f}"


def count(value: Any) -> str:
    return f"{int(value or 0):,}"


def rate(value: Any) -> str:
    """A share as a percentage with one decimal; `-` when undefined (nothing to divide by)."""
    return "-" if value is None else f"{float(value) * 100:.1f}%"


def hours(value: Any) -> str:
    """A duration in hours with one decimal (`0.2 h`); `-` when there is none."""
    return "-" if value is None else f"{float(value):,.1f} h"


def cell(value: Any) -> Any:
    """A value as a table shows it."""
    if value is None:
        return "-"
    if isinstance(value, Decimal):
        return f"{value:,.2f}"
    if isinstance(value, float):
        return round(value, 4)
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    if isinstance(value, date):
        return value.isoformat()
    return value


def number(value: Any) -> float:
    """A value as a chart plots it (plotly wants floats, not decimals)."""
    return float(value or 0)


def change(current: Any, previous: Any) -> str:
    """`+12.3% vs previous period`, or why there is no comparison."""
    if previous is None or Decimal(previous or 0) == 0:
        return "no figure in the previous period"
    delta = round((Decimal(current or 0) - Decimal(previous)) / abs(Decimal(previous)) * 100, 1)
    return f"{delta + 0:+.1f}% vs previous period"  # + 0: no "-0.0%"


def kpi(kpi_id: str, label: str, value: str, note: str = "") -> html.Div:
    """A KPI card; `kpi_id` lets the tests find it."""
    return html.Div(
        [
            html.Div(label, className="kpi-label"),
            html.Div(value, id=kpi_id, className="kpi-value"),
            html.Div(note, className="kpi-note"),
        ],
        className="kpi",
    )


def kpi_row(cards: Sequence[html.Div]) -> html.Div:
    return html.Div(list(cards), className="kpi-row")


def section(title: str, *children: Any, note: str = "") -> html.Section:
    parts: list[Any] = [html.H3(title)]
    if note:
        parts.append(html.P(note, className="note"))
    parts.extend(children)
    return html.Section(parts, className="section")


def chart(
    chart_id: str, figure: go.Figure | None, empty: str = "Nothing in the chosen period and filters."
) -> Any:
    """A chart, or a short message instead of an empty plot."""
    if figure is None or not any(_has_points(trace) for trace in figure.data):
        return html.P(empty, className="empty", id=f"{chart_id}-empty")
    figure.update_layout(
        margin={"l": 50, "r": 20, "t": 30, "b": 40},
        height=320,
        legend={"orientation": "h", "y": -0.2},
        template="plotly_white",
    )
    return dcc.Graph(id=chart_id, figure=figure, config={"displaylogo": False}, className="chart")


def _has_points(trace: Any) -> bool:
    for attribute in ("y", "values", "x"):
        values = getattr(trace, attribute, None)
        if values is not None and len(values) > 0:
            return True
    return False


def table(table_id: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], page_size: int = 10) -> Any:
    """A sortable table of rows (already ordered), or a message when there are none."""
    if not rows:
        return html.P("Nothing in the chosen period and filters.", className="empty", id=f"{table_id}-empty")
    return dash_table.DataTable(  # type: ignore[attr-defined]
        id=table_id,
        columns=[{"name": name, "id": str(i)} for i, name in enumerate(columns)],
        data=[{str(i): cell(value) for i, value in enumerate(row)} for row in rows],
        page_size=page_size,
        sort_action="native",
        style_table={"overflowX": "auto"},
        style_cell={"fontFamily": "inherit", "fontSize": "13px", "padding": "4px 8px", "textAlign": "left"},
        style_header={"fontWeight": "600", "backgroundColor": "#f3f4f6"},
    )


def message(title: str, text: str, message_id: str = "message") -> html.Div:
    """A clear message where a page cannot show its data (never a stack trace)."""
    return html.Div([html.H3(title), html.P(text)], className="message", id=message_id)


def not_built(missing: Sequence[str], empty: Sequence[str]) -> html.Div:
    parts = []
    if missing:
        parts.append(f"missing: {', '.join(missing)}")
    if empty:
        parts.append(f"empty: {', '.join(empty)}")
    return message("The data for this page is not there yet", f"{'; '.join(parts)}. {HOW_TO_FILL}")


def series_by(rows: Sequence[Sequence[Any]], key: int = 1) -> dict[Any, list[Sequence[Any]]]:
    """Rows grouped by the value of one column (a currency, a status), in order of first appearance."""
    groups: dict[Any, list[Sequence[Any]]] = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups
