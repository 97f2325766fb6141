"""The models of sources/platform/models: records written from the API spec (part 2), not from the sandbox."""

from __future__ import annotations

import copy
import json
import pickle
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from typing import Any, Literal

import dlt
import duckdb
import pytest
from dlt.common.normalizers.naming.snake_case import NamingConvention

from sources.platform.models import (
    ENUMS,
    ApiModel,
    Attendee,
    Departure,
    Enrollment,
    ManualAttendee,
    Money,
    RecordValidationError,
    Sale,
    TicketedEvent,
    Token,
    Transfer,
    columns_for,
    enum_columns,
    nested_hints_for,
    parse_decimal,
    parse_page_strictly,
    parse_record,
    parse_timestamp,
)
from sources.platform.resources import STREAMS

TS = "2026-05-01T12:30:00.123Z"
TS_UTC = datetime(2026, 5, 1, 12, 30, 0, 123000, tzinfo=UTC)
UUID = "0b6f4a3e-8d7c-4f1a-9e2b-3c4d5e6f7a8b"
UUID2 = "1c7a5b4f-9e8d-4a2b-8f3c-4d5e6f7a8b9c"


def money(value: Any) -> dict[str, Any]:
    return {"currency": "BRL", "value": value}


# One record of every shape, written from the spec (part 2) as the API sends them, every nullable field
# filled; timestamps are ISO 8601 UTC with milliseconds and Z unless a test is about another form.
RECORDS: dict[str, dict[str, Any]] = json.loads(
    """
{
  "sale": {
    "id": "s1", "contractId": "c1", "status": "refunded",
    "grossGain": {"currency": "BRL", "value": 97.0}, "netGain": {"currency": "BRL", "value": 87.5},
    "partnersGain": {"currency": "BRL", "value": 0},
    "affiliatesGain": {"currency": "BRL", "value": 9.7}, "fee": {"currency": "BRL", "value": 9.5},
    "total": {"currency": "BRL", "value": 97.0},
    "totalInterest": {"currency": "BRL", "value": 101.3}, "installments": 3,
    "companyXFee": {"currency": "BRL", "value": 1.99},
    "installmentSettlementFee": {"currency": "BRL", "value": 1.2},
    "others": {"currency": "BRL", "value": 0.0}, "currency": "BRL", "locale": "pt-BR",
    "dueDate": "2026-05-01T12:30:00.123Z", "paidAt": "2026-05-01T12:30:00.123Z",
    "creditDate": "2026-05-31T03:00:00Z", "isInfiniteFunnel": false, "recoveringStatus": "inactive",
    "tracker": "t1", "tracker2": "t2", "tracker3": "t3", "createdAt": "2026-05-01T11:59:00Z",
    "updatedAt": "2026-05-01T12:30:00.123Z",
    "payment": {"method": "creditCard", "detail": "visaCreditCard", "link": "https://pay.example/x"},
    "product": {
      "id": "p1", "name": "Course", "type": "digital", "billingType": "single", "sku": "SKU-1"
    },
    "refund": {
      "type": "partial", "value": {"currency": "BRL", "value": 97.0},
      "partialValue": {"currency": "BRL", "value": 40.0}, "refundedAt": "2026-05-01T12:30:00.123Z",
      "requestedAt": "2026-05-01T12:30:00.123Z", "motive": "changed mind", "requesterName": "Buyer"
    }, "affiliate": {"id": "u1", "name": "Person 1"},
    "recipient": {
      "id": "r1", "name": "R", "email": "r@example.com", "document": "123", "phone": "+55 11"
    },
    "buyer": {
      "id": "b1", "name": "B", "email": "b@example.com", "document": "123", "phone": "1",
      "phone2": "2", "phone3": "3",
      "address": {
        "zipCode": "01000-000", "street": "Rua A", "neighborhood": "Centro", "city": "São Paulo",
        "state": "SP", "number": "10", "complement": "ap 1"
      }
    }, "producer": {"id": "pr1", "name": "Producer"},
    "affiliates": [
      {
        "id": "u1", "name": "Person 1", "email": "p1@example.com",
        "netGain": {"currency": "BRL", "value": 9.7}
      }
    ],
    "partners": [
      {
        "id": "u2", "name": "Person 2", "email": "p2@example.com",
        "netGain": {"currency": "BRL", "value": 9.7}
      },
      {
        "id": "u3", "name": "Person 3", "email": "p3@example.com",
        "netGain": {"currency": "BRL", "value": 9.7}
      }
    ],
    "items": [
      {
        "id": "i1", "productId": "p1", "description": "Course",
        "unitValue": {"currency": "BRL", "value": 48.5}, "quantity": 2,
        "value": {"currency": "BRL", "value": 97.0}, "discount": {"currency": "BRL", "value": 5},
        "freightType": "none", "freightDeadline": "0", "trackingCode": "TR1"
      }
    ], "offer": {"name": "Default"},
    "utm": {"source": "google", "campaign": "c", "medium": "cpc", "content": "x", "term": "y"},
    "orderBump": {"has": true, "isMainSale": false, "mainSaleId": 123}
  },
  "subscription": {
    "id": "sub1", "createdAt": "2026-05-01T12:30:00.123Z", "updatedAt": "2026-05-01T12:30:00.123Z",
    "status": "upToDate", "firstInvoiceId": "s1", "isFinite": true,
    "isUnlimitedInstallments": false, "hasNegotiation": false,
    "interruption": {
      "createdAt": "2026-05-01T12:30:00.123Z", "type": "suspend",
      "removeAccessDate": "2026-05-01T12:30:00.123Z", "reason": "r", "origin": "o",
      "responsible": "x", "previousStatus": "late"
    },
    "recurrence": {
      "startsAt": "2026-05-01T12:30:00.123Z", "nextDueDate": "2026-05-01T12:30:00.123Z",
      "currentDueDate": "2026-05-01T12:30:00.123Z", "finalDueDate": "2026-05-01T12:30:00.123Z",
      "finishesAt": "2026-05-01T12:30:00.123Z", "frequency": {"type": "monthly", "value": 1}
    }, "charges": {"total": 12, "current": 3, "paid": 2, "pending": 1, "negotiated": 0},
    "products": [
      {
        "id": "p1", "title": "Club", "hasMembershipFee": true,
        "membershipFee": {"currency": "BRL", "value": 10}, "deliveries": ["school", "community"]
      }
    ],
    "payment": {
      "price": {"currency": "BRL", "value": 29.9}, "method": "creditcard", "installments": 1
    },
    "client": {
      "name": "C", "email": "c@example.com",
      "phone": {"countryCode": "55", "areaCode": "11", "number": "99999"}
    }
  },
  "product": {
    "id": "p1", "name": "Course", "description": "d", "producerId": "pr1", "author": "A",
    "imageUrl": "https://img.example/p1.png", "type": "digital", "status": "active",
    "moderation": "approved", "createdAt": "2026-05-01T12:30:00.123Z",
    "updatedAt": "2026-05-01T12:30:00.123Z",
    "payment": {
      "type": "oneTime", "price": {"currency": "BRL", "value": 97},
      "methods": {"bankslip": true, "pix": true, "card": true, "multipleCards": false}
    }
  },
  "campaign": {
    "id": "k1", "key": "abc", "title": "Launch", "url": "https://go.example/abc",
    "resultPerClick": {"affiliate": 0.25, "producer": 1.5}, "isInfinityFunnel": false,
    "isActive": true, "createdAt": "2026-05-01T12:30:00.123Z"
  },
  "partner": {
    "id": "u2", "name": "P", "email": "p@example.com",
    "commission": {"type": "percentage", "value": 12.5, "onlyByAffiliate": false},
    "permission": {"canManageAffiliates": true, "canRefund": false, "canViewCustomerData": true}
  },
  "affiliation": {
    "id": "af1", "status": "approved", "requestedAt": "2026-05-01T12:30:00.123Z",
    "approvedAt": "2026-05-01T12:30:00.123Z", "updatedAt": "2026-05-01T12:30:00.123Z",
    "createdAt": "2026-05-01T12:30:00.123Z", "product": {"id": "p1", "name": "Course"},
    "customer": {"id": "acc1", "name": "A"}
  },
  "transfer": {
    "id": "t1", "value": {"currency": "BRL", "value": 1500.35}, "requestedAt": "2026-05-02",
    "completedAt": "2026-05-03", "createdAt": "2026-05-01T12:30:00.123Z", "status": "confirmed",
    "details": "ok",
    "bankAccount": {
      "type": "checkingAccount", "bankCode": "001", "agency": "1234", "account": "5678-9"
    }
  },
  "fiscal_document": {
    "document": {
      "id": "d1", "name": "NFS-e 1", "status": "approved", "type": "nfse",
      "baseValue": {"currency": "BRL", "value": 97}, "emissionDate": "2026-05-01T12:30:00.123Z",
      "referenceDate": "2026-05-01T00:00:00Z", "processingDate": "2026-05-01T12:30:00.123Z",
      "taxation": {
        "nbs": {"code": "1", "description": "d"},
        "taxClassification": {"code": "1", "description": "d"},
        "operationIndicator": {"code": "1", "description": "d"}
      }
    },
    "source": {
      "taxType": "cnpj", "companyName": "Co", "document": "1", "ie": "2", "im": "3",
      "email": "co@example.com", "tel": "1", "tel2": "2", "cell": "3",
      "address": {
        "street": "S", "number": "1", "complement": "c", "district": "D", "zipCode": "01000-000",
        "city": "C", "uf": "SP"
      }
    },
    "destination": {
      "companyName": "B", "taxType": "cpf", "taxId": "1", "ie": "2", "im": "3", "email": "b@x.com",
      "tel": "1", "tel2": "2", "cell": "3",
      "address": {
        "street": "S", "number": "1", "complement": "c", "district": "D", "zipCode": "01000-000",
        "city": "C", "uf": "SP", "countryForeign": "no", "country": "BR"
      }
    },
    "sale": {
      "id": "s1", "paymentDate": "2026-05-01T12:30:00.123Z",
      "total": {"currency": "BRL", "value": 97}
    },
    "client": {
      "id": "b1", "name": "B", "document": "1", "email": "b@x.com", "cellphone": "9",
      "telephone": "8", "telephone2": "7",
      "address": {
        "zipCode": "0", "street": "S", "number": "1", "complement": "c", "neighborhood": "N",
        "city": "C", "state": "SP"
      }
    }, "product": {"id": "p1", "title": "Course"}, "generatedByNewSystem": true
  },
  "webhook_origin": {
    "id": "o1", "name": "School", "prefix": "school",
    "events": [
      {
        "name": "school.lesson_watched", "metadata": ["learnerEmail", "lessonId"],
        "description": "d"
      }
    ]
  },
  "event": {
    "id": "0b6f4a3e-8d7c-4f1a-9e2b-3c4d5e6f7a8b", "userId": "1c7a5b4f-9e8d-4a2b-8f3c-4d5e6f7a8b9c",
    "type": "presential", "title": "Meetup", "description": "<p>d</p>",
    "saleUrl": "https://e.example/s", "imageUrl": "https://e.example/i.png",
    "streamUrl": "https://e.example/l", "reserveTime": 15,
    "transmissionLinks": ["https://t.example/1"], "files": ["a.pdf", "b.pdf"], "isLive": false,
    "activePrecheckout": true, "startAt": "2026-05-01T12:30:00.123Z",
    "endAt": "2026-05-01T12:30:00.123Z", "createdAt": "2026-05-01T12:30:00.123Z",
    "modifiedAt": "2026-05-01T12:30:00.123Z",
    "tickets": [
      {
        "id": "0b6f4a3e-8d7c-4f1a-9e2b-3c4d5e6f7a8b",
        "eventId": "0b6f4a3e-8d7c-4f1a-9e2b-3c4d5e6f7a8b", "name": "General", "isPaid": true,
        "showOnPage": true, "buyLimit": false, "isUnlimited": false, "isActive": true,
        "buyMinimum": 1, "createdAt": "2026-05-01T12:30:00.123Z",
        "modifiedAt": "2026-05-01T12:30:00.123Z",
        "lots": [
          {
            "id": "1c7a5b4f-9e8d-4a2b-8f3c-4d5e6f7a8b9c",
            "ticketId": "0b6f4a3e-8d7c-4f1a-9e2b-3c4d5e6f7a8b", "name": "Lot 1", "quantity": 100,
            "value": 49.9, "isActive": true, "startSaleAt": "2026-05-01T12:30:00.123Z",
            "endSaleAt": "2026-05-01T12:30:00.123Z", "createdAt": "2026-05-01T12:30:00.123Z",
            "modifiedAt": "2026-05-01T12:30:00.123Z", "platformProductId": 42
          }
        ]
      }
    ],
    "address": {
      "place": "Hall", "country": "BR", "state": "SP", "city": "C", "district": "D", "street": "S",
      "complement": "c", "number": "1", "zip": "0", "mapUrl": "https://maps.example/x",
      "geolocation": {"latitude": -23.55, "longitude": -46.63}
    }
  },
  "attendee": {
    "id": "0b6f4a3e-8d7c-4f1a-9e2b-3c4d5e6f7a8b", "name": "A", "email": "a@example.com",
    "document": "123", "phone": "9", "documentType": "cpf", "inviteKey": "k", "status": "paid",
    "ticketId": "1c7a5b4f-9e8d-4a2b-8f3c-4d5e6f7a8b9c", "ticketName": "General",
    "checkinDate": "2026-05-01T12:30:00.123Z", "manuallyCreated": false, "fromSqueeze": true,
    "platformId": "1", "firstPlatformId": "1", "invoiceId": "s1",
    "eventId": "0b6f4a3e-8d7c-4f1a-9e2b-3c4d5e6f7a8b", "createdAt": "2026-05-01T12:30:00.123Z",
    "modifiedAt": "2026-05-01T12:30:00.123Z", "invoiceCustomerName": "A",
    "invoiceCustomerEmail": "a@example.com", "invoiceCustomerPlatformId": "1",
    "invoiceCustomerDocument": "123", "invoiceCreatedAt": "2023-09-20 17:25:42",
    "invoicePaidAt": "2023-09-20T17:30:00.000Z", "invoiceAmount": 49.9,
    "customFields": {"shirt": "M", "age": 30, "nested": {"x": [1, 2]}}, "statusDescription": "Paid",
    "tags": ["vip", "speaker"]
  },
  "manual_attendee": {
    "id": "0b6f4a3e-8d7c-4f1a-9e2b-3c4d5e6f7a8b", "inviteKey": "k", "name": "A", "document": "123",
    "phoneNumber": "9", "email": "a@example.com", "platformId": "1", "invoiceId": "i1",
    "documentType": "passport", "status": "presence_confirmed", "manuallyCreated": true,
    "modifiedAt": "2026-05-01T12:30:00.123Z"
  },
  "token": {
    "id": "tk1", "access_token": "secret-token-value", "token_type": "bearer", "expires_in": 21600,
    "scope": "store_sales_read webhook_read", "ttl": null, "created_at": 1780272000,
    "service": null, "refresh_token": null, "authenticated_userid": "acc1,42",
    "credential": {"id": "cr1"},
    "user": {
      "id": "us1", "platformId": 42, "coursePlatformId": 7, "platform_id": 42,
      "course_platform_id": 7, "name": "U", "email": "u@example.com",
      "picture": "https://img.example/u.png"
    }
  },
  "enrollment": {
    "createdAt": "2026-05-01 10:00:00", "certificateUrl": null, "progress": 42.5,
    "course": {"name": "C"}
  },
  "delivery": {
    "id": 7, "name": "Club", "platform": "externalB", "platformProductId": "p1",
    "platformOfferId": null, "isActive": true, "isSubscription": true, "autoRemoveAccess": false,
    "tags": ["a"], "endsAfter": 365
  },
  "community_post": {
    "id": 1, "title": "Hello", "createdAt": "2026-05-01T12:30:00.123Z",
    "updatedAt": "2026-05-01T12:30:00.123Z", "totalComments": 12, "totalLikes": 3,
    "member": {"id": 9, "email": "m@example.com"}, "space": {"id": 2, "name": "General"},
    "tags": ["x"]
  },
  "community_member": {
    "id": 9, "name": "M", "email": "m@example.com", "posts": [{"id": 1, "title": "Hello"}]
  },
  "lesson_comment": {
    "id": 5, "text": "Great", "isRead": true, "isFavorite": false, "isFixed": false,
    "isAnswered": true, "createdAt": "2026-05-01T12:30:00.123Z", "status": "inModeration",
    "type": "text", "author": "A", "lessonId": 77
  }
}
"""
)


def record(name: str) -> dict[str, Any]:
    return copy.deepcopy(RECORDS[name])


SALE_NULLABLE = [
    "contractId",
    "fee",
    "companyXFee",
    "installmentSettlementFee",
    "paidAt",
    "creditDate",
    "tracker",
    "tracker2",
    "tracker3",
    "refund",
    "affiliate",
    "utm",
]
SALE_NULL_OBJECTS = {"fee", "companyXFee", "installmentSettlementFee", "refund", "affiliate", "utm"}


def null_sale() -> dict[str, Any]:
    """A sale with every nullable field null (and empty lists)."""
    raw = record("sale")
    raw.update({key: None for key in SALE_NULLABLE})
    raw.update({"affiliates": [], "partners": [], "items": []})
    raw["payment"]["link"] = None
    raw["product"]["sku"] = None
    raw["buyer"].update(phone2=None, phone3=None)
    raw["buyer"]["address"].update(number=None, complement=None)
    raw["offer"]["name"] = None
    raw["orderBump"]["mainSaleId"] = None
    return raw


RECORD_OF_TABLE = {
    "sales": "sale",
    "subscriptions": "subscription",
    "products": "product",
    "product_campaigns": "campaign",
    "product_partners": "partner",
    "affiliations": "affiliation",
    "transfers": "transfer",
    "fiscal_documents": "fiscal_document",
    "webhook_origins": "webhook_origin",
    "events": "event",
    "event_attendees": "attendee",
    "enrollments": "enrollment",
    "deliveries": "delivery",
    "community_top_posts": "community_post",
    "community_commenters": "community_member",
    "lesson_comments": "lesson_comment",
}
ALL = [(STREAMS[table].model, name) for table, name in RECORD_OF_TABLE.items()]
ALL += [(Token, "token"), (ManualAttendee, "manual_attendee")]
IDS = [model.__name__ for model, _ in ALL]
MODELS = {name: model for model, name in ALL}


# --- valid records ---


def test_every_resource_has_a_record() -> None:
    assert set(RECORD_OF_TABLE) == set(STREAMS)


@pytest.mark.parametrize(("model", "name"), ALL, ids=IDS)
def test_valid_record_parses_like_the_model(model: type[ApiModel], name: str) -> None:
    raw = record(name)
    row = parse_record(model, raw)
    assert row == model.model_validate(raw).model_dump(mode="python", by_alias=True)
    assert row.keys() == raw.keys()  # the API's keys, nothing renamed
    assert raw == record(name)  # the input is not changed


def test_sale_values_round_trip() -> None:
    row = parse_record(Sale, record("sale"))
    assert row["grossGain"] == {"currency": "BRL", "value": Decimal("97.0")}
    assert type(row["affiliatesGain"]["value"]) is Decimal and str(row["affiliatesGain"]["value"]) == "9.7"
    assert row["partnersGain"]["value"] == Decimal(0) and row["installments"] == 3
    assert row["isInfiniteFunnel"] is False and row["orderBump"] == {
        "has": True,
        "isMainSale": False,
        "mainSaleId": 123,
    }
    assert row["paidAt"] == TS_UTC and row["paidAt"].tzinfo is UTC
    assert row["creditDate"] == datetime(2026, 5, 31, 3, tzinfo=UTC)
    assert row["items"][0]["unitValue"]["value"] == Decimal("48.5") and row["items"][0]["quantity"] == 2
    assert [p["id"] for p in row["partners"]] == ["u2", "u3"]
    assert row["refund"]["refundedAt"] == TS_UTC and row["buyer"]["address"]["city"] == "São Paulo"


def test_model_dump_gives_the_api_keys() -> None:
    dumped = Sale.model_validate(record("sale")).model_dump(by_alias=True)
    assert {"grossGain", "companyXFee", "orderBump", "isInfiniteFunnel"} <= dumped.keys()
    assert dumped["orderBump"].keys() == {"has", "isMainSale", "mainSaleId"}
    assert Token.model_validate(record("token")).model_dump()["user"]["platform_id"] == 42


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (12, Decimal(12)),
        (0.1, Decimal("0.1")),
        (1500.35, Decimal("1500.35")),
        ("19.90", Decimal("19.90")),
        (Decimal("3.333"), Decimal("3.333")),
        (-4.5, Decimal("-4.5")),
    ],
)
def test_money_values_are_exact_decimals(value: Any, expected: Decimal) -> None:
    assert parse_decimal(value) == expected
    assert Money.model_validate({"currency": "BRL", "value": value}).value == expected


def _read(model: type[ApiModel], raw: Any) -> tuple[dict[str, Any], list[Departure]]:
    departures: list[Departure] = []
    return parse_record(model, raw, departures=departures), departures


@pytest.mark.parametrize(
    ("value", "departure"),
    [
        (True, Departure("grossGain.value", "unconvertible", True)),
        (None, Departure("grossGain.value", "null")),
        ("abc", Departure("grossGain.value", "unconvertible", "abc")),
        ("NaN", Departure("grossGain.value", "unconvertible", "NaN")),
        ([1], Departure("grossGain.value", "unconvertible", [1])),
        ({}, Departure("grossGain.value", "unconvertible", {})),
    ],
)
def test_a_money_value_that_is_no_number_loads_as_null_and_is_reported(value: Any, departure: Any) -> None:
    row, departures = _read(Sale, {**record("sale"), "grossGain": money(value)})
    assert row["grossGain"] == {"currency": "BRL", "value": None} and departures == [departure]
    with pytest.raises(RecordValidationError, match=r"grossGain\.value"):
        parse_record(Sale, {**record("sale"), "grossGain": money(value)}, strict=True)


@pytest.mark.parametrize(("value", "expected"), [("19.90", Decimal("19.90")), (" 12 ", Decimal(12))])
def test_a_money_value_sent_as_text_is_converted_and_reported(value: str, expected: Decimal) -> None:
    row, departures = _read(Sale, {**record("sale"), "grossGain": money(value)})
    assert row["grossGain"]["value"] == expected
    assert departures == [Departure("grossGain.value", "converted", value)]


# --- timestamps ---


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-01T12:30:00.123Z", TS_UTC),
        ("2026-05-01T12:30:00Z", datetime(2026, 5, 1, 12, 30, tzinfo=UTC)),
        ("2026-05-01T09:30:00.123-03:00", TS_UTC),
        ("2026-05-01T15:30:00+0300", datetime(2026, 5, 1, 12, 30, tzinfo=UTC)),
        ("2026-05-01T12:30:00.123456+00:00", datetime(2026, 5, 1, 12, 30, 0, 123456, tzinfo=UTC)),
        ("2026-05-01T12:30:00.123456789Z", datetime(2026, 5, 1, 12, 30, 0, 123456, tzinfo=UTC)),
        ("2026-05-01T12:30:00", datetime(2026, 5, 1, 12, 30, tzinfo=UTC)),
        ("2026-05-01 12:30:00", datetime(2026, 5, 1, 12, 30, tzinfo=UTC)),
        ("2026-05-01 12:30:00.123", TS_UTC),
        ("2026-05-01", datetime(2026, 5, 1, tzinfo=UTC)),
        (datetime(2026, 5, 1, 9, 30, 0, 123000, tzinfo=timezone(timedelta(hours=-3))), TS_UTC),
        (
            datetime(2026, 5, 1, 12, 30, tzinfo=UTC).replace(tzinfo=None),
            datetime(2026, 5, 1, 12, 30, tzinfo=UTC),
        ),
        (int(datetime(2026, 5, 1, 12, 30, tzinfo=UTC).timestamp()), datetime(2026, 5, 1, 12, 30, tzinfo=UTC)),
    ],
)
def test_every_timestamp_form_gives_aware_utc(text: Any, expected: datetime) -> None:
    parsed = parse_timestamp(text)
    assert parsed == expected and parsed.tzinfo is UTC and parsed.utcoffset() == timedelta(0)
    row = parse_record(Transfer, {**record("transfer"), "createdAt": text})
    assert row["createdAt"] == expected and row["createdAt"].tzinfo is UTC


@pytest.mark.parametrize("text", ["yesterday", "", "2026-13-01", "2026-05-01T25:00:00", "01/05/2026", True])
def test_a_bad_timestamp_loads_as_null_and_keeps_its_original(text: Any) -> None:
    row, departures = _read(Transfer, {**record("transfer"), "createdAt": text})
    assert row["createdAt"] is None and departures == [Departure("createdAt", "unconvertible", text)]
    with pytest.raises(RecordValidationError) as error:
        parse_record(Transfer, {**record("transfer"), "createdAt": text}, strict=True)
    message = str(error.value)
    assert "createdAt" in message and "not convertible" in message and "strict = false" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-05-01T12:30:00", datetime(2026, 5, 1, 12, 30, tzinfo=UTC)),
        ("2026-05-01 12:30:00", datetime(2026, 5, 1, 12, 30, tzinfo=UTC)),
        ("2026-05-01", datetime(2026, 5, 1, tzinfo=UTC)),
    ],
)
def test_a_timestamp_in_another_form_is_converted_and_reported(text: str, expected: datetime) -> None:
    row, departures = _read(Sale, {**record("sale"), "dueDate": text})
    assert row["dueDate"] == expected and departures == [Departure("dueDate", "converted", text)]
    # the transfer dates are documented as possibly date-only: no departure there
    row, departures = _read(Transfer, {**record("transfer"), "createdAt": "2026-05-01"})
    assert row["createdAt"] == datetime(2026, 5, 1, tzinfo=UTC) and departures == []


def test_fields_typed_as_strings_stay_strings() -> None:
    row = parse_record(Attendee, record("attendee"))
    assert (
        row["invoiceCreatedAt"] == "2023-09-20 17:25:42"
        and row["invoicePaidAt"] == "2023-09-20T17:30:00.000Z"
    )
    assert parse_record(Enrollment, record("enrollment"))["createdAt"] == "2026-05-01 10:00:00"
    assert row["customFields"] == {"shirt": "M", "age": 30, "nested": {"x": [1, 2]}}
    assert row["invoiceAmount"] == Decimal("49.9")


def test_transfer_date_only_is_midnight_utc() -> None:
    row = parse_record(Transfer, record("transfer"))
    assert row["requestedAt"] == datetime(2026, 5, 2, tzinfo=UTC)


# --- nullables and extras ---


def test_every_nullable_field_may_be_null_or_absent() -> None:
    raw = null_sale()
    row = parse_record(Sale, raw)
    # null scalars stay as None; a null nested object is left out of the row (see parse._prune)
    assert {key for key in SALE_NULLABLE if key not in row} == SALE_NULL_OBJECTS
    assert all(row[key] is None for key in SALE_NULLABLE if key not in SALE_NULL_OBJECTS)
    assert row["orderBump"]["mainSaleId"] is None and row["buyer"]["address"]["complement"] is None
    nulls = parse_record(Sale, {**record("sale"), **{key: None for key in SALE_NULLABLE}})
    assert parse_record(Sale, {k: v for k, v in record("sale").items() if k not in SALE_NULLABLE}) == nulls
    token = record("token")
    token["user"]["picture"] = None
    assert parse_record(Token, token)["user"]["picture"] is None
    del token["user"]["picture"]  # documented only by the responses: may be absent
    assert parse_record(Token, token)["user"]["picture"] is None


@pytest.mark.parametrize(
    "path", [("id",), ("status",), ("grossGain",), ("buyer", "address", "zipCode"), ("dueDate",)]
)
def test_a_null_where_the_spec_has_none_loads_and_is_reported(path: tuple[str, ...]) -> None:
    for kind in ("null", "missing"):
        raw = record("sale")
        node = raw
        for key in path[:-1]:
            node = node[key]
        if kind == "null":
            node[path[-1]] = None
        else:
            del node[path[-1]]
        row, departures = _read(Sale, raw)
        assert departures == [Departure(".".join(path), kind)]
        for key in path[:-1]:
            row = row[key]
        assert row.get(path[-1]) is None
        with pytest.raises(RecordValidationError, match=".".join(path)):
            parse_record(Sale, raw, strict=True)


def test_extra_fields_are_kept_at_every_level() -> None:
    raw = record("sale")
    raw["newTopField"] = {"deep": [1, 2]}
    raw["buyer"]["address"]["extraNote"] = "gate 2"
    raw["items"][0]["giftWrap"] = True
    raw["grossGain"]["cents"] = 9700
    row, departures = _read(Sale, raw)
    assert departures == [
        Departure("grossGain.cents", "unlisted_field"),
        Departure("buyer.address.extraNote", "unlisted_field"),
        Departure("items[].giftWrap", "unlisted_field"),
        Departure("newTopField", "unlisted_field"),
    ]
    assert row["newTopField"] == {"deep": [1, 2]} and row["buyer"]["address"]["extraNote"] == "gate 2"
    assert row["items"][0]["giftWrap"] is True and row["grossGain"]["cents"] == 9700
    model = Sale.model_validate(raw)
    assert model.model_extra == {"newTopField": {"deep": [1, 2]}}
    assert model.model_dump()["items"][0]["giftWrap"] is True


# --- whole pages, strictly (the helper processes' path) ---


def _page_body(items: list[Any], **envelope: Any) -> bytes:
    return json.dumps(
        {"page": 2, "pages": 3, "itemsPerPage": 100, "totalItems": 250, **envelope, "items": items}
    ).encode()


@pytest.mark.parametrize(("model", "name"), ALL, ids=IDS)
def test_a_strictly_valid_page_gives_the_rows_parse_record_gives(model: type[ApiModel], name: str) -> None:
    items = [record(name), record(name)]
    document = parse_page_strictly(model, _page_body(items))
    assert document["items"] == [parse_record(model, item) for item in items]
    assert (document["page"], document["pages"], document["totalItems"]) == (2, 3, 250)


def test_a_strict_page_prunes_null_nested_objects_like_parse_record() -> None:
    items = [null_sale(), record("sale")]
    assert parse_page_strictly(Sale, _page_body(items))["items"] == [parse_record(Sale, i) for i in items]


def _nested_extra(raw: dict[str, Any]) -> None:
    raw["buyer"]["address"]["extraNote"] = "gate 2"


def _extra_in_a_list(raw: dict[str, Any]) -> None:
    raw["items"][0]["giftWrap"] = True


def _unknown_enum_value(raw: dict[str, Any]) -> None:
    raw["payment"]["method"] = "brandNewValue"


def _null_required(raw: dict[str, Any]) -> None:
    raw["buyer"]["address"]["zipCode"] = None


@pytest.mark.parametrize("change", [_nested_extra, _extra_in_a_list, _unknown_enum_value, _null_required])
def test_a_page_with_anything_parse_record_would_keep_leniently_or_reject_is_refused(change: Any) -> None:
    items = [record("sale"), record("sale")]
    change(items[1])
    with pytest.raises(ValueError):
        parse_page_strictly(Sale, _page_body(items))


@pytest.mark.parametrize(
    "content",
    [b'{"items": [', b"[]", b'{"page": 1}', b'{"items": {}}', b'{"items": [3]}', b'{"items": []} x'],
)
def test_a_body_that_is_not_a_page_of_records_is_refused(content: bytes) -> None:
    with pytest.raises(ValueError):
        parse_page_strictly(Sale, content)


# --- enums ---

ENUM_CASES = [  # (record, field path, ENUMS key)
    ("sale", "status", "sale.status"),
    ("sale", "recoveringStatus", "sale.recoveringStatus"),
    ("sale", "payment.method", "sale.payment.method"),
    ("sale", "payment.detail", "sale.payment.detail"),
    ("sale", "product.type", "sale.product.type"),
    ("sale", "product.billingType", "sale.product.billingType"),
    ("sale", "refund.type", "sale.refund.type"),
    ("subscription", "status", "subscription.status"),
    ("subscription", "interruption.previousStatus", "subscription.status"),
    ("subscription", "interruption.type", "subscription.interruption.type"),
    ("subscription", "recurrence.frequency.type", "subscription.recurrence.frequency.type"),
    ("subscription", "payment.method", "subscription.payment.method"),
    ("product", "type", "sale.product.type"),
    ("product", "status", "product.status"),
    ("product", "moderation", "product.moderation"),
    ("product", "payment.type", "product.payment.type"),
    ("partner", "commission.type", "partner.commission.type"),
    ("affiliation", "status", "affiliation.status"),
    ("transfer", "status", "transfer.status"),
    ("transfer", "bankAccount.type", "transfer.bankAccount.type"),
    ("event", "type", "event.type"),
    ("attendee", "documentType", "attendee.documentType"),
    ("attendee", "status", "attendee.status"),
    ("manual_attendee", "documentType", "attendee.documentType"),
    ("delivery", "platform", "delivery.platform"),
    ("lesson_comment", "status", "lesson_comment.status"),
    ("lesson_comment", "type", "lesson_comment.type"),
]


def _set(raw: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        raw = raw[key]
    raw[path[-1]] = value


def test_enum_cases_cover_every_enum() -> None:
    # document.status is a plain string in the spec; part 3 lists the *filter* states, not enforced
    assert {case[2] for case in ENUM_CASES} == set(ENUMS) - {"fiscal_document.status"}
    assert all(len(values) == len(set(values)) for values in ENUMS.values())
    raw = record("fiscal_document")
    raw["document"]["status"] = "somethingNew"
    assert parse_record(STREAMS["fiscal_documents"].model, raw)["document"]["status"] == "somethingNew"


@pytest.mark.parametrize(("name", "dotted", "key"), ENUM_CASES, ids=[f"{c[0]}.{c[1]}" for c in ENUM_CASES])
def test_enum_accepts_its_values_and_rejects_others(name: str, dotted: str, key: str) -> None:
    model, path = MODELS[name], tuple(dotted.split("."))
    for allowed in ENUMS[key]:
        raw = record(name)
        _set(raw, path, allowed)
        assert parse_record(model, raw) is not None
    for sent, kept in (("brandNewValue", "brandNewValue"), (17, "17")):
        raw = record(name)
        _set(raw, path, sent)
        row, departures = _read(model, raw)
        node: Any = row
        for part in path:
            node = node[part]
        assert node == kept and departures == [Departure(".".join(path), "unlisted_value", sent)]
        with pytest.raises(RecordValidationError) as error:
            parse_record(model, raw, strict=True)
        assert f"{'.'.join(path)}: got {sent!r}" in str(error.value) and "does not list" in str(error.value)


class _Line(ApiModel):
    kind: Literal["a", "b"]
    amount: int


class _Doc(ApiModel):
    id: str
    lines: list[_Line]
    labels: list[Literal["x", "y"]]


def test_lenient_enums_inside_lists_keep_the_value_and_leave_the_input_alone() -> None:
    raw: dict[str, Any] = {
        "id": "d1",
        "lines": [{"kind": "a", "amount": 1}, {"kind": "zz", "amount": 2}],
        "labels": ["x", "q"],
    }
    original = copy.deepcopy(raw)
    row, departures = _read(_Doc, raw)
    assert row == original and raw == original
    assert departures == [
        Departure("lines[].kind", "unlisted_value", "zz"),
        Departure("labels[]", "unlisted_value", "q"),
    ]
    raw["lines"][0]["amount"] = "many"
    raw["lines"][1]["amount"] = 2.0
    raw["labels"].append(None)
    row, departures = _read(_Doc, raw)
    assert row["lines"] == [{"kind": "a", "amount": None}, {"kind": "zz", "amount": 2}]
    assert row["labels"] == ["x", "q"]
    assert departures == [
        Departure("lines[].amount", "unconvertible", "many"),
        Departure("lines[].kind", "unlisted_value", "zz"),
        Departure("lines[].amount", "converted", 2.0),
        Departure("labels[]", "unlisted_value", "q"),
        Departure("labels[]", "null"),
    ]


def test_error_message_names_every_problem() -> None:
    raw = record("sale")
    del raw["total"]
    raw["items"][0]["quantity"] = "two"
    raw["installments"] = "9" * 40 + "x" * 500
    raw["payment"]["method"] = "boleto"
    with pytest.raises(RecordValidationError) as error:
        parse_record(Sale, raw, strict=True)
    exc = error.value
    assert (exc.resource, exc.record_id) == ("sales", "s1")
    paths = {p.path for p in exc.problems}
    assert paths == {"total", "items[].quantity", "installments", "payment.method"}
    message = str(exc)
    assert message.startswith("sales record 's1' departs from the API spec (4 problems):")
    assert (
        "total: missing" in message
        and "items[].quantity: got 'two' (str); of another type than documented, and not convertible"
        in message
    )
    assert "x" * 100 not in message and "What to do" in message
    assert "installments: got '9999" in message and "x... (str)" in message
    assert str(pickle.loads(pickle.dumps(exc))) == message
    with pytest.raises(RecordValidationError, match=r"enrollments record departs from"):
        parse_record(
            Enrollment, {**record("enrollment"), "progress": "lots"}, resource="enrollments", strict=True
        )
    with pytest.raises(RecordValidationError, match=r"\(record\)"):
        parse_record(Sale, ["not", "an", "object"])  # type: ignore[arg-type]


# --- dlt column hints ---

NAMING = NamingConvention()
PY_TO_DLT = [
    (bool, "bool"),
    (int, "bigint"),
    (float, "double"),
    (Decimal, "decimal"),
    (datetime, "timestamp"),
    (str, "text"),
    (dict, "json"),
]


def _data_type(value: Any) -> str:
    return next(data_type for py_type, data_type in PY_TO_DLT if isinstance(value, py_type))


def _flatten(model: type[ApiModel], row: dict[str, Any]) -> dict[tuple[str, ...], dict[str, Any]]:
    """Columns (name -> first non-null value) of every table a row produces, flattened like dlt does."""
    hints: dict[tuple[str, ...], Any] = {(): columns_for(model)}
    hints.update({path: h["columns"] for path, h in nested_hints_for(model).items()})  # type: ignore[misc]
    tables: dict[tuple[str, ...], dict[str, Any]] = {}

    def walk_table(path: tuple[str, ...], item: Any) -> None:
        columns = tables.setdefault(path, {})
        if not isinstance(item, dict):
            columns.setdefault("value", item)
            return
        walk_object(path, item, (), columns)

    def walk_object(
        path: tuple[str, ...], obj: dict[str, Any], prefix: tuple[str, ...], columns: dict
    ) -> None:
        for key, value in obj.items():
            name = (*prefix, NAMING.normalize_path(key))
            column = NAMING.shorten_fragments(*name)
            if isinstance(value, dict) and hints[path].get(column, {}).get("data_type") != "json":
                walk_object(path, value, name, columns)
            elif isinstance(value, list):
                for element in value:
                    walk_table((*path, NAMING.normalize_tables_path(key)), element)
            elif columns.get(column) is None:
                columns[column] = value

    walk_table((), row)
    return tables


@pytest.mark.parametrize(("model", "name"), ALL, ids=IDS)
def test_hints_declare_every_column_with_its_type(model: type[ApiModel], name: str) -> None:
    tables = _flatten(model, parse_record(model, record(name)))
    hints: dict[tuple[str, ...], Any] = {(): columns_for(model)}
    hints.update({path: h["columns"] for path, h in nested_hints_for(model).items()})  # type: ignore[misc]
    assert tables.keys() == hints.keys()
    for path, columns in tables.items():
        assert columns.keys() == hints[path].keys(), path
        for name, value in columns.items():
            hint = hints[path][name]
            assert hint["name"] == name
            if value is None:
                assert hint["nullable"] is True, (path, name)
            else:
                assert hint["data_type"] == _data_type(value), (path, name)
            assert hint.get("timezone") is (True if hint["data_type"] == "timestamp" else None)


def _child(model: type[ApiModel], *path: str) -> dict[str, Any]:
    hints: Any = nested_hints_for(model)[path]
    return dict(hints["columns"])


def test_hints_of_the_sale() -> None:
    columns = columns_for(Sale)
    # every column takes nulls: the API sends them where the spec has none (the source's keys do not)
    assert columns["gross_gain__value"] == {
        "name": "gross_gain__value",
        "data_type": "decimal",
        "nullable": True,
    }
    assert columns["created_at"] == {
        "name": "created_at",
        "data_type": "timestamp",
        "nullable": True,
        "timezone": True,
    }
    assert columns["order_bump__main_sale_id"] == {
        "name": "order_bump__main_sale_id",
        "data_type": "bigint",
        "nullable": True,
    }
    assert columns["is_infinite_funnel"]["data_type"] == "bool"
    assert set(nested_hints_for(Sale)) == {("affiliates",), ("partners",), ("items",)}
    assert _child(Sale, "items")["unit_value__value"]["data_type"] == "decimal"
    assert enum_columns(Sale)[()]["payment__method"] == ENUMS["sale.payment.method"]
    assert columns_for(Attendee)["custom_fields"]["data_type"] == "json"
    # platformId and platform_id: one column
    assert columns_for(Token)["user__platform_id"]["data_type"] == "bigint"


def test_nested_hints_of_lists() -> None:
    events = nested_hints_for(TicketedEvent)
    assert set(events) == {("transmission_links",), ("files",), ("tickets",), ("tickets", "lots")}
    assert _child(TicketedEvent, "files") == {
        "value": {"name": "value", "data_type": "text", "nullable": True}
    }
    assert _child(TicketedEvent, "tickets", "lots")["value"]["data_type"] == "decimal"
    subscription_lists = {("products",), ("products", "deliveries")}
    assert set(nested_hints_for(STREAMS["subscriptions"].model)) == subscription_lists
    assert set(nested_hints_for(STREAMS["webhook_origins"].model)) == {("events",), ("events", "metadata")}


DUCKDB_TYPES = {
    "text": "VARCHAR",
    "bigint": "BIGINT",
    "double": "DOUBLE",
    "decimal": "DECIMAL(38,9)",
    "bool": "BOOLEAN",
    "timestamp": "TIMESTAMP WITH TIME ZONE",
    "json": "JSON",
}
ROOT_DLT = {"_dlt_load_id": ("VARCHAR", "NO"), "_dlt_id": ("VARCHAR", "NO")}
CHILD_DLT = {
    "_dlt_root_id": ("VARCHAR", "NO"),
    "_dlt_parent_id": ("VARCHAR", "NO"),
    "_dlt_list_idx": ("BIGINT", "NO"),
    "_dlt_id": ("VARCHAR", "NO"),
}


def _expected(model: type[ApiModel], table: str) -> dict[str, dict[str, tuple[str, str]]]:
    def typed(columns: Any) -> dict[str, tuple[str, str]]:
        return {
            n: (DUCKDB_TYPES[c["data_type"]], "YES" if c["nullable"] else "NO") for n, c in columns.items()
        }

    out = {table: typed(columns_for(model)) | ROOT_DLT}
    for path, hints in nested_hints_for(model).items():
        out["__".join((table, *path))] = typed(hints["columns"]) | CHILD_DLT
    return out


def _resource(name: str, model: type[ApiModel], rows: list[dict[str, Any]]) -> Any:
    return dlt.resource(
        rows,
        name=name,
        columns=columns_for(model),
        nested_hints=nested_hints_for(model),
        primary_key="id",
        write_disposition="merge",
    )


def _schema(path: str) -> dict[str, dict[str, tuple[str, str]]]:
    with duckdb.connect(path, read_only=True) as connection:
        rows = connection.execute(
            "select table_name, column_name, data_type, is_nullable from information_schema.columns "
            "where table_schema = 'platform_raw' and table_name not like '\\_dlt%' escape '\\'"
        ).fetchall()
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    for table, column, data_type, nullable in rows:
        tables.setdefault(table, {})[column] = (data_type, nullable)
    return tables


def test_rows_load_into_duckdb_with_the_hinted_types(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RUNTIME__DLTHUB_TELEMETRY", "false")
    database = str(tmp_path / "warehouse.duckdb")
    pipeline = dlt.pipeline(
        pipeline_name="models_test",
        destination=dlt.destinations.duckdb(database),
        dataset_name="platform_raw",
        pipelines_dir=str(tmp_path / "pipelines"),
    )

    # a load with only nulls in every nullable column: the columns exist all the same
    pipeline.run([_resource("sales", Sale, [parse_record(Sale, null_sale())])]).raise_on_failed_jobs()
    assert _schema(database) == {"sales": _expected(Sale, "sales")["sales"]}

    full = record("sale")
    full["newTopField"] = "hello"
    full["buyer"]["address"]["extraNote"] = "gate 2"
    full["items"][0]["giftWrap"] = True
    rows = [parse_record(Sale, full)]
    pipeline.run(
        [
            _resource("sales", Sale, rows),
            _resource("events", TicketedEvent, [parse_record(TicketedEvent, record("event"))]),
            _resource("event_attendees", Attendee, [parse_record(Attendee, record("attendee"))]),
        ]
    ).raise_on_failed_jobs()

    expected = (
        _expected(Sale, "sales") | _expected(TicketedEvent, "events") | _expected(Attendee, "event_attendees")
    )
    expected["sales"] |= {
        "new_top_field": ("VARCHAR", "YES"),
        "buyer__address__extra_note": ("VARCHAR", "YES"),
    }
    expected["sales__items"] |= {"gift_wrap": ("BOOLEAN", "YES")}
    assert _schema(database) == expected
    assert set(expected) == {
        "sales",
        "sales__items",
        "sales__affiliates",
        "sales__partners",
        "events",
        "events__tickets",
        "events__tickets__lots",
        "events__transmission_links",
        "events__files",
        "event_attendees",
        "event_attendees__tags",
    }

    with duckdb.connect(database, read_only=True) as connection:
        connection.execute("set schema 'platform_raw'")
        gross, created, fee, extra = connection.execute(
            "select gross_gain__value, created_at, company_x_fee__value, new_top_field "
            "from sales where id = 's1'"
        ).fetchone()  # type: ignore[misc]
        assert gross == Decimal("97") and fee == Decimal("1.99") and extra == "hello"
        assert created == datetime(2026, 5, 1, 11, 59, tzinfo=UTC)
        lots = connection.execute("select value, platform_product_id from events__tickets__lots").fetchall()
        assert lots == [(Decimal("49.9"), 42)]
        custom = connection.execute("select custom_fields::varchar from event_attendees").fetchone()
        assert custom is not None and '"shirt":"M"' in custom[0].replace(" ", "")
