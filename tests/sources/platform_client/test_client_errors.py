"""Error mapping (401/403/404/422/...) and redaction: the token never shows in errors or logs."""

from __future__ import annotations

import logging
import traceback

import httpx
import pytest

from sources.platform_client.errors import (
    ApiError,
    AuthenticationError,
    ConfigurationError,
    MalformedResponseError,
    MissingScopeError,
    NotFoundError,
    PermissionDeniedError,
    PlatformError,
    RateLimitedError,
    ServerError,
    TransportError,
    ValidationError,
)
from sources.platform_client.redaction import Redactor, redact_patterns, redact_url


def body(code, error, message, **extra):
    return {"status": code, "error": error, "message": message, **extra}


def test_401_says_how_to_authorize_again(make_client):
    client, api = make_client(lambda r: httpx.Response(401, json=body(401, "unauthorized", "token revoked")))
    with pytest.raises(AuthenticationError) as caught:
        client.request("list_products")
    message = str(caught.value)
    assert message.startswith(
        "list_products: the access token was rejected (401 unauthorized: token revoked)"
    )
    assert "platform-sync auth --code <code>" in message and "SOURCES__PLATFORM__ACCESS_TOKEN" in message
    assert len(api.seen) == 1


def test_403_missing_scope_names_the_scope_from_the_body(make_client):
    answer = body(403, "forbidden", "missing scope in request headers", scope="store_affiliates_read")
    client, _ = make_client(lambda r: httpx.Response(403, json=answer))
    with pytest.raises(MissingScopeError) as caught:
        client.request("list_affiliations", params={"page": 1, "itemsPerPage": 10})
    error = caught.value
    assert error.scopes == ("store_affiliates_read",)
    assert str(error).startswith("list_affiliations needs the scope store_affiliates_read")
    assert "Authorize the application again including store_affiliates_read" in str(error)
    assert isinstance(error, PermissionDeniedError)  # catching the broader class also works


def test_403_missing_scope_without_a_named_scope_uses_the_operations_table(make_client):
    client, _ = make_client(lambda r: httpx.Response(403, text="missing scope in request headers"))
    with pytest.raises(MissingScopeError) as caught:
        client.request("add_attendee", json={})
    assert caught.value.scopes == ("events_read", "events_write")
    assert "add_attendee needs the scope events_read and events_write" in str(caught.value)


def test_missing_scope_plain_text_body_falls_back_to_the_status_text(make_client):
    client, _ = make_client(lambda r: httpx.Response(403, text="<html>nope</html>"))
    with pytest.raises(PermissionDeniedError) as caught:
        client.request("top_commented_posts", {"communityId": 9})
    assert not isinstance(caught.value, MissingScopeError)
    assert "(403: Forbidden)" in str(caught.value)
    assert "the user may not access this resource" in str(caught.value)
    assert "ids in the configuration belong to this account" in str(caught.value)


def test_404_and_422_show_the_server_message_and_details(make_client, script):
    answer_404 = body(404, "not_found", "event not found")
    answer_422 = body(
        422,
        "validation_error",
        "invalid parameters",
        details=[
            {"field": "startDate", "message": "must be before endDate"},
            {"field": "filterBy", "message": "?"},
        ],
    )
    client, _ = make_client(
        script(httpx.Response(404, json=answer_404), httpx.Response(422, json=answer_422))
    )
    with pytest.raises(
        NotFoundError, match=r"event_details: not found \(404 not_found: event not found\) at "
    ):
        client.request("event_details", {"id": "ev-1"})
    with pytest.raises(ValidationError) as caught:
        list(client.paginate("list_subscriptions", params={"filterBy": "x"}))
    error = caught.value
    assert error.details == (("startDate", "must be before endDate"), ("filterBy", "?"))
    assert "invalid parameters" in str(error)
    assert "[startDate: must be before endDate; filterBy: ?]" in str(error)
    assert (error.status, error.error_code, error.server_message) == (
        422,
        "validation_error",
        "invalid parameters",
    )


def test_other_status_is_an_api_error(make_client):
    client, _ = make_client(lambda r: httpx.Response(409, text=""))
    with pytest.raises(ApiError, match="unexpected answer 409: Conflict") as caught:
        client.request("list_products")
    assert type(caught.value) is ApiError


# --- redaction -----------------------------------------------------------------------------------------


def echo_token(request: httpx.Request) -> str:
    """What a careless server might say: the request's Authorization header, echoed."""
    return request.headers["authorization"]


FORCED = {
    "401": lambda r: httpx.Response(401, json=body(401, "unauthorized", f"bad token {echo_token(r)}")),
    "403-scope": lambda r: httpx.Response(
        403, json=body(403, "forbidden", "missing scope", scope=echo_token(r))
    ),
    "403": lambda r: httpx.Response(403, json=body(403, "forbidden", f"no permission for {echo_token(r)}")),
    "404": lambda r: httpx.Response(404, text=f"not found: {echo_token(r)}"),
    "422": lambda r: httpx.Response(
        422, json=body(422, "validation_error", "bad", details=[{"field": "x", "message": echo_token(r)}])
    ),
    "429": lambda r: httpx.Response(
        429, headers={"Retry-After": "1"}, json=body(429, "rate_limited", echo_token(r))
    ),
    "500": lambda r: httpx.Response(500, json=body(500, "internal_error", echo_token(r))),
    "truncated": lambda r: httpx.Response(200, content=f'{{"page": 1, "token": "{echo_token(r)}'.encode()),
    "dropped": None,
}


class EchoingDrop(httpx.RemoteProtocolError):
    pass


@pytest.mark.parametrize("case", sorted(FORCED))
def test_the_token_appears_nowhere(make_client, token, caplog, case):
    def handler(request: httpx.Request) -> httpx.Response:
        if FORCED[case] is None:
            raise EchoingDrop(f"peer closed after {echo_token(request)}", request=request)
        return FORCED[case](request)

    client, _ = make_client(handler, max_retries=2)
    with caplog.at_level(logging.DEBUG):
        with pytest.raises(PlatformError) as caught:
            list(client.paginate("list_products"))
    error = caught.value
    texts = {
        "str": str(error),
        "repr": repr(error),
        "args": repr(error.args),
        "attributes": repr(vars(error)),
        "log": caplog.text,
    }
    if case != "dropped":  # there, the cause is the raw httpx exception: only our own text is checked
        texts["traceback"] = "".join(traceback.format_exception(error))
    for where, text in texts.items():
        assert token not in text, f"token in {where}"
    assert "***" in str(error) or case in ("404",)


def test_configuration_error_with_a_token_in_the_url_is_redacted(token):
    from sources.platform_client.client import PlatformClient

    with pytest.raises(ConfigurationError) as caught:
        PlatformClient(f"ftp://user:{token}@host/?access_token={token}", token)
    assert token not in str(caught.value)


def test_redact_url_masks_sensitive_query_values_and_user_info():
    url = "https://u:p4ss@api.test/x?page=2&access_token=abc&Code=xyz&startDate=2026-01-01T00%3A00%3A00Z"
    assert (
        redact_url(url)
        == "https://api.test/x?page=2&access_token=***&Code=***&startDate=2026-01-01T00%3A00%3A00Z"
    )
    assert redact_url(httpx.URL("https://api.test/y")) == "https://api.test/y"


def test_redactor_masks_known_secrets_in_any_form():
    secret = "s3cr3t/with+chars="
    redactor = Redactor([secret, None, "ab"])  # too-short and missing values are ignored
    text = f"a {secret} b {httpx.URL('https://x/?t=' + secret).query.decode()} c s3cr3t%2Fwith%2Bchars%3D"
    assert secret not in redactor(text)
    assert "s3cr3t" not in redactor(text)
    assert redactor("nothing here") == "nothing here"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer ***"),
        ('{"access_token": "abc", "scope": "x"}', '{"access_token": "***", "scope": "x"}'),
        ("client_secret=abc&code=123&page=1", "client_secret=***&code=***&page=1"),
        (
            '{"error_code": "not_found", "postalCode": "01000"}',
            '{"error_code": "not_found", "postalCode": "01000"}',
        ),
    ],
)
def test_redact_patterns(text, expected):
    assert redact_patterns(text) == expected


def test_exceptions_keep_no_request_or_response(make_client):
    """An httpx.Request on an exception would carry the Authorization header into error trackers."""
    for factory, error_type in (
        (lambda r: httpx.Response(500), ServerError),
        (lambda r: httpx.Response(429), RateLimitedError),
        (lambda r: httpx.Response(200, content=b"{"), MalformedResponseError),
    ):
        client, _ = make_client(factory, max_retries=1)
        with pytest.raises(error_type) as caught:
            client.request("list_products")
        for value in vars(caught.value).values():
            assert not isinstance(value, httpx.Request | httpx.Response)
    client, _ = make_client(
        lambda r: (_ for _ in ()).throw(httpx.ConnectError("x", request=r)), max_retries=1
    )
    with pytest.raises(TransportError) as caught:
        client.request("list_products")
    assert all(not isinstance(v, httpx.Request | httpx.Response) for v in vars(caught.value).values())


# --- transport security: the token never travels in clear text or in a URL ---


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://api.example.com", "must use https for a host that is not this machine"),
        ("http://10.0.0.5:8400", "must use https for a host that is not this machine"),
        ("https://user:pa55word@api.example.com", "must not carry credentials"),
        ("https://tok-abcdef123@api.example.com", "must not carry credentials"),
        ("ftp://api.example.com", r"must be an http\(s\) URL"),
        ("api.example.com", r"must be an http\(s\) URL"),
    ],
)
def test_an_unsafe_base_url_is_refused_before_any_request(url: str, message: str) -> None:
    from sources.platform_client.auth import exchange_code
    from sources.platform_client.client import PlatformClient
    from sources.platform_client.errors import ConfigurationError

    sent: list[httpx.Request] = []
    transport = httpx.MockTransport(lambda request: sent.append(request) or httpx.Response(200, json={}))
    with pytest.raises(ConfigurationError, match=message) as error:
        PlatformClient(url, "a-token-value", transport=transport)
    assert "pa55word" not in str(error.value) and "tok-abcdef123" not in str(error.value)
    with pytest.raises(ConfigurationError, match=message.replace("base_url", "auth_url")):
        exchange_code(url, "client", "client-secret", "code-123", "http://localhost/cb", transport)
    assert sent == []


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8400", "http://localhost:8400", "http://[::1]:8400", "https://api.example.com"]
)
def test_plain_http_is_accepted_on_this_machine_only(url: str) -> None:
    from sources.platform_client.client import PlatformClient

    PlatformClient(url, "a-token-value").close()
