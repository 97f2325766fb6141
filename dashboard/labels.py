"""Labels for the values the API sends as codes: statuses and payment methods, as people read them.

A value the dashboard does not know (the API added it since) is shown as it came, never hidden or
renamed: `label("someNewStatus")` is "someNewStatus".
"""

from __future__ import annotations

from typing import Any

LABELS: dict[str, str] = {
    # subscription statuses
    "upToDate": "Up to date",
    "awaitingPayment": "Awaiting payment",
    "late": "Late",
    "canceled": "Canceled",
    "defaulter": "Defaulter",
    "suspended": "Suspended",
    "trial": "Trial",
    "finished": "Finished",
    "free": "Free",
    # sale statuses
    "open": "Open",
    "processing": "Processing",
    "paid": "Paid",
    "waitingRefund": "Waiting refund",
    "refunded": "Refunded",
    "duplicated": "Duplicated",
    "expired": "Expired",
    "recovering": "Recovering",
    "waitingPayment": "Waiting payment",
    "scheduled": "Scheduled",
    "negotiated": "Negotiated",
    # transfer statuses
    "confirmed": "Confirmed",
    "returnedMessage": "Returned message",
    "pending": "Pending",
    "awaitingBankReturn": "Awaiting bank return",
    "inProgress": "In progress",
    "blocked": "Blocked",
    "awaitingTransfer": "Awaiting transfer",
    "inProcess": "In process",
    "inQueue": "In queue",
    "failed": "Failed",
    "registeringInvoices": "Registering invoices",
    # fiscal document statuses
    "new": "New",
    "waitingDocument": "Waiting document",
    "processed": "Processed",
    "approved": "Approved",
    "fileGenerated": "File generated",
    "deleted": "Deleted",
    # payment methods (sales and subscriptions)
    "bankslip": "Bank slip",
    "creditCard": "Credit card",
    "creditcard": "Credit card",
    "pix": "Pix",
    "combinedPayment": "Combined payment",
    "installmentBankslip": "Installment bank slip",
    "eWallet": "E-wallet",
    "platformBalance": "Platform balance",
    "unknown": "Unknown",
    # attendee statuses ("confirmed", "paid" and "refunded" as above)
    "presence_confirmed": "Presence confirmed",
    "locked": "Locked",
    # the sync's own run statuses (_platform_sync_runs)
    "loaded": "Loaded",
    "not_due": "Not due",
    "skipped": "Skipped",
}


def label(value: Any) -> Any:
    """The label of a known code; anything else (a new code, a number, None) as it is."""
    return LABELS.get(value, value) if isinstance(value, str) else value
