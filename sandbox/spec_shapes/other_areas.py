"""The shapes of the other areas (spec 2.2, 2.11 to 2.18: webhook origins, events and attendees, school
enrollments and deliveries, community posts and members, lesson comments, carts)."""

from __future__ import annotations

from sandbox.spec_shapes.check import DT, OBJ, URL, UUID, B, Enum, N, Opt, S
from sandbox.spec_shapes.store import (
    ATTENDEE_STATUSES,
)

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
