"""Every enumeration of the API spec (parts 2 and 3), each defined once.

The ``Literal`` aliases are used by the models; ``ENUMS`` exposes the same values keyed by
``<resource>.<field path>`` (the API's camelCase path) so that the dbt models' ``accepted_values``
tests can be checked against them. A value set shared by several fields (the product type of a sale and
of a product, the subscription status and ``interruption.previousStatus``, the attendee document type
of both attendee shapes) is listed once, under the key of its first use in the spec.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

# --- 2.3 Sale (statuses: part 3) ---
SaleStatus = Literal[
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
]
RecoveringStatus = Literal["inactive", "active", "canceled"]
SalePaymentMethod = Literal[
    "bankslip",
    "creditCard",
    "pix",
    "combinedPayment",
    "installmentBankslip",
    "eWallet",
    "platformBalance",
    "unknown",
]
SalePaymentDetail = Literal[
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
]
ProductType = Literal["digital", "physical", "service", "ticket", "ecommerce", "package", "project"]
BillingType = Literal["recurrence", "single", "free", "other", "unknown"]
RefundType = Literal["common", "partial"]

# --- 2.4 Subscription ---
SubscriptionStatus = Literal[
    "upToDate",
    "awaitingPayment",
    "late",
    "canceled",
    "defaulter",
    "suspended",
    "trial",
    "finished",
    "free",
]
InterruptionType = Literal["cancel", "suspend"]
FrequencyType = Literal["daily", "weekly", "monthly", "yearly"]
SubscriptionPaymentMethod = Literal["bankslip", "creditcard", "pix", "unknown"]

# --- 2.5 Product ---
ProductStatus = Literal["active", "inactive"]
ProductModeration = Literal["new", "approved", "pending", "refused"]
ProductPaymentType = Literal["oneTime", "subscription", "free", "open"]

# --- 2.7 Partner ---
CommissionType = Literal["percentage", "value"]

# --- 2.8 Affiliation ---
AffiliationStatus = Literal["approved", "canceled", "pending", "removed"]

# --- 2.9 Transfer ---
TransferStatus = Literal[
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
]
BankAccountType = Literal["checkingAccount", "savingsAccount"]

# --- 2.10 Fiscal document: part 3 lists these as the *filter* states; the spec types the document's
# own ``document.status`` as a plain string, so the model does not enforce them. ---
FiscalDocumentStatus = Literal[
    "new",
    "pending",
    "waitingDocument",
    "canceled",
    "processed",
    "approved",
    "fileGenerated",
    "processing",
    "deleted",
]

# --- 2.12 / 2.13 Events ---
EventType = Literal["presential", "online", "live"]
DocumentType = Literal["cpf", "passport"]
AttendeeStatus = Literal["confirmed", "locked", "presence_confirmed", "paid", "refunded"]

# --- 2.15 Delivery ---
DeliveryPlatform = Literal["platform", "externalA", "externalB", "externalC", "externalD", "api"]

# --- 2.18 Lesson comment ---
CommentStatus = Literal["approved", "rejected", "inModeration"]
CommentType = Literal["html", "text"]


def _values(alias: Any) -> tuple[str, ...]:
    return tuple(get_args(alias))


ENUMS: dict[str, tuple[str, ...]] = {
    "sale.status": _values(SaleStatus),
    "sale.recoveringStatus": _values(RecoveringStatus),
    "sale.payment.method": _values(SalePaymentMethod),
    "sale.payment.detail": _values(SalePaymentDetail),
    "sale.product.type": _values(ProductType),  # also product.type
    "sale.product.billingType": _values(BillingType),
    "sale.refund.type": _values(RefundType),
    "subscription.status": _values(SubscriptionStatus),  # also subscription.interruption.previousStatus
    "subscription.interruption.type": _values(InterruptionType),
    "subscription.recurrence.frequency.type": _values(FrequencyType),
    "subscription.payment.method": _values(SubscriptionPaymentMethod),
    "product.status": _values(ProductStatus),
    "product.moderation": _values(ProductModeration),
    "product.payment.type": _values(ProductPaymentType),
    "partner.commission.type": _values(CommissionType),
    "affiliation.status": _values(AffiliationStatus),
    "transfer.status": _values(TransferStatus),
    "transfer.bankAccount.type": _values(BankAccountType),
    "fiscal_document.status": _values(FiscalDocumentStatus),  # filter states (part 3), not enforced
    "event.type": _values(EventType),
    "attendee.documentType": _values(DocumentType),  # also manual_attendee.documentType
    "attendee.status": _values(AttendeeStatus),
    "delivery.platform": _values(DeliveryPlatform),
    "lesson_comment.status": _values(CommentStatus),
    "lesson_comment.type": _values(CommentType),
}
