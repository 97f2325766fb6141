"""Spec part 7 errors and the filters of part 4, over the synthetic world through real HTTP.

The fake-world tests pin the HTTP layer's own behaviour; these check that the world's refusals reach
the client as the contract's error body, and that filters mean what the spec says.
"""

from __future__ import annotations

import pytest

from tests.support.sandbox_api import assert_error

UNKNOWN_UUID = "00000000-0000-4000-8000-000000000000"


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/store/v1/sales/no-such-sale", 404),
        (f"/events/v1/events/{UNKNOWN_UUID}", 404),
        (f"/events/v1/attendance-list/by-event/{UNKNOWN_UUID}", 404),
        ("/store/v1/subscriptions/999999999", 404),
        ("/store/v1/products/no-such-product/campaigns", 404),
        ("/store/v1/products/no-such-product/partners", 404),
        ("/store/v1/affiliates?productIds=no-such-product", 404),
        ("/school/v1/producer/teams/no-such-team/deliveries/1", 404),
        ("/school/v1/producer/teams/no-such-team/students/x/enrollments", 404),
        ("/community/v1/posts/community/1/top/commented", 403),
        ("/community/v1/members/community/1/comments", 403),
    ],
)
def test_world_refusals_use_the_error_body(synthetic_api, path, status):
    assert_error(synthetic_api.client.get(path), status)


def test_school_refusals_for_known_school(synthetic_api, synthetic_sandbox):
    team = synthetic_sandbox.catalog()["schools"][0]["team_slug"]
    assert_error(
        synthetic_api.get(f"/school/v1/producer/teams/{team}/students/no-such-student/enrollments"), 404
    )
    assert_error(synthetic_api.get(f"/school/v1/producer/teams/{team}/deliveries/987654321"), 404)


@pytest.mark.parametrize(
    ("change", "status"),
    [({"ticketId": UNKNOWN_UUID}, 404), ({"eventId": UNKNOWN_UUID}, 404), ({"document": "00000000000"}, 422)],
    ids=["unknown-ticket", "unknown-event", "invalid-document"],
)
def test_add_attendee_refusals(synthetic_api, synthetic_sandbox, change, status):
    event = synthetic_sandbox.catalog()["events"][0]
    body = {
        "eventId": event["id"],
        "ticketId": event["ticket_ids"][0],
        "name": "Ana",
        "document": "52998224725",
        "documentType": "cpf",
        "email": "ana@example.com",
        "phone": "11987654321",
        **change,
    }
    assert_error(synthetic_api.post("/events/v1/attendance-list/add-manually", body), status)


def test_cart_in_another_currency_is_422(synthetic_api, synthetic_sandbox):
    product = synthetic_sandbox.catalog()["products"][0]["id"]
    body = {
        "orderId": "o",
        "postbackUrl": "https://hook.example/x",
        "items": [
            {
                "productId": product,
                "description": "x",
                "quantity": 1,
                "price": {"value": 1, "currency": "USD"},
            }
        ],
    }
    assert_error(synthetic_api.post("/checkout/v1/cart", body), 422, "validation_error")


def all_items(api, path, **params):
    return api.get(path, page=1, itemsPerPage=100, **params).json()["items"]


@pytest.mark.parametrize(
    ("param", "value", "field"),
    [
        ("status", "approved", "status"),
        ("favorite", "true", "isFavorite"),
        ("read", "false", "isRead"),
        ("answered", "true", "isAnswered"),
        ("fixed", "false", "isFixed"),
    ],
)
def test_lesson_comment_filters(synthetic_api, param, value, field):
    expected = {"true": True, "false": False}.get(value, value)
    items = all_items(synthetic_api, "/course/v1/comments", **{param: value})
    assert items and all(item[field] == expected for item in items)


def test_lesson_comment_lesson_filter(synthetic_api, synthetic_sandbox):
    lesson = synthetic_sandbox.catalog()["courses"][0]["lesson_ids"][0]
    items = all_items(synthetic_api, "/course/v1/comments", lessonId=lesson)
    assert all(item["lessonId"] == lesson for item in items)


def test_attendee_filters_and_order(synthetic_api, synthetic_sandbox):
    event = synthetic_sandbox.catalog()["events"][0]
    path = f"/events/v1/attendance-list/by-event/{event['id']}"
    ascending = all_items(synthetic_api, path)
    assert [a["modifiedAt"] for a in ascending] == sorted(a["modifiedAt"] for a in ascending)
    assert [a["id"] for a in all_items(synthetic_api, path, order="desc")] == [a["id"] for a in ascending][
        ::-1
    ]
    if ascending:
        status = ascending[0]["status"]
        assert all(a["status"] == status for a in all_items(synthetic_api, path, status=status))
        ticket = ascending[0]["ticketId"]
        assert all(a["ticketId"] == ticket for a in all_items(synthetic_api, path, tickets=ticket))
        pivot = ascending[len(ascending) // 2]["modifiedAt"]
        later = all_items(synthetic_api, path, modifiedAtGte=pivot)
        assert later and all(a["modifiedAt"] >= pivot for a in later)


def test_fiscal_document_filters(synthetic_api):
    window = {"startDate": "2024-05-01", "endDate": "2026-06-01"}
    documents = all_items(synthetic_api, "/store/v1/financial/buyer/fiscal-documents", **window)
    assert documents
    first = documents[0]
    for param, value, get in [
        ("status", first["document"]["status"], lambda d: d["document"]["status"]),
        ("email", first["client"]["email"], lambda d: d["client"]["email"]),
        ("saleId", first["sale"]["id"], lambda d: d["sale"]["id"]),
        ("productId", first["product"]["id"], lambda d: d["product"]["id"]),
        ("documentId", first["document"]["id"], lambda d: d["document"]["id"]),
    ]:
        items = all_items(
            synthetic_api, "/store/v1/financial/buyer/fiscal-documents", **window, **{param: value}
        )
        assert items and all(get(d) == value for d in items), param


def test_subscriptions_date_window(synthetic_api):
    items = all_items(synthetic_api, "/store/v1/subscriptions", startDate="2025-01-01", endDate="2025-12-31")
    assert all("2025-01-01" <= s["createdAt"] <= "2025-12-31T23:59:59.999Z" for s in items)


def test_the_token_user_owns_the_events(synthetic_api, synthetic_sandbox):
    import httpx

    code = synthetic_sandbox.authorize()
    body = {
        "client_id": "sandbox-demo",
        "client_secret": "sandbox-demo-secret",
        "code": code,
        "redirect_uri": "http://localhost/callback",
        "grant_type": "authorization_code",
    }
    user = httpx.post(f"{synthetic_sandbox.auth_url}/oauth/token", json=body).json()["user"]
    event = synthetic_sandbox.catalog()["events"][0]
    assert synthetic_api.get(f"/events/v1/events/{event['id']}").json()["userId"] == user["id"]
