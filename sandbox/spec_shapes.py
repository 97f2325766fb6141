"""The spec's part 2 shapes and part 3 enums as tables, written from the spec (not from the world's code).

Used by the tests (contract shapes) and by the drift injector (`sandbox/drift`), which departs from these
shapes on purpose. Nothing here may come from `sources/`: this is an independent reading of the spec.

A schema is a JSON type name, `Opt(schema)` (nullable), `Enum(...)`, a dict (an object whose keys must
all be present; extra keys are allowed) or a one-element list (an array of that schema).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Opt:
    schema: Any


class Enum(tuple[str, ...]):
    def __new__(cls, *values: str) -> Enum:
        return super().__new__(cls, values)


S, N, B, DT, URL, UUID, OBJ = "string", "number", "boolean", "datetime", "url", "uuid", "object"
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}"  # date-only is allowed (transfers), and the zoneless "YYYY-MM-DD HH:MM:SS"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?)?"
)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def problems(value: Any, schema: Any, path: str = "$") -> list[str]:
    """Every way `value` differs from `schema` (empty when it conforms)."""
    if isinstance(schema, Opt):
        return [] if value is None else problems(value, schema.schema, path)
    if value is None:
        return [f"{path}: null but not nullable"]
    if isinstance(schema, Enum):
        return [] if value in schema else [f"{path}: {value!r} not in {list(schema)}"]
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__}, not an object"]
        found: list[str] = []
        for key, sub in schema.items():
            if key not in value:
                found.append(f"{path}.{key}: missing")
            else:
                found += problems(value[key], sub, f"{path}.{key}")
        return found
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{path}: {type(value).__name__}, not an array"]
        return [p for i, item in enumerate(value) for p in problems(item, schema[0], f"{path}[{i}]")]
    return [] if _is(value, schema) else [f"{path}: {value!r} is not a {schema}"]


def _is(value: Any, kind: str) -> bool:
    if kind == N:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == B:
        return isinstance(value, bool)
    if kind == OBJ:
        return isinstance(value, dict)
    if not isinstance(value, str):
        return False
    if kind == DT:
        return bool(_DATETIME.fullmatch(value))
    if kind == URL:
        return value.startswith(("http://", "https://"))
    if kind == UUID:
        return bool(_UUID.fullmatch(value))
    return kind == S


MONEY = {"currency": S, "value": N}
PRODUCT_TYPES = Enum("digital", "physical", "service", "ticket", "ecommerce", "package", "project")
SALE_STATUSES = Enum(
    "open",
    "processing",
    "paid",
    "canceled",
    "waitingRefund",
    "refunded",
    "duplicated",
    "expired",
    "recovering",
    "waitingPayment",
    "scheduled",
    "negotiated",
)
SUBSCRIPTION_STATUSES = Enum(
    "upToDate", "awaitingPayment", "late", "canceled", "defaulter", "suspended", "trial", "finished", "free"
)
TRANSFER_STATUSES = Enum(
    "confirmed",
    "canceled",
    "returnedMessage",
    "pending",
    "awaitingBankReturn",
    "inProgress",
    "blocked",
    "awaitingTransfer",
    "inProcess",
    "inQueue",
    "failed",
    "registeringInvoices",
)
ATTENDEE_STATUSES = Enum("confirmed", "locked", "presence_confirmed", "paid", "refunded")
# Part 3 lists these as the fiscal-document *filter* statuses; the record's `document.status` is a string
# in part 2, so FISCAL_DOCUMENT below does not use this Enum.
FISCAL_DOCUMENT_STATUSES = Enum(
    "new",
    "pending",
    "waitingDocument",
    "canceled",
    "processed",
    "approved",
    "fileGenerated",
    "processing",
    "deleted",
)
PERSON = {"id": S, "name": S, "email": S, "netGain": MONEY}

SALE = {
    "id": S,
    "contractId": Opt(S),
    "status": SALE_STATUSES,
    "grossGain": MONEY,
    "netGain": MONEY,
    "partnersGain": MONEY,
    "affiliatesGain": MONEY,
    "fee": Opt(MONEY),
    "total": MONEY,
    "totalInterest": MONEY,
    "installments": N,
    "companyXFee": Opt(MONEY),
    "installmentSettlementFee": Opt(MONEY),
    "others": MONEY,
    "currency": S,
    "locale": S,
    "dueDate": DT,
    "paidAt": Opt(DT),
    "creditDate": Opt(DT),
    "isInfiniteFunnel": B,
    "recoveringStatus": Enum("inactive", "active", "canceled"),
    "tracker": Opt(S),
    "tracker2": Opt(S),
    "tracker3": Opt(S),
    "createdAt": DT,
    "updatedAt": DT,
    "payment": {
        "method": Enum(
            "bankslip",
            "creditCard",
            "pix",
            "combinedPayment",
            "installmentBankslip",
            "eWallet",
            "platformBalance",
            "unknown",
        ),
        "detail": Enum(
            "bankslip",
            "cefBankslip",
            "creditCard",
            "amexCreditCard",
            "dinersCreditCard",
            "discoverCreditCard",
            "eloCreditCard",
            "hipercardCreditCard",
            "hiperCreditCard",
            "jcbCreditCard",
            "mastercardCreditCard",
            "unionpayCreditCard",
            "visaCreditCard",
            "pagdividido",
            "multipleCards",
            "pix",
            "automaticPix",
            "combinedPayment",
            "installmentBankslip",
            "paypal",
            "platformBalance",
            "unknown",
        ),
        "link": Opt(S),
    },
    "product": {
        "id": S,
        "name": S,
        "type": PRODUCT_TYPES,
        "billingType": Enum("recurrence", "single", "free", "other", "unknown"),
        "sku": Opt(S),
    },
    "refund": Opt(
        {
            "type": Enum("common", "partial"),
            "value": MONEY,
            "partialValue": MONEY,
            "refundedAt": Opt(DT),
            "requestedAt": Opt(DT),
            "motive": Opt(S),
            "requesterName": Opt(S),
        }
    ),
    "affiliate": Opt({"id": S, "name": S}),
    "recipient": {"id": S, "name": S, "email": S, "document": S, "phone": S},
    "buyer": {
        "id": S,
        "name": S,
        "email": S,
        "document": S,
        "phone": S,
        "phone2": Opt(S),
        "phone3": Opt(S),
        "address": {
            "zipCode": S,
            "street": S,
            "neighborhood": S,
            "city": S,
            "state": S,
            "number": Opt(S),
            "complement": Opt(S),
        },
    },
    "producer": {"id": S, "name": S},
    "affiliates": [PERSON],
    "partners": [PERSON],
    "items": [
        {
            "id": S,
            "productId": S,
            "description": S,
            "unitValue": MONEY,
            "quantity": N,
            "value": MONEY,
            "discount": Opt(MONEY),
            "freightType": Opt(S),
            "freightDeadline": Opt(S),
            "trackingCode": Opt(S),
        }
    ],
    "offer": {"name": Opt(S)},
    "utm": Opt({"source": Opt(S), "campaign": Opt(S), "medium": Opt(S), "content": Opt(S), "term": Opt(S)}),
    "orderBump": {"has": B, "isMainSale": B, "mainSaleId": Opt(N)},
}

SUBSCRIPTION = {
    "id": S,
    "createdAt": DT,
    "updatedAt": DT,
    "status": SUBSCRIPTION_STATUSES,
    "firstInvoiceId": S,
    "isFinite": B,
    "isUnlimitedInstallments": B,
    "hasNegotiation": B,
    "interruption": {
        "createdAt": DT,
        "type": Enum("cancel", "suspend"),
        "removeAccessDate": DT,
        "reason": S,
        "origin": S,
        "responsible": S,
        "previousStatus": SUBSCRIPTION_STATUSES,
    },
    "recurrence": {
        "startsAt": DT,
        "nextDueDate": DT,
        "currentDueDate": DT,
        "finalDueDate": DT,
        "finishesAt": DT,
        "frequency": {"type": Enum("daily", "weekly", "monthly", "yearly"), "value": N},
    },
    "charges": {"total": N, "current": N, "paid": N, "pending": N, "negotiated": N},
    "products": [{"id": S, "title": S, "hasMembershipFee": B, "membershipFee": MONEY, "deliveries": [S]}],
    "payment": {
        "price": MONEY,
        "method": Enum("bankslip", "creditcard", "pix", "unknown"),
        "installments": N,
    },
    "client": {"name": S, "email": S, "phone": {"countryCode": S, "areaCode": S, "number": S}},
}

PRODUCT = {
    "id": S,
    "name": S,
    "description": S,
    "producerId": S,
    "author": S,
    "imageUrl": S,
    "type": PRODUCT_TYPES,
    "status": Enum("active", "inactive"),
    "moderation": Enum("new", "approved", "pending", "refused"),
    "createdAt": DT,
    "updatedAt": DT,
    "payment": {
        "type": Enum("oneTime", "subscription", "free", "open"),
        "price": MONEY,
        "methods": {"bankslip": B, "pix": B, "card": B, "multipleCards": B},
    },
}

CAMPAIGN = {
    "id": S,
    "key": S,
    "title": S,
    "url": S,
    "resultPerClick": {"affiliate": N, "producer": N},
    "isInfinityFunnel": B,
    "isActive": B,
    "createdAt": DT,
}
PARTNER = {
    "id": S,
    "name": S,
    "email": S,
    "commission": {"type": Enum("percentage", "value"), "value": N, "onlyByAffiliate": B},
    "permission": {"canManageAffiliates": B, "canRefund": B, "canViewCustomerData": B},
}
AFFILIATION = {
    "id": S,
    "status": Enum("approved", "canceled", "pending", "removed"),
    "requestedAt": DT,
    "approvedAt": DT,
    "updatedAt": DT,
    "createdAt": DT,
    "product": {"id": S, "name": S},
    "customer": {"id": S, "name": S},
}
TRANSFER = {
    "id": S,
    "value": MONEY,
    "requestedAt": Opt(DT),
    "completedAt": Opt(DT),
    "createdAt": DT,
    "status": TRANSFER_STATUSES,
    "details": Opt(S),
    "bankAccount": {
        "type": Opt(Enum("checkingAccount", "savingsAccount")),
        "bankCode": S,
        "agency": S,
        "account": S,
    },
}
CODE = {"code": S, "description": S}
FISCAL_DOCUMENT = {
    "document": {
        "id": S,
        "name": S,
        "status": S,
        "type": S,
        "baseValue": MONEY,
        "emissionDate": DT,
        "referenceDate": DT,
        "processingDate": DT,
        "taxation": {"nbs": CODE, "taxClassification": CODE, "operationIndicator": CODE},
    },
    "source": {
        "taxType": Opt(S),
        "companyName": S,
        "document": S,
        "ie": S,
        "im": Opt(S),
        "email": S,
        "tel": Opt(S),
        "tel2": S,
        "cell": Opt(S),
        "address": {
            "street": S,
            "number": S,
            "complement": S,
            "district": S,
            "zipCode": S,
            "city": S,
            "uf": S,
        },
    },
    "destination": {
        "companyName": S,
        "taxType": S,
        "taxId": S,
        "ie": S,
        "im": Opt(S),
        "email": S,
        "tel": Opt(S),
        "tel2": Opt(S),
        "cell": S,
        "address": {
            "zipCode": S,
            "street": Opt(S),
            "number": Opt(S),
            "complement": Opt(S),
            "district": Opt(S),
            "countryForeign": Opt(S),
            "city": Opt(S),
            "uf": Opt(S),
            "country": Opt(S),
        },
    },
    "sale": {"id": S, "paymentDate": DT, "total": MONEY},
    "client": {
        "id": S,
        "name": S,
        "document": S,
        "email": S,
        "cellphone": S,
        "telephone": Opt(S),
        "telephone2": Opt(S),
        "address": {
            "zipCode": S,
            "street": Opt(S),
            "number": Opt(S),
            "complement": Opt(S),
            "neighborhood": Opt(S),
            "city": Opt(S),
            "state": Opt(S),
        },
    },
    "product": {"id": S, "title": S},
    "generatedByNewSystem": B,
}
WEBHOOK_ORIGIN = {"id": S, "name": S, "prefix": S, "events": [{"name": S, "metadata": [S], "description": S}]}
LOT = {
    "id": UUID,
    "ticketId": UUID,
    "name": S,
    "quantity": N,
    "value": N,
    "isActive": B,
    "startSaleAt": DT,
    "endSaleAt": DT,
    "createdAt": DT,
    "modifiedAt": DT,
    "platformProductId": N,
}
EVENT = {
    "id": UUID,
    "userId": UUID,
    "type": Enum("presential", "online", "live"),
    "title": S,
    "description": S,
    "saleUrl": URL,
    "imageUrl": URL,
    "streamUrl": URL,
    "reserveTime": N,
    "transmissionLinks": [S],
    "files": [S],
    "isLive": B,
    "activePrecheckout": B,
    "startAt": DT,
    "endAt": DT,
    "createdAt": DT,
    "modifiedAt": DT,
    "tickets": [
        {
            "id": UUID,
            "eventId": UUID,
            "name": S,
            "isPaid": B,
            "showOnPage": B,
            "buyLimit": B,
            "isUnlimited": B,
            "isActive": B,
            "buyMinimum": N,
            "createdAt": DT,
            "modifiedAt": DT,
            "lots": [LOT],
        }
    ],
    "address": {
        "place": S,
        "country": S,
        "state": S,
        "city": S,
        "district": S,
        "street": S,
        "complement": S,
        "number": S,
        "zip": S,
        "mapUrl": URL,
        "geolocation": {"latitude": N, "longitude": N},
    },
}
ATTENDEE = {
    "id": UUID,
    "name": S,
    "email": S,
    "document": S,
    "phone": S,
    "documentType": Enum("cpf", "passport"),
    "inviteKey": S,
    "status": ATTENDEE_STATUSES,
    "ticketId": UUID,
    "ticketName": S,
    "checkinDate": DT,
    "manuallyCreated": B,
    "fromSqueeze": B,
    "platformId": S,
    "firstPlatformId": S,
    "invoiceId": S,
    "eventId": UUID,
    "createdAt": DT,
    "modifiedAt": DT,
    "invoiceCustomerName": S,
    "invoiceCustomerEmail": S,
    "invoiceCustomerPlatformId": S,
    "invoiceCustomerDocument": S,
    "invoiceCreatedAt": S,
    "invoicePaidAt": S,
    "invoiceAmount": N,
    "customFields": OBJ,
    "statusDescription": S,
    "tags": [S],
}
CREATED_ATTENDEE = {
    "id": UUID,
    "inviteKey": S,
    "name": S,
    "document": S,
    "phoneNumber": S,
    "email": S,
    "platformId": S,
    "invoiceId": S,
    "documentType": Enum("cpf", "passport"),
    "status": S,
    "manuallyCreated": B,
    "modifiedAt": DT,
}
ENROLLMENT = {"createdAt": S, "certificateUrl": Opt(S), "progress": N, "course": {"name": S}}
DELIVERY = {
    "id": N,
    "name": S,
    "platform": Enum("platform", "externalA", "externalB", "externalC", "externalD", "api"),
    "platformProductId": S,
    "platformOfferId": Opt(S),
    "isActive": B,
    "isSubscription": B,
    "autoRemoveAccess": B,
    "tags": [S],
    "endsAfter": N,
}
POST = {
    "id": N,
    "title": S,
    "createdAt": DT,
    "updatedAt": DT,
    "totalComments": N,
    "totalLikes": N,
    "member": {"id": N, "email": S},
    "space": {"id": N, "name": S},
    "tags": [S],
}
MEMBER = {"id": N, "name": S, "email": S, "posts": [{"id": N, "title": S}]}
COMMENT = {
    "id": N,
    "text": S,
    "isRead": B,
    "isFavorite": B,
    "isFixed": B,
    "isAnswered": B,
    "createdAt": DT,
    "status": Enum("approved", "rejected", "inModeration"),
    "type": Enum("html", "text"),
    "author": S,
    "lessonId": N,
}
CART_ITEM = {"productId": S, "description": S, "price": {"value": N, "currency": Enum("BRL")}, "quantity": N}
ADDRESS = {"street": S, "number": S, "neighborhood": S, "complement": S, "postalCode": S, "state": S}
CART = {
    "id": S,
    "key": S,
    "orderId": S,
    "paymentUrl": URL,
    "postbackUrl": URL,
    "returnUrl": URL,
    "installments": N,
    "items": [CART_ITEM],
    "customer": {"email": S, "name": S, "cellphone": S, "document": S, "address": ADDRESS},
}
