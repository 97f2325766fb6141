"""The Dash app: a header with the pages and the shared filters, and one callback that renders a page.

Every render opens one session on the warehouse (a fresh snapshot of DuckDB when the file changed), so a
page shows the data of the last finished sync and models run without restarting the dashboard.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

import dash
from dash import Input, Output, State, dcc, html

from dashboard.components import message, not_built
from dashboard.coverage import coverage_notice
from dashboard.filters import Filters, default_filters, from_inputs, from_query_string
from dashboard.pages import operations, sales
from dashboard.pages.base import MARTS, Page, newest_day
from dashboard.pages.health import make_health_page
from dashboard.warehouse import Session, Warehouse, WarehouseUnavailable

log = logging.getLogger(__name__)
ASSETS = Path(__file__).resolve().parent / "assets"


def pages(raw_schema: str, account_schemas: Mapping[str, str] | None = None) -> tuple[Page, ...]:
    """The pages in menu order."""
    return (*sales.PAGES, *operations.PAGES, make_health_page(raw_schema, account_schemas))


def create_app(
    warehouse: Warehouse, raw_schema: str = "platform_raw", account_schemas: Mapping[str, str] | None = None
) -> dash.Dash:
    """The dashboard over `warehouse`, whose raw tables are in `raw_schema`; with accounts configured
    (docs/accounts.md), `account_schemas` names each account's raw dataset and the header offers an
    account filter (the marts' `account` column)."""
    app = dash.Dash(
        __name__,
        title="platform-sync dashboard",
        assets_folder=str(ASSETS),
        serve_locally=True,  # plotly.js and Dash's own scripts from the wheels: works offline
        suppress_callback_exceptions=True,
        update_title="",  # no "Updating..." in the tab while a page renders
    )
    menu = pages(raw_schema, account_schemas)
    app.layout = _layout(menu)

    @app.callback(
        Output("filter-dates", "start_date"),
        Output("filter-dates", "end_date"),
        Output("filter-product", "value"),
        Output("filter-currency", "value"),
        Output("filter-product", "options"),
        Output("filter-currency", "options"),
        Output("filter-account", "value"),
        Output("filter-account", "options"),
        Output("filter-account", "style"),
        Input("url", "search"),
        State("filter-dates", "start_date"),
        State("filter-dates", "end_date"),
        State("filter-product", "value"),
        State("filter-currency", "value"),
        State("filter-account", "value"),
    )
    def set_filters(search: str | None, *current: Any) -> tuple[Any, ...]:
        """Filter choices from the data; values from the link's query string, else kept, else defaults."""
        products, currencies, latest = _choices(warehouse)
        accounts = _accounts(warehouse, account_schemas)
        asked = from_query_string(search)
        if asked:
            defaults = default_filters(latest)
            values: tuple[Any, ...] = (
                asked.get("start", defaults.start.isoformat()),
                asked.get("end", defaults.end.isoformat()),
                asked.get("product"),
                asked.get("currency"),
                asked.get("account"),
            )
        elif current[0] and current[1]:
            values = current
        else:
            defaults = default_filters(latest)
            values = (defaults.start.isoformat(), defaults.end.isoformat(), None, None, None)
        shown = {} if accounts else {"display": "none"}  # one account: nothing to choose
        return (*values[:4], products, currencies, values[4], accounts, shown)

    @app.callback(
        Output("page", "children"),
        Output("page-title", "children"),
        Input("url", "pathname"),
        Input("filter-dates", "start_date"),
        Input("filter-dates", "end_date"),
        Input("filter-product", "value"),
        Input("filter-currency", "value"),
        Input("filter-account", "value"),
    )
    def render(
        path: str | None, start: str | None, end: str | None, product: Any, currency: Any, account: Any
    ) -> Any:
        page = next((p for p in menu if p.path == (path or "/")), None)
        if page is None:
            return message("No such page", f"{path} is not a page of this dashboard."), "Not found"
        filters = from_inputs(start, end, product, currency, default_filters(None), account)
        return render_page(warehouse, page, filters, raw_schema, account_schemas), page.title

    return app


def render_page(
    warehouse: Warehouse,
    page: Page,
    filters: Filters,
    raw_schema: str = "platform_raw",
    account_schemas: Mapping[str, str] | None = None,
) -> Any:
    """A page's content, or a clear message when its marts are missing or empty or cannot be read. A
    page whose figures count sales begins with a notice when the sync has not found them all (of each
    account the figures cover)."""
    try:
        with warehouse.session() as session:
            missing, empty = _check_marts(session, page.marts)
            if missing or empty:
                return not_built(missing, empty)
            if not page.sales_figures:
                return page.render(session, filters)
            raws = _raw_schemas(filters, raw_schema, account_schemas)
            several = len(raws) > 1  # all accounts' figures: each notice says whose it is
            found = [coverage_notice(session, raw, account if several else None) for account, raw in raws]
            notices = [notice for notice in found if notice is not None]
            return [*notices, *page.render(session, replace(filters, sales_partial=bool(notices)))]
    except WarehouseUnavailable as exc:
        return message("No data yet", f"{exc}. Run `platform-sync sync` and then `platform-sync models`.")
    except Exception as exc:  # the page says what failed instead of showing a stack trace
        log.exception("rendering %s failed", page.path)
        return message("This page could not be read", f"{type(exc).__name__}: {exc}", "page-error")


def _check_marts(session: Session, marts: tuple[str, ...]) -> tuple[list[str], list[str]]:
    existing = session.tables(MARTS) if marts else set()
    missing = [f"{MARTS}.{name}" for name in marts if name not in existing]
    empty = [
        f"{MARTS}.{name}"
        for name in marts
        if name in existing and not session.rows(f"select 1 from {MARTS}.{name} limit 1")
    ]
    return missing, empty


def _raw_schemas(
    filters: Filters, raw_schema: str, account_schemas: Mapping[str, str] | None
) -> list[tuple[str | None, str]]:
    """The raw datasets behind the figures, with their accounts: the chosen account's, every account's,
    or the only one."""
    if not account_schemas:
        return [(None, raw_schema)]
    if filters.account:
        chosen = account_schemas.get(filters.account)
        return [(filters.account, chosen)] if chosen else []
    return [(name, account_schemas[name]) for name in sorted(account_schemas)]


def _accounts(warehouse: Warehouse, account_schemas: Mapping[str, str] | None) -> list[str]:
    """The accounts to choose from: the configured ones, and any other the marts hold; none when the
    marts have no `account` column or hold one account only."""
    found = set(account_schemas or ())
    try:
        with warehouse.session() as session:
            columns = session.rows(
                "select column_name from information_schema.columns "
                "where table_schema = ? and table_name = 'fct_sales' and column_name = 'account'",
                [MARTS],
            )
            if columns:
                found |= {str(a) for (a,) in session.rows(f"select distinct account from {MARTS}.fct_sales")}
    except Exception:  # the page callback reports the problem; the filter just stays empty
        log.exception("reading the accounts failed")
    return sorted(found) if len(found) > 1 else []


def _choices(warehouse: Warehouse) -> tuple[list[dict[str, str]], list[str], date | None]:
    """Products and currencies to choose from, and the newest day of the data (for the default range)."""
    try:
        with warehouse.session() as session:
            if not {"fct_sales", "dim_products"} <= session.tables(MARTS):
                return [], [], None
            products = session.rows(
                "select product_id, min(coalesce(product_name, product_id)) "
                f"from {MARTS}.dim_products group by 1 order by 2, 1"
            )
            currencies = session.rows(
                f"select distinct currency from {MARTS}.fct_sales where currency is not null order by 1"
            )
            latest = newest_day(session)
    except Exception:  # the page callback reports the problem; the filters just stay empty
        log.exception("reading the filter choices failed")
        return [], [], None
    options = [{"label": f"{name} ({product_id})", "value": str(product_id)} for product_id, name in products]
    return options, [str(c) for (c,) in currencies], latest


def _layout(menu: tuple[Page, ...]) -> html.Div:
    return html.Div(
        [
            dcc.Location(id="url"),
            html.Header(
                [
                    html.Div(
                        [
                            html.Span("platform-sync", className="brand"),
                            html.Nav(
                                [
                                    dcc.Link(
                                        page.title,
                                        href=page.path,
                                        className="nav-link",
                                        id=f"nav{page.path.replace('/', '-')}",
                                    )
                                    for page in menu
                                ]
                            ),
                        ],
                        className="topbar",
                    ),
                    html.Div(
                        [
                            dcc.DatePickerRange(
                                id="filter-dates",
                                display_format="YYYY-MM-DD",
                                persistence=True,
                                persistence_type="session",
                            ),
                            dcc.Dropdown(
                                id="filter-product",
                                placeholder="All products",
                                clearable=True,
                                persistence=True,
                                persistence_type="session",
                                className="filter",
                            ),
                            dcc.Dropdown(
                                id="filter-currency",
                                placeholder="All currencies",
                                clearable=True,
                                persistence=True,
                                persistence_type="session",
                                className="filter",
                            ),
                            dcc.Dropdown(
                                id="filter-account",
                                placeholder="All accounts",
                                clearable=True,
                                persistence=True,
                                persistence_type="session",
                                className="filter",
                                style={"display": "none"},
                            ),
                        ],
                        className="filters",
                    ),
                ]
            ),
            html.Main([html.H2(id="page-title"), dcc.Loading(html.Div(id="page"), type="dot")]),
        ]
    )
