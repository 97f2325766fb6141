"""A small `platform_raw` dataset in DuckDB, shaped as the dlt pipeline loads it (docs/contracts.md part 4).

The records below are written as the API returns them (api-spec part 2, camelCase, nested objects and
lists). `flatten` turns them into raw tables the way dlt does: dlt's snake_case naming convention on every
path segment, nested objects flattened with `__`, lists into child tables `parent__child` with `_dlt_id`,
`_dlt_parent_id`, `_dlt_list_idx`, `_dlt_root_id` (lists of strings into a `value` column), `_dlt_id` and
`_dlt_load_id` on root rows. Column names are therefore derived from the spec, not copied from the dbt
models that read them. Types: Decimal -> DECIMAL(38,9), datetime -> TIMESTAMPTZ, and so on; a column is
typed by its first non-null value, so every field is non-null in at least one record.

The numbers are chosen so that the marts have known answers (see test_models_on_fixture.py).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
from dlt.common.normalizers.naming.snake_case import NamingConvention

RAW_SCHEMA = "platform_raw"
LOAD_ID = "1780000000.123456"  # 2026-05-28T20:26:40Z
JSON_FIELDS = {("event_attendees", "customFields")}  # free key-value maps: one json column

_naming = NamingConvention()


def ts(value: str) -> datetime:
    """`2026-03-05T10:00:00` -> aware UTC datetime."""
    return datetime.fromisoformat(value).replace(tzinfo=UTC)


def money(value: str, currency: str = "BRL") -> dict[str, Any]:
    return {"currency": currency, "value": Decimal(value)}


# --------------------------------------------------------------------------------------------- records


def _sale(sale_id: str, **overrides: Any) -> dict[str, Any]:
    """A paid credit-card sale of product P1; overrides replace top-level fields.

    Amounts add up: gross = net + fee + companyXFee + installmentSettlementFee + others + partnersGain +
    affiliatesGain, and the gains equal the sums over `partners[]` and `affiliates[]`.
    """
    sale: dict[str, Any] = {
        "id": sale_id,
        "contractId": None,
        "status": "paid",
        "grossGain": money("100.00"),
        "netGain": money("80.00"),
        "partnersGain": money("0.00"),
        "affiliatesGain": money("0.00"),
        "fee": money("19.00"),
        "total": money("100.00"),
        "totalInterest": money("100.00"),
        "installments": 1,
        "companyXFee": None,
        "installmentSettlementFee": None,
        "others": money("1.00"),
        "currency": "BRL",
        "locale": "pt-BR",
        "dueDate": ts("2026-03-05T00:00:00"),
        "paidAt": ts("2026-03-05T10:00:00"),
        "creditDate": ts("2026-04-04T00:00:00"),
        "isInfiniteFunnel": False,
        "recoveringStatus": "inactive",
        "tracker": None,
        "tracker2": None,
        "tracker3": None,
        "createdAt": ts("2026-03-05T09:00:00"),
        "updatedAt": ts("2026-03-05T10:00:00"),
        "payment": {"method": "creditCard", "detail": "visaCreditCard", "link": None},
        "product": {
            "id": "P1",
            "name": "Course One",
            "type": "digital",
            "billingType": "single",
            "sku": None,
        },
        "refund": None,
        "affiliate": None,
        "recipient": {
            "id": "R1",
            "name": "Producer",
            "email": "p@example.com",
            "document": "1",
            "phone": "1",
        },
        "buyer": {
            "id": "B1",
            "name": "Ana",
            "email": "ana@example.com",
            "document": "111",
            "phone": "5511",
            "phone2": None,
            "phone3": None,
            "address": {
                "zipCode": "01000-000",
                "street": "Rua A",
                "neighborhood": "Centro",
                "city": "Sao Paulo",
                "state": "SP",
                "number": None,
                "complement": None,
            },
        },
        "producer": {"id": "PR1", "name": "Producer"},
        "affiliates": [],
        "partners": [],
        "items": [
            {
                "id": f"{sale_id}-1",
                "productId": "P1",
                "description": "Course One",
                "unitValue": money("100.00"),
                "quantity": 1,
                "value": money("100.00"),
                "discount": None,
                "freightType": None,
                "freightDeadline": None,
                "trackingCode": None,
            }
        ],
        "offer": {"name": None},
        "utm": None,
        "orderBump": {"has": False, "isMainSale": False, "mainSaleId": None},
    }
    sale.update(overrides)
    return sale


def sale(sale_id: str, **overrides: Any) -> dict[str, Any]:
    """A paid credit-card sale of product P1 whose amounts add up (the fixture's own, for other fixtures)."""
    return _sale(sale_id, **overrides)


def _subscription(sub_id: str, **overrides: Any) -> dict[str, Any]:
    sub: dict[str, Any] = {
        "id": sub_id,
        "createdAt": ts("2026-03-05T09:00:00"),
        "updatedAt": ts("2026-03-05T09:00:00"),
        "status": "upToDate",
        "firstInvoiceId": "1001",
        "isFinite": False,
        "isUnlimitedInstallments": True,
        "hasNegotiation": False,
        "interruption": None,
        "recurrence": {
            "startsAt": ts("2026-03-05T09:00:00"),
            "nextDueDate": ts("2026-06-05T00:00:00"),
            "currentDueDate": ts("2026-05-05T00:00:00"),
            "finalDueDate": None,
            "finishesAt": None,
            "frequency": {"type": "monthly", "value": 1},
        },
        "charges": {"total": 3, "current": 3, "paid": 3, "pending": 0, "negotiated": 0},
        "products": [
            {
                "id": "P1",
                "title": "Course One",
                "hasMembershipFee": False,
                "membershipFee": money("0.00"),
                "deliveries": ["memberArea"],
            }
        ],
        "payment": {"price": money("30.00"), "method": "creditcard", "installments": 1},
        "client": {
            "name": "Ana",
            "email": "ana@example.com",
            "phone": {"countryCode": "55", "areaCode": "11", "number": "99999"},
        },
    }
    sub.update(overrides)
    return sub


def records() -> dict[str, list[dict[str, Any]]]:
    """Fresh API-shaped records per raw root table."""
    products = [
        {
            "id": "P1",
            "name": "Course One",
            "description": "A course",
            "producerId": "PR1",
            "author": "Producer",
            "imageUrl": "https://img/p1",
            "type": "digital",
            "status": "active",
            "moderation": "approved",
            "createdAt": ts("2025-01-01T00:00:00"),
            "updatedAt": ts("2026-01-01T00:00:00"),
            "payment": {
                "type": "subscription",
                "price": money("30.00"),
                "methods": {"bankslip": True, "pix": True, "card": True, "multipleCards": False},
            },
        },
        {
            "id": "P2",
            "name": "Book",
            "description": "A printed book",
            "producerId": "PR1",
            "author": "Producer",
            "imageUrl": "https://img/p2",
            "type": "physical",
            "status": "active",
            "moderation": "approved",
            "createdAt": ts("2025-02-01T00:00:00"),
            "updatedAt": ts("2026-01-01T00:00:00"),
            "payment": {
                "type": "oneTime",
                "price": money("200.00"),
                "methods": {"bankslip": True, "pix": True, "card": True, "multipleCards": True},
            },
        },
        {
            "id": "P3",
            "name": "Free guide",
            "description": "A free guide",
            "producerId": "PR1",
            "author": "Producer",
            "imageUrl": "https://img/p3",
            "type": "digital",
            "status": "inactive",
            "moderation": "pending",
            "createdAt": ts("2025-03-01T00:00:00"),
            "updatedAt": ts("2026-01-01T00:00:00"),
            "payment": {
                "type": "free",
                "price": money("0.00"),
                "methods": {"bankslip": False, "pix": False, "card": False, "multipleCards": False},
            },
        },
    ]
    campaign = {
        "key": "k",
        "url": "https://c",
        "resultPerClick": {"affiliate": 0.5, "producer": 1.5},
        "isInfinityFunnel": False,
        "createdAt": ts("2026-01-01T00:00:00"),
    }
    product_campaigns = [
        {**campaign, "id": "C1", "title": "Launch", "isActive": True, "productId": "P1"},
        {**campaign, "id": "C2", "title": "Old", "isActive": False, "productId": "P1"},
        {**campaign, "id": "C3", "title": "Book launch", "isActive": True, "productId": "P2"},
    ]
    partner = {
        "id": "PA1",
        "name": "Partner",
        "email": "partner@example.com",
        "permission": {"canManageAffiliates": True, "canRefund": False, "canViewCustomerData": True},
    }
    product_partners = [
        {
            **partner,
            "commission": {"type": "percentage", "value": 10.0, "onlyByAffiliate": False},
            "productId": "P1",
        },
        {
            **partner,
            "commission": {"type": "value", "value": 5.0, "onlyByAffiliate": True},
            "productId": "P2",
        },
    ]
    affiliation = {
        "requestedAt": ts("2026-01-01T00:00:00"),
        "updatedAt": ts("2026-01-02T00:00:00"),
        "createdAt": ts("2026-01-01T00:00:00"),
    }
    affiliations = [
        {
            **affiliation,
            "id": "AF1",
            "status": "approved",
            "approvedAt": ts("2026-01-02T00:00:00"),
            "product": {"id": "P1", "name": "Course One"},
            "customer": {"id": "A1", "name": "Aff One"},
        },
        {
            **affiliation,
            "id": "AF2",
            "status": "pending",
            "approvedAt": None,
            "product": {"id": "P1", "name": "Course One"},
            "customer": {"id": "A2", "name": "Aff Two"},
        },
        {
            **affiliation,
            "id": "AF3",
            "status": "canceled",
            "approvedAt": None,
            "product": {"id": "P2", "name": "Book"},
            "customer": {"id": "A1", "name": "Aff One"},
        },
    ]
    bank = {"type": "checkingAccount", "bankCode": "001", "agency": "1234", "account": "5678-9"}
    transfers = [
        # date-only dates arrive as midnight UTC
        {
            "id": "T1",
            "value": money("100.00"),
            "requestedAt": ts("2026-04-10T00:00:00"),
            "completedAt": ts("2026-04-11T15:00:00"),
            "createdAt": ts("2026-04-10T08:00:00"),
            "status": "confirmed",
            "details": "ok",
            "bankAccount": bank,
        },
        {
            "id": "T2",
            "value": money("50.00"),
            "requestedAt": ts("2026-05-20T00:00:00"),
            "completedAt": None,
            "createdAt": ts("2026-05-20T08:00:00"),
            "status": "pending",
            "details": None,
            "bankAccount": {**bank, "type": None},
        },
        {
            "id": "T3",
            "value": money("20.00"),
            "requestedAt": ts("2026-05-01T00:00:00"),
            "completedAt": ts("2026-05-02T00:00:00"),
            "createdAt": ts("2026-05-01T08:00:00"),
            "status": "confirmed",
            "details": None,
            "bankAccount": bank,
        },
    ]
    subscriptions = [
        # S1: 30.00 every month since March, active: MRR 30.00 in March, April and May
        _subscription("S1"),
        # S2: 480.00 a year (40.00 a month) from March 10, canceled on May 2: MRR 40.00 in March and April
        _subscription(
            "S2",
            status="canceled",
            createdAt=ts("2026-03-10T09:00:00"),
            updatedAt=ts("2026-05-02T12:00:00"),
            interruption={
                "createdAt": ts("2026-05-02T12:00:00"),
                "type": "cancel",
                "removeAccessDate": ts("2026-05-02T12:00:00"),
                "reason": "too expensive",
                "origin": "buyer",
                "responsible": "Ana",
                "previousStatus": "upToDate",
            },
            recurrence={
                "startsAt": ts("2026-03-10T09:00:00"),
                "nextDueDate": None,
                "currentDueDate": ts("2026-03-10T00:00:00"),
                "finalDueDate": ts("2027-03-10T00:00:00"),
                "finishesAt": ts("2027-03-10T00:00:00"),
                "frequency": {"type": "yearly", "value": 1},
            },
            payment={"price": money("480.00"), "method": "pix", "installments": 1},
        ),
        # S3: a trial since May: active, but no MRR
        _subscription(
            "S3",
            status="trial",
            createdAt=ts("2026-05-01T09:00:00"),
            updatedAt=ts("2026-05-01T09:00:00"),
            recurrence={
                "startsAt": ts("2026-05-01T09:00:00"),
                "nextDueDate": ts("2026-05-15T00:00:00"),
                "currentDueDate": None,
                "finalDueDate": None,
                "finishesAt": None,
                "frequency": {"type": "weekly", "value": 2},
            },
            payment={"price": money("10.00"), "method": "bankslip", "installments": 1},
        ),
    ]
    sales = [
        # 1001: paid by card, through affiliate A1, with a partner
        _sale(
            "1001",
            affiliate={"id": "A1", "name": "Aff One"},
            affiliates=[
                {"id": "A1", "name": "Aff One", "email": "a1@example.com", "netGain": money("10.00")}
            ],
            partners=[
                {"id": "PA1", "name": "Partner", "email": "partner@example.com", "netGain": money("5.00")}
            ],
            utm={
                "source": "newsletter",
                "campaign": "launch",
                "medium": "email",
                "content": "a",
                "term": "t",
            },
            tracker="t1",
            tracker2="t2",
            tracker3="t3",
            offer={"name": "Launch offer"},
            orderBump={"has": True, "isMainSale": True, "mainSaleId": None},
            contractId="S1",
            partnersGain=money("5.00"),
            affiliatesGain=money("10.00"),
            fee=money("4.00"),
        ),
        # 1002: the order bump of 1001, paid by card
        _sale(
            "1002",
            grossGain=money("20.00"),
            netGain=money("16.00"),
            partnersGain=money("0.00"),
            affiliatesGain=money("0.00"),
            fee=money("2.00"),
            total=money("20.00"),
            totalInterest=money("20.00"),
            others=money("2.00"),
            orderBump={"has": True, "isMainSale": False, "mainSaleId": 1001},
        ),
        # 1003: paid by Pix on March 20, refunded in full on April 10
        _sale(
            "1003",
            status="refunded",
            grossGain=money("200.00"),
            netGain=money("187.00"),
            partnersGain=money("0.00"),
            affiliatesGain=money("0.00"),
            fee=money("10.00"),
            total=money("200.00"),
            totalInterest=money("200.00"),
            others=money("0.00"),
            companyXFee=money("2.00"),
            installmentSettlementFee=money("1.00"),
            paidAt=ts("2026-03-20T10:00:00"),
            creditDate=ts("2026-04-19T00:00:00"),
            createdAt=ts("2026-03-20T09:00:00"),
            updatedAt=ts("2026-04-10T10:00:00"),
            payment={"method": "pix", "detail": "pix", "link": "https://pix"},
            product={"id": "P2", "name": "Book", "type": "physical", "billingType": "single", "sku": "BK-1"},
            buyer={
                **_sale("x")["buyer"],
                "id": "B2",
                "name": "Bruno",
                "email": "bruno@example.com",
                "phone2": "2",
                "phone3": "3",
                "address": {**_sale("x")["buyer"]["address"], "number": "10", "complement": "ap 1"},
            },
            refund={
                "type": "common",
                "value": money("200.00"),
                "partialValue": money("0.00"),
                "refundedAt": ts("2026-04-10T10:00:00"),
                "requestedAt": ts("2026-04-09T10:00:00"),
                "motive": "changed mind",
                "requesterName": "Bruno",
            },
            items=[
                {
                    "id": "1003-1",
                    "productId": "P2",
                    "description": "Book",
                    "unitValue": money("100.00"),
                    "quantity": 2,
                    "value": money("200.00"),
                    "discount": money("0.00"),
                    "freightType": "standard",
                    "freightDeadline": "10 days",
                    "trackingCode": "TRK1",
                }
            ],
        ),
        # 1004: paid by card on April 5, partial refund of 30.00
        _sale(
            "1004",
            paidAt=ts("2026-04-05T10:00:00"),
            creditDate=ts("2026-05-05T00:00:00"),
            createdAt=ts("2026-04-05T09:00:00"),
            updatedAt=ts("2026-04-20T10:00:00"),
            buyer={**_sale("x")["buyer"], "id": "B2", "name": "Bruno", "email": "bruno@example.com"},
            refund={
                "type": "partial",
                "value": money("100.00"),
                "partialValue": money("30.00"),
                "refundedAt": ts("2026-04-20T10:00:00"),
                "requestedAt": ts("2026-04-19T10:00:00"),
                "motive": "late",
                "requesterName": "Bruno",
            },
        ),
        # 1005: a bank slip waiting for payment
        _sale(
            "1005",
            status="waitingPayment",
            paidAt=None,
            creditDate=None,
            createdAt=ts("2026-05-10T09:00:00"),
            updatedAt=ts("2026-05-10T09:00:00"),
            dueDate=ts("2026-05-13T00:00:00"),
            payment={"method": "bankslip", "detail": "cefBankslip", "link": "https://slip"},
            buyer={**_sale("x")["buyer"], "id": "B3", "name": "Carla", "email": "carla@example.com"},
        ),
        # 1006: a canceled card payment
        _sale(
            "1006",
            status="canceled",
            paidAt=None,
            creditDate=None,
            createdAt=ts("2026-05-11T09:00:00"),
            updatedAt=ts("2026-05-11T09:30:00"),
            buyer={**_sale("x")["buyer"], "id": "B3", "name": "Carla", "email": "carla@example.com"},
        ),
    ]
    address = {
        "street": "R",
        "number": "1",
        "complement": "c",
        "district": "d",
        "zipCode": "0",
        "city": "C",
        "uf": "SP",
    }
    fiscal_documents = [
        {
            "document": {
                "id": f"FD{n}",
                "name": "NFS-e",
                "status": status,
                "type": "nfse",
                "baseValue": money(value),
                "emissionDate": ts(f"2026-0{month}-06T00:00:00"),
                "referenceDate": ts(f"2026-0{month}-05T00:00:00"),
                "processingDate": ts(f"2026-0{month}-06T01:00:00"),
                "taxation": {
                    "nbs": {"code": "1", "description": "d"},
                    "taxClassification": {"code": "2", "description": "d"},
                    "operationIndicator": {"code": "3", "description": "d"},
                },
            },
            "source": {
                "taxType": "PJ",
                "companyName": "Producer",
                "document": "1",
                "ie": "i",
                "im": "m",
                "email": "p@example.com",
                "tel": "1",
                "tel2": "2",
                "cell": "3",
                "address": address,
            },
            "destination": {
                "companyName": "Ana",
                "taxType": "PF",
                "taxId": "111",
                "ie": "i",
                "im": "m",
                "email": "ana@example.com",
                "tel": "1",
                "tel2": "2",
                "cell": "3",
                "address": {**address, "countryForeign": "x", "country": "BR"},
            },
            "sale": {"id": sale_id, "paymentDate": ts(f"2026-0{month}-05T10:00:00"), "total": money(value)},
            "client": {
                "id": "B1",
                "name": "Ana",
                "document": "111",
                "email": "ana@example.com",
                "cellphone": "1",
                "telephone": "2",
                "telephone2": "3",
                "address": {
                    "zipCode": "0",
                    "street": "R",
                    "number": "1",
                    "complement": "c",
                    "neighborhood": "n",
                    "city": "C",
                    "state": "SP",
                },
            },
            "product": {"id": "P1", "title": "Course One"},
            "generatedByNewSystem": True,
        }
        for n, status, value, month, sale_id in [
            (1, "approved", "100.00", 3, "1001"),
            (2, "approved", "20.00", 3, "1002"),
            (3, "pending", "100.00", 4, "1004"),
        ]
    ]
    lot = {
        "isActive": True,
        "startSaleAt": ts("2026-04-01T00:00:00"),
        "endSaleAt": ts("2026-06-01T00:00:00"),
        "createdAt": ts("2026-04-01T00:00:00"),
        "modifiedAt": ts("2026-04-01T00:00:00"),
        "platformProductId": 77,
    }
    ticket = {
        "isPaid": True,
        "showOnPage": True,
        "buyLimit": False,
        "isUnlimited": False,
        "isActive": True,
        "buyMinimum": 1,
        "createdAt": ts("2026-04-01T00:00:00"),
        "modifiedAt": ts("2026-04-01T00:00:00"),
    }
    events = [
        {
            "id": "E1",
            "userId": "U1",
            "type": "presential",
            "title": "Meetup",
            "description": "A meetup",
            "saleUrl": "https://sale",
            "imageUrl": "https://img",
            "streamUrl": "https://stream",
            "reserveTime": 15,
            "transmissionLinks": ["https://live/1"],
            "files": ["https://f/1", "https://f/2"],
            "isLive": False,
            "activePrecheckout": True,
            "startAt": ts("2026-06-10T19:00:00"),
            "endAt": ts("2026-06-10T22:00:00"),
            "createdAt": ts("2026-04-01T00:00:00"),
            "modifiedAt": ts("2026-04-01T00:00:00"),
            "tickets": [
                {
                    **ticket,
                    "id": "TK1",
                    "eventId": "E1",
                    "name": "General",
                    "lots": [
                        {
                            **lot,
                            "id": "L1",
                            "ticketId": "TK1",
                            "name": "First",
                            "quantity": 10,
                            "value": 50.0,
                        },
                        {
                            **lot,
                            "id": "L2",
                            "ticketId": "TK1",
                            "name": "Second",
                            "quantity": 20,
                            "value": 70.0,
                            "isActive": False,
                        },
                    ],
                },
                {
                    **ticket,
                    "id": "TK2",
                    "eventId": "E1",
                    "name": "VIP",
                    "isUnlimited": True,
                    "lots": [
                        {**lot, "id": "L3", "ticketId": "TK2", "name": "VIP", "quantity": 5, "value": 150.0},
                    ],
                },
            ],
            "address": {
                "place": "Hall",
                "country": "BR",
                "state": "SP",
                "city": "Sao Paulo",
                "district": "Centro",
                "street": "Rua B",
                "complement": "",
                "number": "5",
                "zip": "01000-000",
                "mapUrl": "https://map",
                "geolocation": {"latitude": -23.5, "longitude": -46.6},
            },
        }
    ]
    attendee = {
        "document": "111",
        "phone": "5511",
        "documentType": "cpf",
        "inviteKey": "inv",
        "ticketName": "General",
        "manuallyCreated": False,
        "fromSqueeze": False,
        "platformId": "pl",
        "firstPlatformId": "pl",
        "invoiceId": "1001",
        "eventId": "E1",
        "createdAt": ts("2026-04-02T00:00:00"),
        "modifiedAt": ts("2026-04-02T00:00:00"),
        "invoiceCustomerName": "Ana",
        "invoiceCustomerEmail": "ana@example.com",
        "invoiceCustomerPlatformId": "pl",
        "invoiceCustomerDocument": "111",
        "customFields": {"shirt": "M"},
        "statusDescription": "ok",
        "tags": [],
    }
    event_attendees = [
        {
            **attendee,
            "id": "AT1",
            "name": "Ana",
            "email": "ana@example.com",
            "status": "confirmed",
            "ticketId": "TK1",
            "checkinDate": ts("2026-06-10T19:05:00"),
            "invoiceCreatedAt": "2026-04-02 10:00:00",
            "invoicePaidAt": "2026-04-02T10:05:00.000Z",
            "invoiceAmount": 50.0,
            "tags": ["vip", "early"],
        },
        {
            **attendee,
            "id": "AT2",
            "name": "Bruno",
            "email": "bruno@example.com",
            "status": "presence_confirmed",
            "ticketId": "TK1",
            "checkinDate": None,
            "invoiceCreatedAt": "2026-04-03T10:00:00.000Z",
            "invoicePaidAt": "2026-04-03 10:05:00",
            "invoiceAmount": 50.0,
            "manuallyCreated": True,
        },
        {
            **attendee,
            "id": "AT3",
            "name": "Carla",
            "email": "carla@example.com",
            "status": "refunded",
            "ticketId": "TK2",
            "checkinDate": None,
            "invoiceCreatedAt": "2026-04-04 10:00:00",
            "invoicePaidAt": "not a date",
            "invoiceAmount": 150.0,
            "documentType": "passport",
        },
    ]
    enrollments = [
        {
            "createdAt": "2026-03-05T09:00:00.000Z",
            "certificateUrl": "https://cert",
            "progress": 100.0,
            "course": {"name": "Course One"},
            "teamSlug": "school",
            "studentSlug": "ana",
        },
        {
            "createdAt": "2026-04-01 09:00:00",
            "certificateUrl": None,
            "progress": 12.5,
            "course": {"name": "Course Two"},
            "teamSlug": "school",
            "studentSlug": "ana",
        },
    ]
    deliveries = [
        {
            "id": 7,
            "name": "Members",
            "platform": "platform",
            "platformProductId": "P1",
            "platformOfferId": "O1",
            "isActive": True,
            "isSubscription": True,
            "autoRemoveAccess": True,
            "tags": ["members"],
            "endsAfter": 365,
            "teamSlug": "school",
        },
    ]
    community_top_posts = []
    community_commenters = []
    for snapshot, likes in [(ts("2026-05-30T06:00:00"), 3), (ts("2026-05-31T06:00:00"), 4)]:
        for post_id, comments in [(11, 5), (12, 9)]:
            community_top_posts.append(
                {
                    "id": post_id,
                    "title": f"Post {post_id}",
                    "createdAt": ts("2026-05-01T00:00:00"),
                    "updatedAt": ts("2026-05-02T00:00:00"),
                    "totalComments": comments,
                    "totalLikes": likes,
                    "member": {"id": 21, "email": "m@example.com"},
                    "space": {"id": 31, "name": "General"},
                    "tags": ["news"],
                    "communityId": 1,
                    "days": 30,
                    "snapshotAt": snapshot,
                }
            )
        community_commenters.append(
            {
                "id": 21,
                "name": "Member",
                "email": "m@example.com",
                "posts": [{"id": 11, "title": "Post 11"}, {"id": 12, "title": "Post 12"}],
                "communityId": 1,
                "days": 30,
                "snapshotAt": snapshot,
            }
        )
    comment = {
        "isRead": True,
        "isFavorite": False,
        "isFixed": False,
        "isAnswered": True,
        "createdAt": ts("2026-05-01T00:00:00"),
        "type": "text",
        "author": "Ana",
        "lessonId": 501,
    }
    lesson_comments = [
        {**comment, "id": 1, "text": "Great", "status": "approved"},
        {
            **comment,
            "id": 2,
            "text": "Hmm",
            "status": "inModeration",
            "isRead": False,
            "isAnswered": False,
            "isFavorite": True,
        },
        {
            **comment,
            "id": 3,
            "text": "<p>Spam</p>",
            "status": "rejected",
            "type": "html",
            "isFixed": True,
            "lessonId": 502,
        },
    ]
    webhook_origins = [
        {
            "id": "O1",
            "name": "Store",
            "prefix": "store",
            "events": [
                {
                    "name": "store.invoice_paid",
                    "metadata": ["producerId", "email"],
                    "description": "Invoice paid",
                },
                {
                    "name": "store.invoice_refunded",
                    "metadata": ["producerId"],
                    "description": "Invoice refunded",
                },
            ],
        },
    ]
    return copy.deepcopy(
        {
            "products": products,
            "product_campaigns": product_campaigns,
            "product_partners": product_partners,
            "affiliations": affiliations,
            "transfers": transfers,
            "subscriptions": subscriptions,
            "sales": sales,
            "fiscal_documents": fiscal_documents,
            "events": events,
            "event_attendees": event_attendees,
            "enrollments": enrollments,
            "deliveries": deliveries,
            "community_top_posts": community_top_posts,
            "community_commenters": community_commenters,
            "lesson_comments": lesson_comments,
            "webhook_origins": webhook_origins,
        }
    )


# --------------------------------------------------------------------------------------------- flattening

Table = dict[str, Any]  # {"columns": {name: sql type}, "rows": [dict]}


def _sql_type(value: Any) -> str:
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, Decimal):
        return "DECIMAL(38,9)"
    if isinstance(value, datetime):
        return "TIMESTAMPTZ"
    if isinstance(value, str):
        return "VARCHAR"
    raise TypeError(f"no SQL type for {value!r}")


class _Flattener:
    def __init__(self) -> None:
        self.tables: dict[str, dict[str, Any]] = {}
        self._counter = 0

    def _new_id(self) -> str:
        self._counter += 1
        return f"dlt{self._counter:06d}"

    def _table(self, name: str) -> dict[str, Any]:
        return self.tables.setdefault(name, {"columns": {}, "rows": []})

    def add(self, root: str, record: dict[str, Any]) -> None:
        row_id = self._new_id()
        row = {"_dlt_load_id": LOAD_ID, "_dlt_id": row_id}
        self._fill(root, root, record, row, prefix="", root_id=row_id, row_id=row_id)
        self._store(root, row)

    def _store(self, table: str, row: dict[str, Any]) -> None:
        t = self._table(table)
        for column, value in row.items():
            if value is not None and t["columns"].get(column) is None:
                t["columns"][column] = "JSON" if isinstance(value, dict) else _sql_type(value)
            t["columns"].setdefault(column, None)
        t["rows"].append(row)

    def _fill(
        self,
        root: str,
        table: str,
        obj: dict[str, Any],
        row: dict[str, Any],
        prefix: str,
        root_id: str,
        row_id: str,
    ) -> None:
        for key, value in obj.items():
            column = prefix + _naming.normalize_identifier(key)
            if (root, key) in JSON_FIELDS:
                row[column] = value
            elif isinstance(value, dict):
                self._fill(root, table, value, row, column + "__", root_id, row_id)
            elif isinstance(value, list):
                child = f"{table}__{column}"
                self._table(child)
                for index, item in enumerate(value):
                    child_id = self._new_id()
                    child_row = {
                        "_dlt_id": child_id,
                        "_dlt_parent_id": row_id,
                        "_dlt_list_idx": index,
                        "_dlt_root_id": root_id,
                    }
                    if isinstance(item, dict):
                        self._fill(root, child, item, child_row, "", root_id, child_id)
                    else:
                        child_row["value"] = item
                    self._store(child, child_row)
            else:
                row[column] = value


def flatten(data: dict[str, list[dict[str, Any]]]) -> dict[str, Table]:
    """API-shaped records per root table -> raw tables as dlt would load them."""
    flattener = _Flattener()
    for root, rows in data.items():
        flattener._table(root)
        for record in rows:
            flattener.add(root, record)
    return flattener.tables


# --------------------------------------------------------------------------------------------- loading


def create_raw(
    db_path: str | Path,
    data: dict[str, list[dict[str, Any]]] | None = None,
    *,
    schema: str = RAW_SCHEMA,
    skip_tables: Iterable[str] = (),
    skip_columns: dict[str, Iterable[str]] | None = None,
    statements: Iterable[str] = (),
) -> dict[str, Table]:
    """Create `schema` in the DuckDB file `db_path` with the fixture's raw tables.

    `skip_tables` leaves tables out (a resource never loaded, a list always empty); `skip_columns`
    leaves columns out (a nested object that was always null); `statements` run afterwards (SQL that
    breaks the data on purpose). Returns the flattened tables.
    """
    tables = flatten(data if data is not None else records())
    skip = set(skip_tables)
    skip_columns = {table: set(columns) for table, columns in (skip_columns or {}).items()}
    con = duckdb.connect(str(db_path))
    try:
        con.execute(f"create schema if not exists {schema}")
        for name, table in tables.items():
            if name in skip or not table["rows"]:
                continue
            columns = table["columns"]
            # a null object (`refund: null`) leaves a null column named like the object: dlt creates none
            objects = {
                c for c, t in columns.items() if t is None and any(o.startswith(c + "__") for o in columns)
            }
            dropped = objects | skip_columns.get(name, set())
            columns = {c: t for c, t in columns.items() if c not in dropped}
            untyped = [c for c, t in columns.items() if t is None]
            if untyped:
                raise ValueError(f"{name}: no non-null value types columns {untyped}")
            ddl = ", ".join(f'"{c}" {t}' for c, t in columns.items())
            con.execute(f'create table {schema}."{name}" ({ddl})')
            names = list(columns)
            placeholders = ", ".join("?" for _ in names)
            quoted = ", ".join(f'"{c}"' for c in names)
            con.executemany(
                f'insert into {schema}."{name}" ({quoted}) values ({placeholders})',
                [[_param(row.get(c)) for c in names] for row in table["rows"]],
            )
        con.execute(
            f"create table {schema}._dlt_loads (load_id varchar, schema_name varchar, status bigint, "
            "inserted_at timestamptz, schema_version_hash varchar)"
        )
        con.execute(
            f"insert into {schema}._dlt_loads values (?, 'platform', 0, ?, 'h')",
            [LOAD_ID, ts("2026-05-28T20:27:00")],
        )
        for statement in statements:
            con.execute(statement.format(raw=schema))
    finally:
        con.close()
    return tables


def _param(value: Any) -> Any:
    return json.dumps(value) if isinstance(value, dict) else value


if __name__ == "__main__":  # print the raw tables and their columns
    for table_name, table in flatten(records()).items():
        print(table_name, len(table["rows"]), sorted(table["columns"]))
