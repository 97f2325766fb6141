"""Client applications, authorization codes and bearer tokens (spec part 5, contracts part 1).

Tokens never expire; the only way to lose one is the `revoke_after` fault. Codes are single use:
the second exchange of a code answers 404, as the spec documents.
"""

from __future__ import annotations

import random
import secrets
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sandbox.errors import ApiError, validation_error
from sandbox.params import BodyCheck

DEMO_CLIENT_ID = "sandbox-demo"
DEMO_CLIENT_SECRET = "sandbox-demo-secret"  # noqa: S105 - a published demo credential, not a secret
TOKEN_LIFETIME_SECONDS = 21600

# Every scope of the spec's part 4 table, plus the two its token examples show.
ALL_SCOPES: tuple[str, ...] = (
    "checkout_cart_write",
    "school_student_read",
    "school_delivery_read",
    "store_sales_read",
    "store_affiliates_read",
    "store_financial_read",
    "store_subscriptions_read",
    "store_products_read",
    "events_read",
    "events_write",
    "community_read_posts",
    "community_read_members",
    "course_comments_read",
    "webhook_read",
    "webhook_write",
)


@dataclass
class TokenInfo:
    access_token: str
    client_id: str
    scopes: tuple[str, ...]
    revoked: bool = False


@dataclass
class _Code:
    client_id: str
    scopes: tuple[str, ...]
    used: bool = False


@dataclass(frozen=True)
class Identity:
    """The one seller every token belongs to, derived from the seed so it is stable across runs."""

    user_id: str
    accounts_id: str
    platform_id: int
    course_platform_id: int
    name: str
    email: str
    picture: str

    @classmethod
    def from_seed(cls, seed: int, user_id: str | None = None) -> Identity:
        rng = random.Random(f"sandbox-identity-{seed}")
        generated = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        user_id = user_id or generated
        return cls(
            user_id=user_id,
            accounts_id=str(uuid.UUID(int=rng.getrandbits(128), version=4)),
            platform_id=rng.randrange(1_000_000, 9_999_999),
            course_platform_id=rng.randrange(100_000, 999_999),
            name="Sandbox Seller",
            email="seller@sandbox.example",
            picture=f"https://images.sandbox.example/users/{user_id}.png",
        )


@dataclass
class AuthStore:
    """All applications, codes and tokens of one sandbox; lives in the server's single event loop."""

    identity: Identity
    clock: Callable[[], datetime]
    clients: dict[str, str] = field(default_factory=lambda: {DEMO_CLIENT_ID: DEMO_CLIENT_SECRET})
    _codes: dict[str, _Code] = field(default_factory=dict)
    _tokens: dict[str, TokenInfo] = field(default_factory=dict)

    def mint_code(self, client_id: str, scopes: Iterable[str] | None) -> str:
        """A single-use code as if the user had authorized `client_id` for `scopes` (None: all)."""
        if client_id not in self.clients:
            raise ApiError(404, "application not found")
        chosen = ALL_SCOPES if scopes is None else tuple(dict.fromkeys(scopes))
        unknown = [s for s in chosen if s not in ALL_SCOPES]
        if unknown:
            raise validation_error([{"field": "scopes", "message": f"unknown scope: {s}"} for s in unknown])
        code = secrets.token_urlsafe(24)
        self._codes[code] = _Code(client_id, chosen)
        return code

    def exchange(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The token exchange (spec 4.1): validate, spend the code, answer the Token shape of 2.1."""
        check = BodyCheck()
        values = {
            name: check.field(body, name, "string", required=True)
            for name in ("client_id", "client_secret", "code", "redirect_uri", "grant_type")
        }
        if values["grant_type"] is not None and values["grant_type"] != "authorization_code":
            check.fail("grant_type", "must be authorization_code")
        check.done()
        if self.clients.get(values["client_id"]) != values["client_secret"]:
            raise ApiError(404, "application not found")
        code = self._codes.get(values["code"])
        if code is None or code.client_id != values["client_id"]:
            raise ApiError(404, "token not found")
        if code.used:
            raise ApiError(404, "token already used")
        code.used = True
        token = TokenInfo(secrets.token_urlsafe(32), code.client_id, code.scopes)
        self._tokens[token.access_token] = token
        return self._token_body(token)

    def _token_body(self, token: TokenInfo) -> dict[str, Any]:
        who = self.identity
        return {
            "id": str(uuid.uuid4()),
            "access_token": token.access_token,
            "token_type": "bearer",
            "expires_in": TOKEN_LIFETIME_SECONDS,
            "scope": " ".join(token.scopes),
            "ttl": None,
            "created_at": int(self.clock().timestamp() * 1000),
            "service": None,
            "refresh_token": None,
            "authenticated_userid": f"{who.accounts_id},{who.platform_id}",
            "credential": {"id": str(uuid.uuid4())},
            "user": {
                "id": who.user_id,
                "platformId": who.platform_id,
                "coursePlatformId": who.course_platform_id,
                "platform_id": who.platform_id,
                "course_platform_id": who.course_platform_id,
                "name": who.name,
                "email": who.email,
                "picture": who.picture,
            },
        }

    def authenticate(self, authorization: str | None) -> TokenInfo:
        """The token of an `Authorization: Bearer` header, or 401."""
        if not authorization:
            raise ApiError(401, "missing bearer token in the Authorization header")
        scheme, _, value = authorization.strip().partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise ApiError(401, "the Authorization header must be 'Bearer <access token>'")
        token = self._tokens.get(value.strip())
        if token is None:
            raise ApiError(401, "invalid access token")
        if token.revoked:
            raise ApiError(401, "access token revoked")
        return token

    def revoke(self, authorization: str | None) -> bool:
        """Revoke the token of this header (the `revoke_after` fault); False if there is none to revoke."""
        try:
            token = self.authenticate(authorization)
        except ApiError:
            return False
        token.revoked = True
        return True

    @staticmethod
    def require(token: TokenInfo, scopes: Iterable[str]) -> None:
        """403 naming the first scope of `scopes` the token lacks."""
        for scope in scopes:
            if scope not in token.scopes:
                raise ApiError(403, f"missing scope in request headers: {scope}", scope=scope)
