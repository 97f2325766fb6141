"""The filters every page shares (date range, product, currency, account) and how each mart applies them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

DEFAULT_DAYS = 365


@dataclass(frozen=True)
class Filters:
    """A closed date range (UTC days), and optionally one product, one currency and one account (the
    marts of a warehouse with several accounts have an `account` column: docs/accounts.md)."""

    start: date
    end: date
    product_id: str | None = None
    currency: str | None = None
    account: str | None = None
    # The figures count sales and the sync has not found them all (`dashboard/coverage.py`): set by the
    # page's render when it shows the coverage notice; totals built on sales then say they are partial.
    sales_partial: bool = False

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def previous(self) -> Filters:
        """The period of the same length that ends the day before this one starts."""
        end = self.start - timedelta(days=1)
        return replace(self, start=end - timedelta(days=self.days - 1), end=end)

    def where(
        self,
        day: str | None,
        *,
        product: str | None = None,
        currency: str | None = None,
        account: str | None = "account",
        params: list[Any],
    ) -> str:
        """` and ...` conditions for the columns a mart has, appending their values to `params`.

        `day` is a SQL expression of the row's UTC day; `product` and `currency` its column names (a
        mart without them is not filtered by them: the page says so). Every mart has the `account`
        column when accounts are configured (the only case where an account can be chosen); `account`
        names it, qualified in a join.
        """
        conditions = []
        if day is not None:
            conditions.append(f"{day} between ? and ?")
            params += [self.start, self.end]
        if product is not None and self.product_id:
            conditions.append(f"{product} = ?")
            params.append(self.product_id)
        if currency is not None and self.currency:
            conditions.append(f"{currency} = ?")
            params.append(self.currency)
        if account is not None and self.account:
            conditions.append(f"{account} = ?")
            params.append(self.account)
        return "".join(f" and {condition}" for condition in conditions)


def default_filters(newest_day: date | None) -> Filters:
    """The year up to the newest day of the data (`pages.base.newest_day`), today without data. Not up to
    today: a platform clock behind ours (or an account quiet for months) put the default period months
    past the newest figure (issue 51)."""
    last = newest_day or datetime.now(tz=UTC).date()
    return Filters(start=last - timedelta(days=DEFAULT_DAYS - 1), end=last)


def from_inputs(
    start: str | None,
    end: str | None,
    product: str | None,
    currency: str | None,
    fallback: Filters,
    account: str | None = None,
) -> Filters:
    """Filters from the header's controls (ISO dates; empty values fall back to the defaults)."""
    first = _day(start) or fallback.start
    last = _day(end) or fallback.end
    if last < first:
        first, last = last, first
    return Filters(first, last, product or None, currency or None, account or None)


def from_query_string(search: str | None) -> dict[str, str]:
    """`?start=2026-01-01&end=2026-03-31&product=42&currency=BRL&account=acme` as a dict (links can carry
    filters)."""
    values = parse_qs((search or "").lstrip("?"))
    keys = ("start", "end", "product", "currency", "account")
    return {key: items[0] for key, items in values.items() if key in keys}


def _day(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None
