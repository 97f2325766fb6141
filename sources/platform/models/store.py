"""Store data: sales, subscriptions, products with their campaigns and partners, affiliations (spec parts
2.3 to 2.8)."""

from __future__ import annotations

from .common import Amount, ApiModel, IdName, Money, Timestamp
from .enums import (
    AffiliationStatus,
    BillingType,
    CommissionType,
    FrequencyType,
    InterruptionType,
    ProductModeration,
    ProductPaymentType,
    ProductStatus,
    ProductType,
    RecoveringStatus,
    RefundType,
    SalePaymentDetail,
    SalePaymentMethod,
    SaleStatus,
    SubscriptionPaymentMethod,
    SubscriptionStatus,
)

# --- 2.3 Sale ---


class SalePayment(ApiModel):
    method: SalePaymentMethod
    detail: SalePaymentDetail
    link: str | None = None


class SaleProduct(ApiModel):
    id: str
    name: str
    type: ProductType
    billingType: BillingType
    sku: str | None = None


class SaleRefund(ApiModel):
    type: RefundType
    value: Money
    partialValue: Money
    refundedAt: Timestamp | None = None
    requestedAt: Timestamp | None = None
    motive: str | None = None
    requesterName: str | None = None


class SaleRecipient(ApiModel):
    id: str
    name: str
    email: str
    document: str
    phone: str


class SaleBuyerAddress(ApiModel):
    zipCode: str
    street: str
    neighborhood: str
    city: str
    state: str
    number: str | None = None
    complement: str | None = None


class SaleBuyer(ApiModel):
    id: str
    name: str
    email: str
    document: str
    phone: str
    phone2: str | None = None
    phone3: str | None = None
    address: SaleBuyerAddress


class SaleParty(ApiModel):
    """An affiliate or a partner of a sale, with its share."""

    id: str
    name: str
    email: str
    netGain: Money


class SaleItem(ApiModel):
    id: str
    productId: str
    description: str
    unitValue: Money
    quantity: int
    value: Money
    discount: Money | None = None
    freightType: str | None = None
    freightDeadline: str | None = None
    trackingCode: str | None = None


class SaleOffer(ApiModel):
    name: str | None = None


class SaleUtm(ApiModel):
    source: str | None = None
    campaign: str | None = None
    medium: str | None = None
    content: str | None = None
    term: str | None = None


class SaleOrderBump(ApiModel):
    has: bool
    isMainSale: bool
    mainSaleId: int | None = None


class Sale(ApiModel):
    id: str
    contractId: str | None = None
    status: SaleStatus
    grossGain: Money
    netGain: Money
    partnersGain: Money
    affiliatesGain: Money
    fee: Money | None = None
    total: Money
    totalInterest: Money
    installments: int
    companyXFee: Money | None = None
    installmentSettlementFee: Money | None = None
    others: Money
    currency: str
    locale: str
    dueDate: Timestamp
    paidAt: Timestamp | None = None
    creditDate: Timestamp | None = None
    isInfiniteFunnel: bool
    recoveringStatus: RecoveringStatus
    tracker: str | None = None
    tracker2: str | None = None
    tracker3: str | None = None
    createdAt: Timestamp
    updatedAt: Timestamp
    payment: SalePayment
    product: SaleProduct
    refund: SaleRefund | None = None
    affiliate: IdName | None = None
    recipient: SaleRecipient
    buyer: SaleBuyer
    producer: IdName
    affiliates: list[SaleParty]
    partners: list[SaleParty]
    items: list[SaleItem]
    offer: SaleOffer
    utm: SaleUtm | None = None
    orderBump: SaleOrderBump


# --- 2.4 Subscription ---


class SubscriptionInterruption(ApiModel):
    createdAt: Timestamp
    type: InterruptionType
    removeAccessDate: Timestamp
    reason: str
    origin: str
    responsible: str
    previousStatus: SubscriptionStatus


class Frequency(ApiModel):
    type: FrequencyType
    value: int


class SubscriptionRecurrence(ApiModel):
    startsAt: Timestamp
    nextDueDate: Timestamp
    currentDueDate: Timestamp
    finalDueDate: Timestamp
    finishesAt: Timestamp
    frequency: Frequency


class SubscriptionCharges(ApiModel):
    total: int
    current: int
    paid: int
    pending: int
    negotiated: int


class SubscriptionProduct(ApiModel):
    id: str
    title: str
    hasMembershipFee: bool
    membershipFee: Money
    deliveries: list[str]


class SubscriptionPayment(ApiModel):
    price: Money
    method: SubscriptionPaymentMethod
    installments: int


class Phone(ApiModel):
    countryCode: str
    areaCode: str
    number: str


class SubscriptionClient(ApiModel):
    name: str
    email: str
    phone: Phone


class Subscription(ApiModel):
    id: str
    createdAt: Timestamp
    updatedAt: Timestamp
    status: SubscriptionStatus
    firstInvoiceId: str
    isFinite: bool
    isUnlimitedInstallments: bool
    hasNegotiation: bool
    interruption: SubscriptionInterruption | None = None  # null unless suspended or canceled
    recurrence: SubscriptionRecurrence
    charges: SubscriptionCharges
    products: list[SubscriptionProduct]
    payment: SubscriptionPayment
    client: SubscriptionClient


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
