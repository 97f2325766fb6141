"""Each operation's success status, filters and the errors of spec part 7, against the fake world."""

from __future__ import annotations

import pytest

from tests.support.fake_world import (
    ADD_ATTENDEE,
    EMPTY_COMMUNITY_ID,
    EVENT_ID,
    FOREIGN_COMMUNITY_ID,
    SOLD_OUT_TICKET_ID,
    TICKET_ID,
)
from tests.support.sandbox_api import Api, assert_error, fake_requests, send

SUCCESS = {"create_cart": 201, "add_attendee": 201, "list_webhook_origins": 201}


@pytest.mark.parametrize("operation", sorted(fake_requests()))
def test_success_status_and_json(fake_api, operation):
    method, path, data = fake_requests()[operation]
    response = send(fake_api.client, method, path, data)
    assert response.status_code == SUCCESS.get(operation, 200), response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    arrays = ("list_webhook_origins", "list_product_campaigns", "list_product_partners")
    assert isinstance(body, list if operation in arrays else dict)


def ids(response):
    assert response.status_code == 200, response.text
    return [item["id"] for item in response.json()["items"]]


def all_of(api, path, **params):
    return api.get(path, itemsPerPage=100, **params).json()["items"]


# -- store --


def test_affiliations_filter_by_comma_separated_product_ids(fake_api):
    items = all_of(fake_api, "/store/v1/affiliates", productIds="P001,P002")
    assert sorted({i["product"]["id"] for i in items}) == ["P001", "P002"]
    assert len(items) == 4


def test_affiliations_unknown_product_is_404(fake_api):
    assert_error(fake_api.get("/store/v1/affiliates", productIds="P001,NOPE"), 404, "not_found")


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ({"status": "approved"}, lambda r: r["document"]["status"] == "approved"),
        ({"email": "buyer1@example.com"}, lambda r: r["client"]["email"] == "buyer1@example.com"),
        ({"name": "Buyer 2"}, lambda r: r["client"]["name"] == "Buyer 2"),
        ({"saleId": "SALE010"}, lambda r: r["sale"]["id"] == "SALE010"),
        ({"productId": "P002"}, lambda r: r["product"]["id"] == "P002"),
        ({"documentId": "F005"}, lambda r: r["document"]["id"] == "F005"),
    ],
    ids=lambda v: "-".join(v) if isinstance(v, dict) else "",
)
def test_fiscal_document_filters(fake_api, params, check):
    window = {"startDate": "2020-01-01", "endDate": "2030-01-01"}
    items = all_of(fake_api, "/store/v1/financial/buyer/fiscal-documents", **window, **params)
    assert items and all(check(item) for item in items)
    assert len(items) < 64


@pytest.mark.parametrize(
    "window",
    [
        {"startDate": "2026-05-01", "endDate": "2026-05-10"},
        {"startDate": "2026-05-01T00:00:00Z", "endDate": "2026-05-10T00:00:00Z"},
        {"startDate": "2026-05-01T03:00:00+03:00", "endDate": "2026-05-09T21:00:00-03:00"},
        {"startDate": "2026-05-01T00:00:00", "endDate": "2026-05-10T00:00:00.000"},
    ],
    ids=["date", "zulu", "offset", "naive"],
)
def test_date_parameters_accept_every_contract_form(fake_api, window):
    items = all_of(fake_api, "/store/v1/financial/buyer/fiscal-documents", **window)
    assert [i["document"]["id"] for i in items] == [f"F{i:03d}" for i in range(33, 43)]


@pytest.mark.parametrize(
    "params",
    [
        {"startDate": "2026-01-01"},
        {"endDate": "2026-01-01"},
        {},
        {"startDate": "yesterday", "endDate": "2026-01-01"},
        {"startDate": "2026-13-01", "endDate": "2026-12-01"},
        {"startDate": "2026-02-01", "endDate": "2026-01-01"},
        {"startDate": "2026-01-01", "endDate": "2026-02-01", "status": "lost"},
    ],
    ids=["no-end", "no-start", "none", "not-a-date", "month-13", "reversed", "bad-status"],
)
def test_fiscal_documents_validation(fake_api, params):
    assert_error(
        fake_api.get("/store/v1/financial/buyer/fiscal-documents", **params), 422, "validation_error"
    )


def test_subscriptions_filter_by_creation_and_update(fake_api):
    created = all_of(fake_api, "/store/v1/subscriptions", startDate="2026-05-01", endDate="2026-05-31")
    assert created and all("2026-05-01" <= s["createdAt"] < "2026-06-01" for s in created)
    updated = all_of(
        fake_api, "/store/v1/subscriptions", startDate="2026-05-25", endDate="2026-05-31", filterBy="update"
    )
    assert updated and all("2026-05-25" <= s["updatedAt"] < "2026-06-01" for s in updated)
    assert [s["updatedAt"] for s in updated] == sorted(s["updatedAt"] for s in updated)


@pytest.mark.parametrize(
    "params",
    [{"filterBy": "deletion"}, {"startDate": "soon"}, {"startDate": "2026-02-01", "endDate": "2026-01-01"}],
    ids=["bad-filter", "bad-date", "reversed"],
)
def test_subscriptions_validation(fake_api, params):
    assert_error(fake_api.get("/store/v1/subscriptions", **params), 422, "validation_error")


def test_subscription_details_404_and_422(fake_api):
    assert fake_api.get("/store/v1/subscriptions/S001").json()["id"] == "S001"
    assert_error(fake_api.get("/store/v1/subscriptions/S999"), 404, "not_found")
    assert_error(fake_api.get("/store/v1/subscriptions/bad id!"), 422, "validation_error")


def test_sale_details_404(fake_api):
    assert_error(fake_api.get("/store/v1/sales/unknown"), 404, "not_found")


@pytest.mark.parametrize("kind", ["campaigns", "partners"])
def test_product_campaigns_and_partners(fake_api, kind):
    assert fake_api.get(f"/store/v1/products/P003/{kind}").json()[0]["id"].startswith("P003")
    assert_error(fake_api.get(f"/store/v1/products/NOPE/{kind}"), 404, "not_found")


# -- checkout --

CART = {
    "orderId": "o-9",
    "postbackUrl": "https://hook.example/p",
    "items": [
        {
            "productId": "P001",
            "description": "One",
            "quantity": 1,
            "price": {"value": 10.5, "currency": "BRL"},
        }
    ],
}


def test_cart_is_201_with_the_world_answer(fake_api):
    response = fake_api.post("/checkout/v1/cart", CART)
    assert response.status_code == 201
    assert response.json()["orderId"] == "o-9"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"orderId": None}, "orderId"),
        ({"postbackUrl": "ftp://x"}, "postbackUrl"),
        ({"installments": "3"}, "installments"),
        (
            {
                "items": [
                    {"productId": "P001", "description": "x", "quantity": 1, "price": {"currency": "USD"}}
                ]
            },
            "items[0].price.currency",
        ),
        ({"items": [{"description": "x", "quantity": True}]}, "items[0].productId"),
        ({"items": ["P001"]}, "items[0]"),
        ({"customer": {"address": {"state": 35}}}, "customer.address.state"),
    ],
    ids=["no-order", "bad-url", "string-installments", "usd", "no-product", "item-not-object", "address"],
)
def test_cart_validation_is_422_naming_the_field(fake_api, change, field):
    body = {**CART, **change}
    details = assert_error(
        fake_api.post("/checkout/v1/cart", {k: v for k, v in body.items() if v is not None}), 422
    )
    assert field in [d["field"] for d in details["details"]]


def test_cart_errors_of_the_world_pass_through(fake_api):
    body = {**CART, "items": [{"productId": "X1", "description": "x", "quantity": 1}]}
    assert_error(fake_api.post("/checkout/v1/cart", body), 422, "validation_error")


# -- events --


def test_event_details_and_404(fake_api):
    assert fake_api.get(f"/events/v1/events/{EVENT_ID}").json()["id"] == EVENT_ID
    assert_error(fake_api.get("/events/v1/events/6f1c2b1e-0000-4000-8000-00000000ffff"), 404, "not_found")


ATTENDEES = f"/events/v1/attendance-list/by-event/{EVENT_ID}"


def test_attendee_filters(fake_api):
    assert all(a["status"] == "paid" for a in all_of(fake_api, ATTENDEES, status="paid"))
    assert all(a["ticketId"] == TICKET_ID for a in all_of(fake_api, ATTENDEES, tickets=TICKET_ID))
    assert [a["name"] for a in all_of(fake_api, ATTENDEES, search="guest 5")] == ["Guest 5"] + [
        f"Guest {i}" for i in range(50, 57)
    ]
    window = all_of(
        fake_api, ATTENDEES, modifiedAtGte="2026-05-31T20:00:00Z", modifiedAtLte="2026-05-31T22:00:00Z"
    )
    assert [a["modifiedAt"][11:13] for a in window] == ["20", "21", "22"]
    ascending = [a["id"] for a in all_of(fake_api, ATTENDEES)]
    assert [a["id"] for a in all_of(fake_api, ATTENDEES, order="desc")] == ascending[::-1]
    assert len(all_of(fake_api, ATTENDEES, tags="x", attendanceSituation="y", id=EVENT_ID)) == 57


@pytest.mark.parametrize(
    "params",
    [{"order": "up"}, {"status": "gone"}, {"modifiedAtGte": "noon"}],
    ids=["order", "status", "date"],
)
def test_attendee_validation(fake_api, params):
    assert_error(fake_api.get(ATTENDEES, **params), 422, "validation_error")


def test_attendees_of_an_unknown_event_404(fake_api):
    assert_error(fake_api.get("/events/v1/attendance-list/by-event/nope"), 404, "not_found")


ATTENDEE = {**ADD_ATTENDEE, "useStock": True}


@pytest.mark.parametrize(
    ("change", "status"),
    [
        ({}, 201),
        ({"eventId": "nope"}, 404),
        ({"ticketId": "nope"}, 404),
        ({"ticketId": SOLD_OUT_TICKET_ID}, 422),
        ({"document": "00000000000"}, 422),
        ({"documentType": "rg"}, 422),
        ({"useStock": "yes"}, 422),
        ({"name": None}, 422),
    ],
    ids=[
        "ok",
        "unknown-event",
        "unknown-ticket",
        "no-stock",
        "bad-document",
        "document-type",
        "use-stock",
        "no-name",
    ],
)
def test_add_attendee(fake_api, change, status):
    body = {k: v for k, v in {**ATTENDEE, **change}.items() if v is not None}
    response = fake_api.post("/events/v1/attendance-list/add-manually", body)
    assert response.status_code == status, response.text
    if status == 201:
        assert response.json()["status"] == "presence_confirmed"
    else:
        assert_error(response, status)


# -- school, community, course, webhooks --


def test_enrollments_and_delivery_404(fake_api):
    assert_error(fake_api.get("/school/v1/producer/teams/team-a/students/nobody/enrollments"), 404)
    assert_error(fake_api.get("/school/v1/producer/teams/team-a/deliveries/8"), 404)
    assert_error(fake_api.get("/school/v1/producer/teams/team-a/deliveries/seven"), 422, "validation_error")


def test_top_commented_posts_at_most_five_with_days(fake_api):
    body = fake_api.get("/community/v1/posts/community/11/top/commented", days=3).json()
    assert list(body) == ["items"]
    assert len(body["items"]) == 5 and all(p["days"] == 3 for p in body["items"])


@pytest.mark.parametrize(
    "path", ["/community/v1/posts/community/{}/top/commented", "/community/v1/members/community/{}/comments"]
)
def test_community_reads_403_for_a_foreign_community(fake_api, path):
    assert_error(fake_api.get(path.format(FOREIGN_COMMUNITY_ID)), 403, "forbidden")
    assert_error(fake_api.get(path.format("eleven")), 422, "validation_error")
    assert_error(fake_api.get(path.format(11), days="0"), 422, "validation_error")
    assert_error(fake_api.get(path.format(11), days="99999999"), 422, "validation_error")


def test_top_commented_posts_404_when_no_posts(fake_api):
    assert_error(fake_api.get(f"/community/v1/posts/community/{EMPTY_COMMUNITY_ID}/top/commented"), 404)


def test_commenters_days_filter(fake_api):
    assert fake_api.get("/community/v1/members/community/11/comments", days=4).json()["totalItems"] == 4


COMMENTS = "/course/v1/comments"


@pytest.mark.parametrize(
    ("params", "check"),
    [
        ({"courseId": 2}, lambda c: c["courseId"] == 2),
        ({"lessonId": 101}, lambda c: c["lessonId"] == 101),
        ({"status": "inModeration"}, lambda c: c["status"] == "inModeration"),
        ({"favorite": "true"}, lambda c: c["isFavorite"]),
        ({"favorite": "false"}, lambda c: not c["isFavorite"]),
        ({"answered": "true"}, lambda c: c["isAnswered"]),
        ({"read": "false"}, lambda c: not c["isRead"]),
        ({"fixed": "true"}, lambda c: c["isFixed"]),
        ({"email": "student2@example.com"}, lambda c: c["author"] == "student2@example.com"),
    ],
    ids=lambda v: "-".join(f"{k}={x}" for k, x in v.items()) if isinstance(v, dict) else "",
)
def test_lesson_comment_filters(fake_api, params, check):
    items = all_of(fake_api, COMMENTS, page=1, **params)
    assert items and all(check(c) for c in items) and len(items) < 88


@pytest.mark.parametrize(
    "params", [{"status": "hidden"}, {"favorite": "yes"}, {"courseId": "one"}, {"lessonId": "-3"}], ids=str
)
def test_lesson_comment_validation(fake_api, params):
    assert_error(fake_api.get(COMMENTS, page=1, itemsPerPage=5, **params), 422, "validation_error")


def test_webhook_origins_is_201_array(fake_api):
    response = fake_api.get("/webhook/v1/origin")
    assert response.status_code == 201 and response.json()[0]["prefix"] == "store"


# -- transport-level errors --


@pytest.mark.parametrize("path", ["/nope", "/store/v2/products", "/store/v1/sales", "/"])
def test_unknown_paths_are_404_with_the_error_body(fake_api, path):
    assert_error(fake_api.get(path), 404, "not_found")


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/store/v1/products"),
        ("DELETE", "/store/v1/sales/x"),
        ("GET", "/checkout/v1/cart"),
        ("PUT", "/events/v1/attendance-list/add-manually"),
        ("GET", "/sandbox/advance"),
    ],
)
def test_wrong_methods_are_405_with_the_error_body(fake_api, method, path):
    response = fake_api.client.request(method, path)
    assert_error(response, 405, "bad_request")
    assert response.headers["allow"]


@pytest.mark.parametrize(
    "raw", [b"{", b"[]", b"", b"nul", '{"orderId": "\ud800"}'.encode("utf-8", "surrogatepass")]
)
def test_malformed_json_bodies_are_400_or_422(fake_api: Api, raw):
    response = fake_api.client.post(
        "/checkout/v1/cart", content=raw, headers={"content-type": "application/json"}
    )
    assert response.status_code in (400, 422)
    assert_error(response, response.status_code)
