"""Store data: products, their campaigns and partners, affiliations (spec parts 2.5 to 2.8)."""

from __future__ import annotations

from .common import Amount, ApiModel, IdName, Money, Timestamp
from .enums import (
    AffiliationStatus,
    CommissionType,
    ProductModeration,
    ProductPaymentType,
    ProductStatus,
    ProductType,
)

# --- 2.5 Product, 2.6 Campaign, 2.7 Partner ---


class PaymentMethods(ApiModel):
    bankslip: bool
    pix: bool
    card: bool
    multipleCards: bool


class ProductPayment(ApiModel):
    type: ProductPaymentType
    price: Money
    methods: PaymentMethods


class Product(ApiModel):
    id: str
    name: str
    description: str
    producerId: str
    author: str
    imageUrl: str
    type: ProductType
    status: ProductStatus
    moderation: ProductModeration
    createdAt: Timestamp
    updatedAt: Timestamp
    payment: ProductPayment


class ResultPerClick(ApiModel):
    affiliate: Amount
    producer: Amount


class Campaign(ApiModel):
    id: str
    key: str
    title: str
    url: str
    resultPerClick: ResultPerClick
    isInfinityFunnel: bool
    isActive: bool
    createdAt: Timestamp


class Commission(ApiModel):
    type: CommissionType
    value: Amount  # a percentage or an amount, depending on ``type``
    onlyByAffiliate: bool


class PartnerPermission(ApiModel):
    canManageAffiliates: bool
    canRefund: bool
    canViewCustomerData: bool


class Partner(ApiModel):
    id: str
    name: str
    email: str
    commission: Commission
    permission: PartnerPermission


# --- 2.8 Affiliation ---


class Affiliation(ApiModel):
    id: str
    status: AffiliationStatus
    requestedAt: Timestamp
    approvedAt: Timestamp
    updatedAt: Timestamp
    createdAt: Timestamp
    product: IdName
    customer: IdName  # ``customer.id`` is the account id of the affiliate
