"""Faults (contracts part 2), each observed by an httpx client."""

from __future__ import annotations

import time

import httpx
import pytest

from sandbox.running import running_sandbox
from tests.support.fake_world import FakeWorld
from tests.support.sandbox_api import assert_error

PATH = "/store/v1/products"


@pytest.fixture
def sandbox():
    with running_sandbox(world=FakeWorld(), rate_limits=False) as sandbox:
        yield sandbox


def client_for(sandbox, token=None):
    token = token or sandbox.token()
    return httpx.Client(base_url=sandbox.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=10)


def outcome(client):
    try:
        response = client.get(PATH)
    except httpx.TransportError as exc:
        return type(exc).__name__
    return response.status_code


def test_no_faults_by_default(sandbox):
    assert sandbox.faults()["spec"] == ""
    with client_for(sandbox) as client:
        assert {outcome(client) for _ in range(50)} == {200}


def test_error_fault_answers_500_502_503_with_the_error_body(sandbox):
    sandbox.set_faults("error=1,seed=3")
    with client_for(sandbox) as client:
        answers = [client.get(PATH) for _ in range(30)]
    assert {a.status_code for a in answers} == {500, 502, 503}
    codes = {500: "internal_error", 502: "bad_gateway", 503: "unavailable"}
    for answer in answers:
        assert_error(answer, answer.status_code, codes[answer.status_code])


def test_drop_fault_closes_the_connection_without_an_answer(sandbox):
    sandbox.set_faults("drop=1")
    with client_for(sandbox) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="without sending a response"):
            client.get(PATH)
    assert sandbox.stats()["operations"]["list_products"] == {"dropped": 1}


def test_truncate_fault_sends_half_the_promised_body(sandbox):
    sandbox.set_faults("truncate=1")
    with client_for(sandbox) as client:
        with pytest.raises(httpx.RemoteProtocolError, match="incomplete|complete message body"):
            client.get(PATH, params={"itemsPerPage": 100})
        # Streaming shows what arrived: headers promise N bytes, half of them come.
        with client.stream("GET", PATH) as response:
            assert response.status_code == 200
            promised = int(response.headers["content-length"])
            received = bytearray()
            with pytest.raises(httpx.RemoteProtocolError):
                for chunk in response.iter_raw():
                    received += chunk
        assert len(received) == promised // 2


def test_slow_fault_delays_the_answer(sandbox):
    sandbox.set_faults("slow=1,slow_seconds=0.3")
    with client_for(sandbox) as client:
        started = time.monotonic()
        assert client.get(PATH).status_code == 200
        assert time.monotonic() - started >= 0.3
    assert sandbox.stats()["faults"] == {"slow": 1}


def test_revoke_after_n_requests(sandbox):
    sandbox.set_faults("revoke_after=3")
    with client_for(sandbox) as client:
        statuses = [client.get(PATH).status_code for _ in range(5)]
    assert statuses == [200, 200, 401, 401, 401]
    with client_for(sandbox) as fresh:
        assert fresh.get(PATH).status_code == 200


def test_faults_are_reproducible_for_a_seed(sandbox):
    spec = "error=0.3,drop=0.2,truncate=0.2,seed=7"
    runs = []
    for _ in range(2):
        sandbox.set_faults(spec)
        with client_for(sandbox) as client:
            runs.append([outcome(client) for _ in range(40)])
    assert runs[0] == runs[1]
    assert {200, "RemoteProtocolError"} <= set(runs[0]) and len(set(runs[0])) >= 4
    sandbox.set_faults(spec.replace("seed=7", "seed=8"))
    with client_for(sandbox) as client:
        assert [outcome(client) for _ in range(40)] != runs[0]


def test_faults_spare_sandbox_routes_and_the_token_exchange(sandbox):
    sandbox.set_faults("error=1")
    for exchanges in range(1, 6):
        assert sandbox.token()
        # every token exchange answered 200 and no fault was drawn; the sandbox routes are not counted
        token_exchanges = {"token_exchange": {"200": exchanges}}
        assert sandbox.stats() == {"total": exchanges, "operations": token_exchanges, "faults": {}}
        assert sandbox.catalog()["events"]
        assert sandbox.advance(0)


def test_faults_route_shows_and_validates(sandbox):
    shown = sandbox.set_faults("error=0.05,slow=0.02,drop=0.01,truncate=0.01,revoke_after=500,seed=7")
    assert shown["spec"] == "error=0.05,slow=0.02,drop=0.01,truncate=0.01,revoke_after=500,seed=7"
    assert sandbox.faults()["faults"]["revoke_after"] == 500
    url = f"{sandbox.base_url}/sandbox/faults"
    for bad in ["error=2", "explode=0.1", "error", "revoke_after=0", "error=0.6,drop=0.6"]:
        assert_error(httpx.post(url, json={"spec": bad}), 422, "validation_error")
    assert_error(httpx.post(url, content=b"{"), 400)
    assert sandbox.set_faults(None)["spec"] == ""


def test_faults_given_at_start():
    with (
        running_sandbox(world=FakeWorld(), faults="error=1,seed=1") as sandbox,
        client_for(sandbox) as client,
    ):
        assert client.get(PATH).status_code in (500, 502, 503)


def test_revocation_holds_even_when_the_nth_request_meets_another_fault(sandbox):
    sandbox.set_faults("revoke_after=2,error=1")
    with client_for(sandbox) as client:
        statuses = [client.get(PATH).status_code for _ in range(2)]
        assert all(status >= 500 for status in statuses)
        sandbox.set_faults("")
        assert client.get(PATH).status_code == 401
    assert sandbox.stats()["faults"]["revoke"] == 1
