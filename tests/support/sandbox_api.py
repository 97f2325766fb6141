"""Talking to a live sandbox over HTTP in the sandbox's contract tests: each operation's scopes, a
successful request of every operation against the fake world, a bound client, the contract's error body.
The fixtures that start the sandboxes: tests/sandbox/conftest.py."""

from __future__ import annotations

from typing import Any

import httpx

from sandbox.running import SandboxHandle

OPERATIONS_SCOPES: dict[str, tuple[str, ...]] = {
    "create_cart": ("checkout_cart_write",),
    "list_enrollments": ("school_student_read",),
    "list_webhook_origins": (),
    "sale_details": ("store_sales_read",),
    "event_details": ("events_read",),
    "list_attendees": ("events_read",),
    "add_attendee": ("events_read", "events_write"),
    "list_affiliations": ("store_affiliates_read",),
    "delivery_details": ("school_delivery_read",),
    "list_fiscal_documents": ("store_financial_read",),
    "list_subscriptions": ("store_subscriptions_read",),
    "subscription_details": ("store_subscriptions_read",),
    "list_products": ("store_products_read",),
    "top_commented_posts": ("community_read_posts",),
    "list_product_campaigns": ("store_products_read",),
    "list_product_partners": ("store_products_read",),
    "list_transfers": ("store_financial_read",),
    "list_community_commenters": ("community_read_members",),
    "list_lesson_comments": ("course_comments_read",),
}


def fake_requests() -> dict[str, tuple[str, str, dict[str, Any] | None]]:
    """A successful request of every API operation against the fake world: (method, path, params/body)."""
    from tests.support.fake_world import ADD_ATTENDEE, EVENT_ID

    return {
        "create_cart": (
            "POST",
            "/checkout/v1/cart",
            {"orderId": "o-1", "postbackUrl": "https://hook.example/x"},
        ),
        "list_enrollments": ("GET", "/school/v1/producer/teams/team-a/students/stu-1/enrollments", None),
        "list_webhook_origins": ("GET", "/webhook/v1/origin", None),
        "sale_details": ("GET", "/store/v1/sales/SALE001", None),
        "event_details": ("GET", f"/events/v1/events/{EVENT_ID}", None),
        "list_attendees": ("GET", f"/events/v1/attendance-list/by-event/{EVENT_ID}", None),
        "add_attendee": ("POST", "/events/v1/attendance-list/add-manually", dict(ADD_ATTENDEE)),
        "list_affiliations": ("GET", "/store/v1/affiliates", None),
        "delivery_details": ("GET", "/school/v1/producer/teams/team-a/deliveries/7", None),
        "list_fiscal_documents": (
            "GET",
            "/store/v1/financial/buyer/fiscal-documents",
            {"startDate": "2024-01-01", "endDate": "2026-06-01"},
        ),
        "list_subscriptions": ("GET", "/store/v1/subscriptions", None),
        "subscription_details": ("GET", "/store/v1/subscriptions/S001", None),
        "list_products": ("GET", "/store/v1/products", None),
        "top_commented_posts": ("GET", "/community/v1/posts/community/11/top/commented", None),
        "list_product_campaigns": ("GET", "/store/v1/products/P001/campaigns", None),
        "list_product_partners": ("GET", "/store/v1/products/P001/partners", None),
        "list_transfers": ("GET", "/store/v1/financial/transfers", None),
        "list_community_commenters": ("GET", "/community/v1/members/community/11/comments", None),
        "list_lesson_comments": ("GET", "/course/v1/comments", {"page": 1, "itemsPerPage": 10}),
    }


def send(client: httpx.Client, method: str, path: str, data: dict[str, Any] | None) -> httpx.Response:
    if method == "POST":
        return client.post(path, json=data)
    return client.get(path, params=data)


class Api:
    """An httpx client bound to a sandbox's base_url with a bearer token."""

    def __init__(self, sandbox: SandboxHandle, scopes: list[str] | None = None):
        self.sandbox = sandbox
        self.token = sandbox.token(scopes)
        self.client = httpx.Client(
            base_url=sandbox.base_url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )

    def get(self, path: str, **params: Any) -> httpx.Response:
        return self.client.get(path, params=params)

    def post(self, path: str, body: Any) -> httpx.Response:
        return self.client.post(path, json=body)

    def close(self) -> None:
        self.client.close()


def assert_error(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    """The response is the contract's error body with this status (and code)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert isinstance(body, dict)
    assert body["status"] == status
    assert isinstance(body["message"], str) and body["message"]
    assert body["error"] in {"bad_request", "unauthorized", "forbidden", "not_found", "validation_error",
                             "rate_limited", "internal_error", "bad_gateway", "unavailable"}  # fmt: skip
    if code is not None:
        assert body["error"] == code
    return body
