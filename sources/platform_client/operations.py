"""The API's operations (spec part 4), declared once; the client, the rate limiter and the error messages
derive everything from this table.

Names are those of contracts part 5 (shared with the config key `rate_limits` and the sandbox's stats).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal
from urllib.parse import quote

from sources.platform_client.errors import ConfigurationError

Method = Literal["GET", "POST"]


@dataclass(frozen=True, slots=True)
class Operation:
    """One API operation.

    `path` is a template with `{name}` placeholders named as in the spec (`:teamSlug` → `{teamSlug}`);
    `on_auth_server` marks the token exchange, served from `auth_url` instead of `base_url`.
    """

    number: int
    name: str
    method: Method
    path: str
    scopes: frozenset[str]
    rate_limit_per_minute: int | None
    paged: bool = False
    paging_required: bool = False  # the spec marks `page` and `itemsPerPage` as required
    required_query: frozenset[str] = frozenset()
    success_statuses: frozenset[int] = frozenset({200})
    on_auth_server: bool = False

    @property
    def path_params(self) -> tuple[str, ...]:
        """Placeholder names of the path template, in order."""
        return tuple(name for _, name, _, _ in string.Formatter().parse(self.path) if name)

    @property
    def idempotent(self) -> bool:
        """Whether repeating the request cannot change anything (decides what may be retried)."""
        return self.method == "GET"

    def render_path(self, path_params: Mapping[str, object] | None) -> str:
        """The path with each placeholder replaced by its URL-quoted value.

        Values are quoted with no safe characters, so an id containing `/` or `..` cannot address another
        resource.
        """
        given = dict(path_params or {})
        expected = self.path_params
        missing = [name for name in expected if given.get(name) in (None, "")]
        unknown = sorted(set(given) - set(expected))
        if missing or unknown:
            raise ConfigurationError(
                f"{self.name}: path parameters must be exactly {list(expected)}; "
                f"missing or empty {missing}, unknown {unknown}",
                operation=self.name,
            )
        return self.path.format(**{name: quote(str(given[name]), safe="") for name in expected})


_STORE_PRODUCTS = frozenset({"store_products_read"})
_STORE_FINANCIAL = frozenset({"store_financial_read"})
_STORE_SUBSCRIPTIONS = frozenset({"store_subscriptions_read"})
_EVENTS_READ = frozenset({"events_read"})

OPERATIONS: tuple[Operation, ...] = (
    Operation(1, "token_exchange", "POST", "/oauth/token", frozenset(), None, on_auth_server=True),
    Operation(
        2,
        "create_cart",
        "POST",
        "/checkout/v1/cart",
        frozenset({"checkout_cart_write"}),
        None,
        success_statuses=frozenset({201}),
    ),
    Operation(
        3,
        "list_enrollments",
        "GET",
        "/school/v1/producer/teams/{teamSlug}/students/{studentSlug}/enrollments",
        frozenset({"school_student_read"}),
        None,
        paged=True,
    ),
    # The spec documents 201 as this read's success status; 200 is what any server would say.
    Operation(
        4,
        "list_webhook_origins",
        "GET",
        "/webhook/v1/origin",
        frozenset(),
        None,
        success_statuses=frozenset({200, 201}),
    ),
    Operation(5, "sale_details", "GET", "/store/v1/sales/{id}", frozenset({"store_sales_read"}), 30),
    Operation(6, "event_details", "GET", "/events/v1/events/{id}", _EVENTS_READ, 30),
    Operation(
        7, "list_attendees", "GET", "/events/v1/attendance-list/by-event/{id}", _EVENTS_READ, 30, paged=True
    ),
    Operation(
        8,
        "add_attendee",
        "POST",
        "/events/v1/attendance-list/add-manually",
        frozenset({"events_read", "events_write"}),
        30,
        success_statuses=frozenset({201}),
    ),
    Operation(
        9,
        "list_affiliations",
        "GET",
        "/store/v1/affiliates",
        frozenset({"store_affiliates_read"}),
        None,
        paged=True,
    ),
    Operation(
        10,
        "delivery_details",
        "GET",
        "/school/v1/producer/teams/{slug}/deliveries/{deliveryId}",
        frozenset({"school_delivery_read"}),
        None,
    ),
    Operation(
        11,
        "list_fiscal_documents",
        "GET",
        "/store/v1/financial/buyer/fiscal-documents",
        _STORE_FINANCIAL,
        None,
        paged=True,
        required_query=frozenset({"startDate", "endDate"}),
    ),
    # The spec lists only `page` among this list's query parameters; the client sends `itemsPerPage` as
    # for every paged list and pages by the envelope's `itemsPerPage`, so a server ignoring it still works.
    Operation(
        12, "list_subscriptions", "GET", "/store/v1/subscriptions", _STORE_SUBSCRIPTIONS, None, paged=True
    ),
    Operation(13, "subscription_details", "GET", "/store/v1/subscriptions/{id}", _STORE_SUBSCRIPTIONS, None),
    Operation(14, "list_products", "GET", "/store/v1/products", _STORE_PRODUCTS, None, paged=True),
    # Answers `{"items": [...]}` (at most five posts) without the paging envelope.
    Operation(
        15,
        "top_commented_posts",
        "GET",
        "/community/v1/posts/community/{communityId}/top/commented",
        frozenset({"community_read_posts"}),
        None,
    ),
    Operation(
        16, "list_product_campaigns", "GET", "/store/v1/products/{id}/campaigns", _STORE_PRODUCTS, None
    ),
    Operation(17, "list_product_partners", "GET", "/store/v1/products/{id}/partners", _STORE_PRODUCTS, None),
    Operation(
        18, "list_transfers", "GET", "/store/v1/financial/transfers", _STORE_FINANCIAL, None, paged=True
    ),
    Operation(
        19,
        "list_community_commenters",
        "GET",
        "/community/v1/members/community/{communityId}/comments",
        frozenset({"community_read_members"}),
        None,
        paged=True,
    ),
    Operation(
        20,
        "list_lesson_comments",
        "GET",
        "/course/v1/comments",
        frozenset({"course_comments_read"}),
        200,
        paged=True,
        paging_required=True,
    ),
)

OPERATIONS_BY_NAME: Mapping[str, Operation] = MappingProxyType({op.name: op for op in OPERATIONS})

# Spec part 8, in requests per minute.
DEFAULT_RATE_LIMITS: Mapping[str, int] = MappingProxyType(
    {op.name: op.rate_limit_per_minute for op in OPERATIONS if op.rate_limit_per_minute is not None}
)

# Every scope any operation needs: what `platform-sync auth` should ask for by default.
ALL_SCOPES: frozenset[str] = frozenset().union(*(op.scopes for op in OPERATIONS))


def get_operation(name: str) -> Operation:
    """The operation called `name`; a `ConfigurationError` listing the valid names otherwise."""
    try:
        return OPERATIONS_BY_NAME[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown operation {name!r}; valid names: {', '.join(sorted(OPERATIONS_BY_NAME))}"
        ) from None
