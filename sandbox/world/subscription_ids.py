"""Subscription ids: subscription j's first invoice is sale 5j + 2 (see sales.py)."""

SUBSCRIPTION_BASE = 200_000_000


def subscription_id(j: int) -> str:
    return str(SUBSCRIPTION_BASE + j)
