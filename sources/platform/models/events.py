"""Event ticketing: ticketed events, attendees, manually created attendees (spec parts 2.12, 2.13)."""

from __future__ import annotations

from .common import Amount, ApiModel, FreeMap, Timestamp, Uuid
from .enums import AttendeeStatus, DocumentType, EventType


class Lot(ApiModel):
    id: Uuid
    ticketId: Uuid
    name: str
    quantity: int
    value: Amount
    isActive: bool
    startSaleAt: Timestamp
    endSaleAt: Timestamp
    createdAt: Timestamp
    modifiedAt: Timestamp
    platformProductId: int


class Ticket(ApiModel):
    id: Uuid
    eventId: Uuid
    name: str
    isPaid: bool
    showOnPage: bool
    buyLimit: bool  # the spec types the per-user purchase limit as a boolean
    isUnlimited: bool
    isActive: bool
    buyMinimum: int
    createdAt: Timestamp
    modifiedAt: Timestamp
    lots: list[Lot]


class Geolocation(ApiModel):
    latitude: float
    longitude: float


class EventAddress(ApiModel):
    place: str
    country: str
    state: str
    city: str
    district: str
    street: str
    complement: str
    number: str
    zip: str
    mapUrl: str
    geolocation: Geolocation


class TicketedEvent(ApiModel):
    id: Uuid
    userId: Uuid  # the owner
    type: EventType
    title: str
    description: str
    saleUrl: str
    imageUrl: str
    streamUrl: str
    reserveTime: int  # minutes
    transmissionLinks: list[str]
    files: list[str]
    isLive: bool
    activePrecheckout: bool
    startAt: Timestamp
    endAt: Timestamp
    createdAt: Timestamp
    modifiedAt: Timestamp
    tickets: list[Ticket]
    address: EventAddress


class Attendee(ApiModel):
    id: Uuid
    name: str
    email: str
    document: str
    phone: str
    documentType: DocumentType
    inviteKey: str
    status: AttendeeStatus
    ticketId: Uuid
    ticketName: str
    checkinDate: Timestamp | None = None  # null until the attendee checks in (spec omits "nullable")
    manuallyCreated: bool
    fromSqueeze: bool  # came from the live page
    platformId: str
    firstPlatformId: str
    invoiceId: str
    eventId: Uuid
    createdAt: Timestamp
    modifiedAt: Timestamp
    invoiceCustomerName: str
    invoiceCustomerEmail: str
    invoiceCustomerPlatformId: str
    invoiceCustomerDocument: str
    invoiceCreatedAt: str  # the spec types these two as strings: kept as the API sends them
    invoicePaidAt: str
    invoiceAmount: Amount
    customFields: FreeMap
    statusDescription: str
    tags: list[str]


class ManualAttendee(ApiModel):
    """Response of the manual attendee creation (observed status: ``presence_confirmed``)."""

    id: Uuid
    inviteKey: str
    name: str
    document: str
    phoneNumber: str
    email: str
    platformId: str
    invoiceId: str
    documentType: DocumentType
    status: str
    manuallyCreated: bool
    modifiedAt: Timestamp
