"""The paged lists that the throughput benchmark loads, as the requests our source makes for them.

The floor and the generic `rest_api` source are given exactly these listings (path and query, then pages
1..`pages` of 100 items), so the three contenders read the same pages. They mirror the source's readers
(`sources/platform/resources/`) on a first run with the default settings: the same date windows (from
`sources.platform_client.windows`), the same start date, one listing per configured event, community
and student. Sale details (one request per sale) and the per-product, per-event and per-delivery lookups
are not paged lists and are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sandbox.options import catalog_source_options
from sources.platform.settings import (
    DEFAULT_COMMUNITY_DAYS,
    DEFAULT_FISCAL_WINDOW_DAYS,
    DEFAULT_ITEMS_PER_PAGE,
    DEFAULT_START_DATE,
    DEFAULT_SUBSCRIPTIONS_WINDOW_DAYS,
    parse_start_date,
)
from sources.platform_client.operations import OPERATIONS_BY_NAME
from sources.platform_client.windows import date_windows, iso_z

# The resources of our source that read paged lists, in the order the report lists them.
LIST_RESOURCES: tuple[str, ...] = (
    "products",
    "affiliations",
    "transfers",
    "subscriptions",
    "fiscal_documents",
    "event_attendees",
    "lesson_comments",
    "community_commenters",
    "enrollments",
)

ITEMS_PER_PAGE = DEFAULT_ITEMS_PER_PAGE


@dataclass(frozen=True)
class Listing:
    """One paged list walk: `resource` is the table its items land in."""

    resource: str
    operation: str
    path: str
    params: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "resource": self.resource,
            "operation": self.operation,
            "path": self.path,
            "params": self.params,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Listing:
        return cls(data["resource"], data["operation"], data["path"], dict(data["params"]))


def _path(operation: str, **params: object) -> str:
    return OPERATIONS_BY_NAME[operation].render_path(params)


def listings(
    catalog: Mapping[str, Any], now: datetime, start_date: str = DEFAULT_START_DATE
) -> list[Listing]:
    """Every paged list walk of a first run of our source over the world of `catalog`, at time `now`."""
    start = parse_start_date(start_date)
    out = [
        Listing("products", "list_products", _path("list_products")),
        Listing("affiliations", "list_affiliations", _path("list_affiliations")),
        Listing("transfers", "list_transfers", _path("list_transfers")),
    ]
    windows: list[tuple[datetime, datetime | None]] = list(
        date_windows(start, now, DEFAULT_SUBSCRIPTIONS_WINDOW_DAYS)
    )
    windows[-1] = (windows[-1][0], None)
    for lower, upper in windows:
        params = {"filterBy": "update", "startDate": iso_z(lower)}
        if upper is not None:
            params["endDate"] = iso_z(upper)
        out.append(Listing("subscriptions", "list_subscriptions", _path("list_subscriptions"), params))
    upper_bound = max(now, start) + timedelta(days=1)
    for lower, upper in date_windows(start, upper_bound, DEFAULT_FISCAL_WINDOW_DAYS):
        params = {"startDate": iso_z(lower), "endDate": iso_z(upper)}
        out.append(
            Listing("fiscal_documents", "list_fiscal_documents", _path("list_fiscal_documents"), params)
        )
    for event in catalog["events"]:
        out.append(
            Listing(
                "event_attendees",
                "list_attendees",
                _path("list_attendees", id=event["id"]),
                {"modifiedAtGte": iso_z(start), "order": "asc"},
            )
        )
    out.append(Listing("lesson_comments", "list_lesson_comments", _path("list_lesson_comments")))
    for community in catalog["communities"]:
        out.append(
            Listing(
                "community_commenters",
                "list_community_commenters",
                _path("list_community_commenters", communityId=community["id"]),
                {"days": str(DEFAULT_COMMUNITY_DAYS)},
            )
        )
    for school in catalog["schools"]:
        for student in school["student_slugs"]:
            out.append(
                Listing(
                    "enrollments",
                    "list_enrollments",
                    _path("list_enrollments", teamSlug=school["team_slug"], studentSlug=student),
                )
            )
    return out


def source_options(base_url: str, token: str, catalog: Mapping[str, Any]) -> dict[str, Any]:
    """Our source's arguments for the world of `catalog`, as `pipelines/cli/demo.py` sets them but for the
    lesson comments, read in one walk as `listings` records them for every contender."""
    return {"base_url": base_url, "access_token": token, **catalog_source_options(catalog, by_course=False)}
