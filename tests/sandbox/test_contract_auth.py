"""Spec part 5 and 4.1: codes, the token exchange, bearer tokens and scopes."""

from __future__ import annotations

import httpx
import pytest

from sandbox.auth import ALL_SCOPES
from tests.support.sandbox_api import OPERATIONS_SCOPES, assert_error, fake_requests, send

DEMO = {"client_id": "sandbox-demo", "client_secret": "sandbox-demo-secret"}
TOKEN_TYPES = {
    "id": str, "access_token": str, "token_type": str, "expires_in": (int, float), "scope": str,
    "created_at": (int, float), "authenticated_userid": str,
}  # fmt: skip
NULLABLE_STRINGS = ("ttl", "service", "refresh_token")
USER_TYPES = {
    "id": str, "platformId": (int, float), "coursePlatformId": (int, float), "platform_id": (int, float),
    "course_platform_id": (int, float), "name": str, "email": str, "picture": str,
}  # fmt: skip


def exchange(sandbox, the_code, **overrides):
    body = {
        **DEMO,
        "code": the_code,
        "redirect_uri": "http://localhost/callback",
        "grant_type": "authorization_code",
    }
    body.update(overrides)
    return httpx.post(
        f"{sandbox.auth_url}/oauth/token", json={k: v for k, v in body.items() if v is not None}
    )


def test_token_exchange_answers_the_full_token_shape(fake_sandbox):
    response = exchange(fake_sandbox, fake_sandbox.authorize(["webhook_read", "webhook_write"]))
    assert response.status_code == 200
    token = response.json()
    for name, kind in TOKEN_TYPES.items():
        assert isinstance(token[name], kind), name
    for name in NULLABLE_STRINGS:
        assert token[name] is None or isinstance(token[name], str)
    assert token["scope"] == "webhook_read webhook_write"
    assert token["token_type"].lower() == "bearer"
    assert len(token["authenticated_userid"].split(",")) == 2
    assert isinstance(token["credential"]["id"], str)
    for name, kind in USER_TYPES.items():
        assert isinstance(token["user"][name], kind), name
    assert token["user"]["platformId"] == token["user"]["platform_id"]
    assert token["user"]["coursePlatformId"] == token["user"]["course_platform_id"]


def test_authorize_without_scopes_grants_all_scopes(fake_sandbox):
    token = exchange(fake_sandbox, fake_sandbox.authorize()).json()
    assert set(token["scope"].split(" ")) == set(ALL_SCOPES)


def test_a_code_is_single_use(fake_sandbox):
    code = fake_sandbox.authorize()
    assert exchange(fake_sandbox, code).status_code == 200
    assert_error(exchange(fake_sandbox, code), 404, "not_found")


@pytest.mark.parametrize(
    "overrides",
    [{"client_id": "nobody"}, {"client_secret": "wrong"}],
    ids=["unknown-application", "wrong-secret"],
)
def test_unknown_application_or_wrong_secret_is_404(fake_sandbox, overrides):
    code = fake_sandbox.authorize()
    assert_error(exchange(fake_sandbox, code, **overrides), 404, "not_found")
    assert exchange(fake_sandbox, code).status_code == 200  # a refused exchange does not spend the code


def test_unknown_code_is_404(fake_sandbox):
    assert_error(exchange(fake_sandbox, "no-such-code"), 404, "not_found")


@pytest.mark.parametrize("missing", ["client_id", "client_secret", "code", "redirect_uri", "grant_type"])
def test_token_exchange_requires_every_field(fake_sandbox, missing):
    body = assert_error(exchange(fake_sandbox, fake_sandbox.authorize(), **{missing: None}), 422)
    assert body["details"] == [{"field": missing, "message": "is required"}]


@pytest.mark.parametrize(
    "overrides", [{"grant_type": "client_credentials"}, {"code": 123}, {"redirect_uri": ["x"]}], ids=str
)
def test_token_exchange_validates_values(fake_sandbox, overrides):
    body = assert_error(
        exchange(fake_sandbox, fake_sandbox.authorize(), **overrides), 422, "validation_error"
    )
    assert body["details"][0]["field"] in overrides


def test_token_exchange_accepts_a_form_body(fake_sandbox):
    form = {**DEMO, "code": fake_sandbox.authorize(), "redirect_uri": "x", "grant_type": "authorization_code"}
    assert httpx.post(f"{fake_sandbox.auth_url}/oauth/token", data=form).status_code == 200


@pytest.mark.parametrize("raw", [b"", b"{", b"[1, 2]", b"null", b'"text"'])
def test_token_exchange_malformed_bodies(fake_sandbox, raw):
    response = httpx.post(f"{fake_sandbox.auth_url}/oauth/token", content=raw)
    assert_error(response, 400 if raw == b"{" else 422)


def test_authorize_unknown_client_is_404_and_unknown_scope_422(fake_sandbox):
    url = f"{fake_sandbox.auth_url}/sandbox/authorize"
    assert_error(httpx.post(url, json={"client_id": "nobody"}), 404, "not_found")
    body = assert_error(httpx.post(url, json={"scopes": ["store_sales_read", "root"]}), 422)
    assert body["details"][0]["field"] == "scopes"


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic abc"}, {"Authorization": "Bearer"}],
    ids=["absent", "unknown", "other-scheme", "no-token"],
)
@pytest.mark.parametrize("operation", sorted(fake_requests()))
def test_every_operation_needs_a_valid_bearer_token(fake_sandbox, operation, headers):
    method, path, data = fake_requests()[operation]
    with httpx.Client(base_url=fake_sandbox.base_url, headers=headers) as client:
        assert_error(send(client, method, path, data), 401, "unauthorized")


def test_the_bearer_scheme_is_case_insensitive(fake_sandbox):
    token = fake_sandbox.token()
    response = httpx.get(
        f"{fake_sandbox.base_url}/store/v1/products", headers={"authorization": f"bearer {token}"}
    )
    assert response.status_code == 200


SCOPED = [(op, scope) for op, scopes in sorted(OPERATIONS_SCOPES.items()) for scope in scopes]


@pytest.mark.parametrize(("operation", "scope"), SCOPED, ids=[f"{o}-{s}" for o, s in SCOPED])
def test_a_missing_scope_is_403_naming_it(fake_sandbox, operation, scope):
    method, path, data = fake_requests()[operation]
    token = fake_sandbox.token([s for s in ALL_SCOPES if s != scope])
    with httpx.Client(base_url=fake_sandbox.base_url, headers={"Authorization": f"Bearer {token}"}) as client:
        body = assert_error(send(client, method, path, data), 403, "forbidden")
    assert body["scope"] == scope
    assert body["message"] == f"missing scope in request headers: {scope}"


@pytest.mark.parametrize("operation", sorted(OPERATIONS_SCOPES))
def test_the_listed_scopes_are_enough(fake_sandbox, operation):
    method, path, data = fake_requests()[operation]
    token = fake_sandbox.token(list(OPERATIONS_SCOPES[operation]))
    with httpx.Client(base_url=fake_sandbox.base_url, headers={"Authorization": f"Bearer {token}"}) as client:
        response = send(client, method, path, data)
    assert response.status_code in (200, 201), response.text


def test_webhook_origins_needs_only_a_valid_token(fake_sandbox):
    token = fake_sandbox.token([])
    response = httpx.get(
        f"{fake_sandbox.base_url}/webhook/v1/origin", headers={"Authorization": f"Bearer {token}"}
    )
    assert response.status_code == 201
    assert isinstance(response.json(), list)
