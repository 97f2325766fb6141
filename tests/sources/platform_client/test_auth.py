"""Token exchange (spec part 5) and storing the token in `.dlt/secrets.toml`."""

from __future__ import annotations

import json
import logging
import os
import stat
import traceback

import httpx
import pytest
import tomlkit

from sources.platform_client.auth import BearerAuth, TokenGrant, exchange_code, parse_scopes, store_token
from sources.platform_client.errors import (
    ConfigurationError,
    MalformedResponseError,
    TokenExchangeError,
    TransportError,
)

AUTH_URL = "https://auth.platform.test"
SECRET = "client-s3cr3t-value"
CODE = "one-time-code-8c1f"
ACCESS = "access-token-0b9e7d"

TOKEN_RESPONSE = {
    "id": "tok-1",
    "access_token": ACCESS,
    "token_type": "bearer",
    "expires_in": 21600,
    "scope": "store_products_read store_sales_read  webhook_read",
    "ttl": None,
    "created_at": 1780272000,
    "service": None,
    "refresh_token": "unused-refresh-value",
    "authenticated_userid": "acc-1,42",
    "credential": {"id": "cred-1"},
    "user": {"id": "u-1", "name": "Ana", "email": "ana@example.test"},
}


def recording(answer):
    seen: list[httpx.Request] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(request) if callable(answer) else answer

    return seen, httpx.MockTransport(handle)


def exchange(transport):
    return exchange_code(AUTH_URL + "/", "sandbox-demo", SECRET, CODE, "http://localhost/callback", transport)


def test_exchange_posts_the_documented_body_and_returns_the_grant():
    seen, transport = recording(httpx.Response(200, json=TOKEN_RESPONSE))
    grant = exchange(transport)
    [request] = seen
    assert (request.method, str(request.url)) == ("POST", f"{AUTH_URL}/oauth/token")
    assert request.headers["accept"] == "application/json"
    assert request.headers["user-agent"].startswith("platform-sync/")
    assert "authorization" not in request.headers
    assert json.loads(request.content) == {
        "client_id": "sandbox-demo",
        "client_secret": SECRET,
        "code": CODE,
        "redirect_uri": "http://localhost/callback",
        "grant_type": "authorization_code",
    }
    assert grant.access_token == ACCESS
    assert grant.token_type == "bearer"
    assert grant.scopes == {"store_products_read", "store_sales_read", "webhook_read"}
    assert "access_token" not in grant.raw and "refresh_token" not in grant.raw
    assert grant.raw["user"]["email"] == "ana@example.test"
    assert ACCESS not in repr(grant)


def test_404_means_the_code_was_used_or_the_application_is_unknown():
    answer = httpx.Response(
        404, json={"status": 404, "error": "not_found", "message": f"code {CODE} already used"}
    )
    _, transport = recording(answer)
    with pytest.raises(TokenExchangeError) as caught:
        exchange(transport)
    message = str(caught.value)
    assert "the code was already used, or the application is unknown: authorize again" in message
    assert caught.value.status == 404
    assert CODE not in message and SECRET not in message


@pytest.mark.parametrize("status", [400, 401, 422, 500])
def test_other_refusals_say_what_to_check(status):
    _, transport = recording(httpx.Response(status, text="nope"))
    with pytest.raises(TokenExchangeError, match="check client_id, client_secret and redirect_uri"):
        exchange(transport)


def test_no_answer_is_a_transport_error_and_is_not_retried():
    seen, transport = recording(
        lambda request: (_ for _ in ()).throw(httpx.ConnectError("refused", request=request))
    )
    with pytest.raises(
        TransportError, match="token exchange: no answer from https://auth.platform.test/oauth/token"
    ):
        exchange(transport)
    assert len(seen) == 1  # the code is single-use: never sent twice


@pytest.mark.parametrize("content", [b"{", b"[]", b'{"token_type": "bearer"}', b'{"access_token": ""}'])
def test_an_answer_without_a_token_is_malformed(content):
    _, transport = recording(httpx.Response(200, content=content))
    with pytest.raises(MalformedResponseError, match="no access_token"):
        exchange(transport)


def test_empty_arguments_are_refused_before_sending():
    with pytest.raises(ConfigurationError, match="client_secret, code empty"):
        exchange_code(AUTH_URL, "id", "", " ", "http://localhost/callback")


def test_secrets_appear_nowhere(caplog):
    for answer in (
        httpx.Response(404, json={"message": f"{SECRET} {CODE}"}),
        httpx.Response(500, text=f"client_secret={SECRET}&code={CODE}"),
    ):
        _, transport = recording(answer)
        with caplog.at_level(logging.DEBUG), pytest.raises(TokenExchangeError) as caught:
            exchange(transport)
        text = str(caught.value) + repr(caught.value) + "".join(traceback.format_exception(caught.value))
        text += caplog.text
        assert SECRET not in text and CODE not in text


def test_parse_scopes():
    assert parse_scopes("a b\tc") == {"a", "b", "c"}
    assert parse_scopes("a,b, c") == {"a", "b", "c"}
    assert parse_scopes(None) == frozenset()
    assert parse_scopes("") == frozenset()


def test_bearer_auth_sets_the_header_and_hides_the_token():
    auth = BearerAuth(ACCESS)
    request = httpx.Request("GET", "https://api.test/")
    flow = auth.auth_flow(request)
    assert next(flow).headers["authorization"] == f"Bearer {ACCESS}"
    assert ACCESS not in repr(auth)


# --- store_token ----------------------------------------------------------------------------------------

GRANT = TokenGrant(
    access_token=ACCESS, token_type="bearer", scopes=frozenset({"store_sales_read", "events_read"})
)


def test_store_token_creates_the_file_with_mode_0600(tmp_path):
    path = tmp_path / ".dlt" / "secrets.toml"
    store_token(path, GRANT)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    document = tomlkit.parse(path.read_text())
    assert document["sources"]["platform"]["access_token"] == ACCESS
    assert document["sources"]["platform"]["granted_scopes"] == ["events_read", "store_sales_read"]
    assert path.read_text().startswith("[sources.platform]\n")  # no empty [sources] table above it
    assert [p.name for p in path.parent.iterdir()] == ["secrets.toml"]  # no temporary file left


EXISTING = """\
# Secrets of platform-sync. Never commit this file.
[sources.platform]
# from the developer console
client_id = "app-1"  # the demo application
client_secret = "keep-me"
access_token = "old-token"

[destination.postgres.credentials]
password = "db-password"  # keep this comment too
"""


def test_store_token_keeps_other_content_and_comments_and_mode(tmp_path):
    path = tmp_path / "secrets.toml"
    path.write_text(EXISTING)
    path.chmod(0o640)
    store_token(path, GRANT)
    text = path.read_text()
    assert text == EXISTING.replace('access_token = "old-token"', f'access_token = "{ACCESS}"').replace(
        'client_secret = "keep-me"\n',
        'client_secret = "keep-me"\n',
    ).replace(
        f'access_token = "{ACCESS}"\n',
        f'access_token = "{ACCESS}"\ngranted_scopes = ["events_read", "store_sales_read"]\n',
    )
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600  # a file holding a token is tightened to owner-only
    # round trip: storing again changes nothing
    store_token(path, GRANT)
    assert path.read_text() == text


@pytest.mark.parametrize(
    "content",
    [
        '[destination]\nname = "duckdb"\n',
        '[sources]\nother = 1\n[sources.platform]\nclient_id = "x"\n[destination]\nname = "d"\n',
        '[sources.platform]\nclient_id = "x"\n[destination]\nname = "d"\n[sources.platform.extra]\nk = 1\n',
        'sources = {platform = {client_id = "x"}}\n',
    ],
    ids=["no-section", "nested", "split-tables", "inline"],
)
def test_store_token_in_any_layout(tmp_path, content):
    path = tmp_path / "secrets.toml"
    path.write_text(content)
    store_token(path, GRANT)
    document = tomlkit.parse(path.read_text())
    assert document["sources"]["platform"]["access_token"] == ACCESS
    before = tomlkit.parse(content)
    for key, value in before.items():
        if key != "sources":
            assert document[key] == value


def test_store_token_refuses_a_non_table_section(tmp_path):
    path = tmp_path / "secrets.toml"
    path.write_text('sources = "oops"\n')
    with pytest.raises(ConfigurationError, match="must be a table"):
        store_token(path, GRANT)
    assert path.read_text() == 'sources = "oops"\n'
