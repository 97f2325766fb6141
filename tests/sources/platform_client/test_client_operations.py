"""The operations table against spec part 4 and 8 and contracts part 5."""

from __future__ import annotations

import pytest

from sources.platform_client.errors import ConfigurationError
from sources.platform_client.operations import (
    ALL_SCOPES,
    DEFAULT_RATE_LIMITS,
    OPERATIONS,
    OPERATIONS_BY_NAME,
    get_operation,
)

# Contracts part 5, in spec order.
CONTRACT_NAMES = [
    "token_exchange",
    "create_cart",
    "list_enrollments",
    "list_webhook_origins",
    "sale_details",
    "event_details",
    "list_attendees",
    "add_attendee",
    "list_affiliations",
    "delivery_details",
    "list_fiscal_documents",
    "list_subscriptions",
    "subscription_details",
    "list_products",
    "top_commented_posts",
    "list_product_campaigns",
    "list_product_partners",
    "list_transfers",
    "list_community_commenters",
    "list_lesson_comments",
]


def test_one_operation_per_spec_row_named_as_in_the_contracts():
    assert [op.number for op in OPERATIONS] == list(range(1, 21))
    assert [op.name for op in OPERATIONS] == CONTRACT_NAMES
    assert set(OPERATIONS_BY_NAME) == set(CONTRACT_NAMES)


def test_rate_limits_are_spec_part_8():
    assert dict(DEFAULT_RATE_LIMITS) == {
        "sale_details": 30,
        "event_details": 30,
        "list_attendees": 30,
        "add_attendee": 30,
        "list_lesson_comments": 200,
    }


def test_paged_operations_are_the_envelope_lists_of_spec_part_4():
    assert {op.name for op in OPERATIONS if op.paged} == {
        "list_enrollments",
        "list_attendees",
        "list_affiliations",
        "list_fiscal_documents",
        "list_subscriptions",
        "list_products",
        "list_transfers",
        "list_community_commenters",
        "list_lesson_comments",
    }
    assert {op.name for op in OPERATIONS if op.paging_required} == {"list_lesson_comments"}
    assert get_operation("list_fiscal_documents").required_query == {"startDate", "endDate"}


@pytest.mark.parametrize(
    ("name", "method", "path", "scopes", "success"),
    [
        ("token_exchange", "POST", "/oauth/token", set(), {200}),
        ("create_cart", "POST", "/checkout/v1/cart", {"checkout_cart_write"}, {201}),
        ("list_webhook_origins", "GET", "/webhook/v1/origin", set(), {200, 201}),
        (
            "add_attendee",
            "POST",
            "/events/v1/attendance-list/add-manually",
            {"events_read", "events_write"},
            {201},
        ),
        ("sale_details", "GET", "/store/v1/sales/{id}", {"store_sales_read"}, {200}),
        ("list_lesson_comments", "GET", "/course/v1/comments", {"course_comments_read"}, {200}),
    ],
)
def test_declarations(name, method, path, scopes, success):
    op = get_operation(name)
    assert (op.method, op.path, set(op.scopes), set(op.success_statuses)) == (method, path, scopes, success)


def test_every_api_path_carries_the_version_after_the_area_word():
    for op in OPERATIONS:
        if op.on_auth_server:
            assert "/v1/" not in op.path
        else:
            assert op.path.split("/")[2] == "v1", op.name


def test_path_params_and_rendering_quote_every_value():
    op = get_operation("list_enrollments")
    assert op.path_params == ("teamSlug", "studentSlug")
    rendered = op.render_path({"teamSlug": "my school", "studentSlug": "../../store/v1/sales/1"})
    assert rendered == (
        "/school/v1/producer/teams/my%20school/students/..%2F..%2Fstore%2Fv1%2Fsales%2F1/enrollments"
    )


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({}, "missing or empty ['id']"),
        ({"id": ""}, "missing or empty ['id']"),
        ({"id": 1, "x": 2}, "unknown ['x']"),
    ],
)
def test_render_path_refuses_missing_empty_or_unknown_params(params, fragment):
    with pytest.raises(
        ConfigurationError, match=f"sale_details: .*{fragment.replace('[', '.').replace(']', '.')}"
    ):
        get_operation("sale_details").render_path(params)


def test_unknown_operation_lists_valid_names():
    with pytest.raises(ConfigurationError) as caught:
        get_operation("list_sales")
    assert "list_sales" in str(caught.value)
    for name in CONTRACT_NAMES:
        assert name in str(caught.value)


def test_only_posts_are_not_idempotent_and_all_scopes_are_collected():
    assert {op.name for op in OPERATIONS if not op.idempotent} == {
        "token_exchange",
        "create_cart",
        "add_attendee",
    }
    assert ALL_SCOPES == {
        "checkout_cart_write",
        "school_student_read",
        "store_sales_read",
        "events_read",
        "events_write",
        "store_affiliates_read",
        "school_delivery_read",
        "store_financial_read",
        "store_subscriptions_read",
        "store_products_read",
        "community_read_posts",
        "community_read_members",
        "course_comments_read",
    }
