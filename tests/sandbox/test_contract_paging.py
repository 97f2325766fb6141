"""Paging (spec part 1, contracts part 1): arithmetic, clamp, past the end, validation, completeness."""

from __future__ import annotations

import math

import pytest

from tests.support.fake_world import COUNTS, EVENT_ID
from tests.support.sandbox_api import assert_error

# Every paged operation with its fake-world total and the extra parameters it needs.
PAGED = {
    "list_products": ("/store/v1/products", {}, COUNTS["products"]),
    "list_transfers": ("/store/v1/financial/transfers", {}, COUNTS["transfers"]),
    "list_subscriptions": ("/store/v1/subscriptions", {}, COUNTS["subscriptions"]),
    "list_fiscal_documents": (
        "/store/v1/financial/buyer/fiscal-documents",
        {"startDate": "2020-01-01", "endDate": "2030-01-01"},
        COUNTS["fiscal"],
    ),
    "list_attendees": (f"/events/v1/attendance-list/by-event/{EVENT_ID}", {}, COUNTS["attendees"]),
    "list_lesson_comments": ("/course/v1/comments", {}, COUNTS["comments"]),
    "list_affiliations": ("/store/v1/affiliates", {}, 2 * COUNTS["products"]),
    "list_enrollments": ("/school/v1/producer/teams/team-a/students/stu-1/enrollments", {}, 11),
    "list_community_commenters": ("/community/v1/members/community/11/comments", {}, 25),
}
ENVELOPE = ("pages", "page", "itemsPerPage", "totalItems", "items")


def fetch_all(api, path, params, size):
    """Follow the envelope from page 1 to `pages`."""
    items, page = [], 1
    while True:
        body = api.get(path, **params, page=page, itemsPerPage=size).json()
        items += body["items"]
        if page >= body["pages"]:
            return items, body
        page += 1


@pytest.mark.parametrize("operation", sorted(PAGED))
@pytest.mark.parametrize("size", [1, 7, 10, 100])
def test_concatenated_pages_are_the_whole_set(fake_api, operation, size):
    path, params, total = PAGED[operation]
    items, last = fetch_all(fake_api, path, params, size)
    assert last["totalItems"] == total
    assert last["pages"] == math.ceil(total / size)
    assert len(items) == total
    assert len({repr(sorted(item.items())) for item in items}) == total  # no duplicates


@pytest.mark.parametrize("operation", sorted(PAGED))
def test_envelope_defaults_to_page_1_of_10(fake_api, operation):
    path, params, total = PAGED[operation]
    if operation == "list_lesson_comments":
        params = {**params, "page": 1, "itemsPerPage": 10}  # required there
    body = fake_api.get(path, **params).json()
    assert list(body) == list(ENVELOPE)
    assert (body["page"], body["itemsPerPage"], body["totalItems"]) == (1, 10, total)
    assert len(body["items"]) == min(10, total)


def test_items_per_page_is_clamped_to_100(fake_api):
    body = fake_api.get("/store/v1/financial/transfers", itemsPerPage=1000).json()
    assert body["itemsPerPage"] == 100
    assert len(body["items"]) == 100
    assert body["pages"] == 2


def test_last_page_holds_the_remainder(fake_api):
    body = fake_api.get("/store/v1/products", page=4, itemsPerPage=10).json()
    assert [i["id"] for i in body["items"]] == ["P030", "P031", "P032", "P033", "P034", "P035", "P036"]


@pytest.mark.parametrize("page", [5, 6, 1000, 2**31 - 1])
def test_a_page_past_the_end_is_empty_with_true_totals(fake_api, page):
    response = fake_api.get("/store/v1/products", page=page, itemsPerPage=10)
    assert response.status_code == 200
    body = response.json()
    assert (body["items"], body["page"], body["pages"], body["totalItems"]) == ([], page, 4, 37)


def test_an_empty_listing_has_zero_pages(fake_api):
    body = fake_api.get("/store/v1/subscriptions", startDate="2030-01-01").json()
    assert (body["totalItems"], body["pages"], body["items"]) == (0, 0, [])


@pytest.mark.parametrize(
    ("name", "value"),
    [("page", "0"), ("page", "-1"), ("page", "x"), ("page", "1.5"), ("page", ""), ("itemsPerPage", "0"),
     ("itemsPerPage", "ten"), ("page", "99999999999999999999999"), ("page", "１")],
)  # fmt: skip
@pytest.mark.parametrize("operation", sorted(PAGED))
def test_bad_paging_values_are_422_naming_the_field(fake_api, operation, name, value):
    path, params, _ = PAGED[operation]
    params = {"page": 1, "itemsPerPage": 10, **params, name: value}
    body = assert_error(fake_api.get(path, **params), 422, "validation_error")
    assert name in [detail["field"] for detail in body["details"]]


@pytest.mark.parametrize("missing", ["page", "itemsPerPage"])
def test_lesson_comments_require_page_and_items_per_page(fake_api, missing):
    params = {"page": 1, "itemsPerPage": 10}
    del params[missing]
    body = assert_error(fake_api.get("/course/v1/comments", **params), 422, "validation_error")
    assert body["details"] == [{"field": missing, "message": "is required"}]


def test_several_bad_parameters_are_reported_together(fake_api):
    body = assert_error(fake_api.get("/course/v1/comments", status="nope", read="maybe"), 422)
    assert {d["field"] for d in body["details"]} == {"page", "itemsPerPage", "status", "read"}


def test_unknown_parameters_are_ignored(fake_api):
    plain = fake_api.get("/store/v1/products", page=2).json()
    assert fake_api.get("/store/v1/products", page=2, colour="blue", **{"ünï": "✓"}).json() == plain
