"""One request per key, several in flight (issue 45: campaigns and partners per product, event and
delivery details, renewals and top posts were asked one after another): `PlatformClient.each` gives
each key with its answer in the keys' order, a 404 to the key it belongs to, the first request alone,
and never more in flight than `pages_ahead`. Concurrency is proven by a barrier the requests must
reach together, never by timing."""

from __future__ import annotations

import threading

import httpx
import pytest

from sources.platform_client.client import PlatformClient
from sources.platform_client.errors import AuthenticationError, NotFoundError


class Details:
    """`sale_details` answering each id; ids in `missing` answer 404, `status` answers every request.
    Requests after the first `alone` wait at a barrier of `together` parties: they pass only when that
    many are in flight at once (a sequential fan breaks the barrier and the test fails)."""

    def __init__(self, missing=(), status: int = 200, together: int = 0, alone: int = 1) -> None:
        self.missing, self.status = set(missing), status
        self.lock = threading.Lock()
        self.seen: list[str] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.alone = alone
        self.barrier = threading.Barrier(together, timeout=10) if together else None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        sale_id = request.url.path.rsplit("/", 1)[-1]
        with self.lock:
            self.seen.append(sale_id)
            number = len(self.seen)
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            if self.barrier is not None and number > self.alone:
                self.barrier.wait()
        finally:
            with self.lock:
                self.in_flight -= 1
        if self.status != 200:
            return httpx.Response(self.status, json={"message": "no"})
        if sale_id in self.missing:
            return httpx.Response(404, json={"message": "not found"})
        return httpx.Response(200, json={"id": sale_id})


def client_on(handler, **options) -> PlatformClient:
    """A client whose fans keep exactly `pages_ahead` in flight: the pool holds no more (the rate and
    latency could otherwise ask more, by the machine's speed: `in_flight_wanted` is tested below)."""
    options.setdefault("backoff_base", 0.0)
    options.setdefault("pages_ahead_total", options.get("pages_ahead", 8))
    options.setdefault("rate_limits", {"sale_details": 1_000_000})  # the spec's 30 a minute would wait
    transport = httpx.MockTransport(handler)
    return PlatformClient("https://api.platform.test", "tok", transport=transport, **options)


def answers(client: PlatformClient, keys) -> list[tuple[str, object]]:
    result: list[tuple[str, object]] = []
    for key, answer in client.each("sale_details", keys, lambda k: {"id": k}):
        try:
            result.append((key, answer.result()))
        except NotFoundError:
            result.append((key, "404"))
    return result


def test_every_key_gets_its_own_answer_in_the_keys_order():
    keys = [f"s{i}" for i in range(40)]
    api = Details(missing={"s3", "s17"})
    with client_on(api, pages_ahead=8) as client:
        got = answers(client, iter(keys))  # a generator: keys are taken as requests go
    assert got == [(k, "404" if k in {"s3", "s17"} else {"id": k}) for k in keys]
    assert sorted(api.seen) == sorted(keys)  # each key asked once
    assert api.seen[0] == "s0"


def test_requests_go_together_up_to_pages_ahead():
    # After the first request alone, the next ones must reach a barrier of 4 together.
    keys = [f"s{i}" for i in range(1, 10)]
    api = Details(together=4, alone=1)
    with client_on(api, pages_ahead=4) as client:
        got = answers(client, keys[:9])
    assert [k for k, _ in got] == keys[:9]
    assert api.most_in_flight == 4


def test_never_more_in_flight_than_pages_ahead():
    api = Details(together=0)
    with client_on(api, pages_ahead=3) as client:
        answers(client, [f"s{i}" for i in range(30)])
    assert api.most_in_flight <= 3


def test_a_refused_token_costs_one_request_not_a_window():
    api = Details(status=401)
    with client_on(api, pages_ahead=8) as client:
        fan = client.each("sale_details", [f"s{i}" for i in range(20)], lambda k: {"id": k})
        key, answer = next(fan)
        with pytest.raises(AuthenticationError):
            answer.result()
        fan.close()  # the caller stops: the requests not sent are cancelled
    assert (key, api.seen) == ("s0", ["s0"])


def test_a_caller_that_stops_early_sends_no_more_requests():
    api = Details()
    with client_on(api, pages_ahead=4) as client:
        fan = client.each("sale_details", (f"s{i}" for i in range(1000)), lambda k: {"id": k})
        taken = [next(fan)[1].result() for _ in range(3)]
        fan.close()
    assert taken == [{"id": "s0"}, {"id": "s1"}, {"id": "s2"}]
    assert len(api.seen) <= 3 + 4  # those taken and at most a window in flight, of a thousand keys


# --- how many in flight: rate x latency (issue 45) ----------------------------------------------------


def slow(clock, seconds: float, statuses=()):
    """A handler whose answers take `seconds` on the fake clock; the first answers have `statuses`."""
    queued = list(statuses)

    def handler(request: httpx.Request) -> httpx.Response:
        clock.advance(seconds)
        status = queued.pop(0) if queued else 200
        return httpx.Response(status, json={"id": "s"} if status == 200 else {"message": "busy"})

    return handler


@pytest.mark.parametrize(
    ("latency", "wanted"),
    [
        (0.3, 14),  # 30 a second at 300 ms: 9 needed to keep pace, half again as headroom: ceil(13.2)
        (0.14, 7),  # the world: 4.2 needed, 4 in flight always fell behind
        (0.01, 4),  # a fast server: the configured least
        (2.0, 16),  # a slow one: no more than the most
    ],
)
def test_requests_in_flight_follow_the_rate_and_the_latency_measured(make_client, clock, latency, wanted):
    client, _ = make_client(slow(clock, latency), rate_limit_time_scale=60)  # 30 a second
    assert client.in_flight_wanted("sale_details", 4, 16) == 4  # nothing measured yet: the least
    client.request("sale_details", path_params={"id": "s1"})
    assert client.in_flight_wanted("sale_details", 4, 16) == wanted


def test_a_request_sleeping_before_its_retry_gives_its_slot_back(make_client, clock):
    """While one request sleeps after a 503 the operation may have one more in flight."""
    seen: list[int] = []
    client = None

    def handler(request: httpx.Request) -> httpx.Response:
        clock.advance(0.01)
        return httpx.Response(503 if not seen else 200, json={"id": "s"})

    real_sleep = clock.sleep

    def sleep(seconds: float) -> None:  # the retry's backoff: look at the slots while it sleeps
        if seconds > 0 and client is not None:
            seen.append(client.in_flight_wanted("sale_details", 4, 16))
        real_sleep(seconds)

    clock.sleep = sleep
    client, _ = make_client(handler, rate_limit_time_scale=60, backoff_base=0.5)
    assert client.in_flight_wanted("sale_details", 4, 16) == 4
    assert client.request("sale_details", path_params={"id": "s1"}) == {"id": "s"}
    # the 503 cut the window of the one request in flight to one (`inflight.py`); the one backing off
    # adds its slot to it
    assert seen == [1 + 1]
    # awake again, its slot is its own; its answer widened the window by one
    assert client.in_flight_wanted("sale_details", 4, 16) == 2
