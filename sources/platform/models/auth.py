"""The token exchange's response (spec part 2.1)."""

from __future__ import annotations

from .common import ApiModel


class TokenCredential(ApiModel):
    id: str


class TokenUser(ApiModel):
    id: str
    platformId: int
    coursePlatformId: int
    platform_id: int  # same as platformId
    course_platform_id: int  # same as coursePlatformId
    name: str
    email: str
    picture: str | None = None  # appears in responses, not in the documented field list


class Token(ApiModel):
    id: str
    access_token: str
    token_type: str
    expires_in: int
    scope: str  # space-separated
    ttl: str | None = None
    created_at: int
    service: str | None = None
    refresh_token: str | None = None  # unused
    authenticated_userid: str  # "<accounts id>,<platform id>"
    credential: TokenCredential
    user: TokenUser
