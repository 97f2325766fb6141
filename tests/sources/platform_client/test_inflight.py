"""How many requests of one operation go at once (issue 45, `sources/platform_client/inflight.py`): the
rule (rate x latency, half again) within a congestion window that grows with each answer and halves on a
5xx, a timeout or a 429 of our own pace, never on another app's 429; and one gate per operation that
every reader of it passes. On the fake clock, or counted at the transport; never timed."""

from __future__ import annotations

import threading

import httpx
import pytest

from sources.platform_client.errors import ServerError
from sources.platform_client.inflight import OperationFlow
from sources.platform_client.ratelimit import Schedule

# 30 sale details a second (the spec's 30 a minute at time scale 60) answered in 0.14 s: the rule asks
# ceil(30 x 0.14 x 1.5) = 7 in flight
RATE = Schedule(per_second=30.0, burst=30, waiting=False)


def flow_at_the_rule() -> OperationFlow:
    flow = OperationFlow(least=4, most=16)
    flow.answered(0.14, congested=False)
    return flow


def test_the_window_climbs_back_to_the_rule_one_answer_at_a_time_after_a_cut():
    flow = flow_at_the_rule()
    assert flow.wanted(RATE, 4, 16) == 7
    with flow.slot(RATE), flow.slot(RATE), flow.slot(RATE), flow.slot(RATE), flow.slot(RATE), flow.slot(RATE):
        flow.answered(0.14, congested=True)  # a 503 while 6 were in flight: the window is 3
    climb = [flow.wanted(RATE, 4, 16)]
    for _ in range(6):
        flow.answered(0.14, congested=False)
        climb.append(flow.wanted(RATE, 4, 16))
    assert climb == [3, 4, 5, 6, 7, 7, 7]  # back to the rule, and no further than the rule


def test_an_operation_without_a_known_limit_is_probed_from_the_least_up_to_the_most():
    """No limit known (schedule None: most operations of the spec): the least, one more with each answer,
    never past the most; a sign of congestion halves what is in flight, and it climbs again."""
    flow = OperationFlow(least=8, most=16)
    climb = [flow.wanted(None, 8, 16)]
    for _ in range(10):
        flow.answered(0.14, congested=False)
        climb.append(flow.wanted(None, 8, 16))
    assert climb == [8, 9, 10, 11, 12, 13, 14, 15, 16, 16, 16]
    with flow.slot(None), flow.slot(None), flow.slot(None), flow.slot(None):
        flow.answered(0.14, congested=True)  # a 503 while 4 were in flight
    assert flow.wanted(None, 8, 16) == 2
    flow.answered(0.14, congested=False)
    assert flow.wanted(None, 8, 16) == 3


def test_failures_of_one_flight_cut_the_window_once():
    flow = flow_at_the_rule()
    with flow.slot(RATE), flow.slot(RATE), flow.slot(RATE), flow.slot(RATE):
        for _ in range(4):  # four 503s answering the four requests sent together
            flow.answered(0.14, congested=True)
    assert flow.wanted(RATE, 4, 16) == 2
    flow.answered(0.14, congested=False)
    with flow.slot(RATE), flow.slot(RATE), flow.slot(RATE):
        flow.failed_to_answer()  # a timeout in a later flight cuts again
    assert flow.wanted(RATE, 4, 16) == 1


def test_the_gate_holds_every_reader_of_an_operation_to_one_limit():
    """Two readers of one operation (two threads asking for slots) never hold more than the rule's limit
    together: the third slot is only had once one is given back."""
    flow = OperationFlow(least=2, most=2)
    got_third = threading.Event()
    with flow.slot(None), flow.slot(None):

        def third() -> None:
            with flow.slot(None):
                got_third.set()

        waiter = threading.Thread(target=third)
        waiter.start()
        assert not got_third.wait(0.3)  # both slots are held: the third waits
    waiter.join(5)
    assert got_third.is_set()  # given back: the third went


# --- through the client ---------------------------------------------------------------------------------


def answers_after(clock, seconds: float, statuses, foreign: bool = False):
    """A handler whose answers take `seconds` on the fake clock, with `statuses` first (then 200s); its
    429s say another app spent the budget (`X-RateLimit-Limit` above ours) when `foreign`."""
    queued = list(statuses)

    def handler(request: httpx.Request) -> httpx.Response:
        clock.advance(seconds)
        status = queued.pop(0) if queued else 200
        headers = {"Retry-After": "0"}
        if status == 429 and foreign:
            headers["X-RateLimit-Limit"] = "100000"
        return httpx.Response(status, json={"id": "s"} if status == 200 else {"m": "x"}, headers=headers)

    return handler


@pytest.mark.parametrize(("status", "cut"), [(503, True), (500, True), (429, True)])
def test_a_5xx_or_our_own_429_cuts_the_window(make_client, clock, status, cut):
    client, _ = make_client(answers_after(clock, 0.14, [200, status]), rate_limit_time_scale=60)
    client.request("sale_details", path_params={"id": "s1"})
    assert client.in_flight_wanted("sale_details", 4, 16) == 7  # the rule
    client.request("sale_details", path_params={"id": "s2"})  # its first try fails, its retry answers
    # one request was in flight when it failed: the window is one, and the retry's answer widened it
    assert client.in_flight_wanted("sale_details", 4, 16) == 2


def test_another_apps_429_does_not_cut_the_window(make_client, clock):
    client, _ = make_client(answers_after(clock, 0.14, [200, 429], foreign=True), rate_limit_time_scale=60)
    client.request("sale_details", path_params={"id": "s1"})
    client.request("sale_details", path_params={"id": "s2"})
    assert client.stats["sale_details"].foreign_rate_limited == 1
    assert client.in_flight_wanted("sale_details", 4, 16) == 7


def test_a_timeout_cuts_the_window(make_client, clock):
    tries: list[int] = []

    def handler(request: httpx.Request) -> httpx.Response:
        tries.append(1)
        clock.advance(0.14)
        if len(tries) == 2:
            raise httpx.ReadTimeout("slow", request=request)
        return httpx.Response(200, json={"id": "s"})

    client, _ = make_client(handler, rate_limit_time_scale=60, backoff_base=0.0)
    client.request("sale_details", path_params={"id": "s1"})
    client.request("sale_details", path_params={"id": "s2"})
    assert len(tries) == 3
    assert client.in_flight_wanted("sale_details", 4, 16) == 2


def test_two_fans_of_one_operation_share_its_slots(make_client):
    """Two readers fanning out over the same operation at once (as a list and the index of a fan over
    it do) have no more requests in flight together than one of them may: counted at the transport.
    The fake clock never moves, so the latency measured is nil and the rule asks the least, 3."""
    lock = threading.Lock()
    in_flight = [0, 0]  # now, most
    never = threading.Event()

    def handler(request: httpx.Request) -> httpx.Response:
        with lock:
            in_flight[0] += 1
            in_flight[1] = max(in_flight[1], in_flight[0])
        never.wait(0.02)  # hold the slot a moment, so that the fans overlap
        with lock:
            in_flight[0] -= 1
        return httpx.Response(200, json={"id": request.url.path.rsplit("/", 1)[-1]})

    client, _ = make_client(
        handler, pages_ahead=3, pages_ahead_total=16, rate_limits={"sale_details": 1_000_000}
    )
    results: dict[str, list[object]] = {"a": [], "b": []}

    def fan(name: str) -> None:
        keys = [f"{name}{i}" for i in range(24)]
        for _, answer in client.each("sale_details", keys, lambda key: {"id": key}):
            results[name].append(answer.result())

    readers = [threading.Thread(target=fan, args=(name,)) for name in results]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join(30)
    assert results == {name: [{"id": f"{name}{i}"} for i in range(24)] for name in results}
    assert in_flight[1] <= 3  # each fan alone may keep 3: together still 3


def test_a_failure_that_is_not_retried_still_gives_its_slot_back(make_client, clock):
    """Twenty requests that fail for good, then one that answers: a slot kept by a failed request would
    leave the (cut) window full, and the last request would wait at the gate for ever."""
    client, _ = make_client(answers_after(clock, 0.01, [500] * 20), max_retries=1, backoff_base=0.0)
    for _ in range(20):
        with pytest.raises(ServerError):
            client.request("sale_details", path_params={"id": "s1"})
    assert client.in_flight_wanted("sale_details", 4, 16) == 1  # cut to one
    assert client.request("sale_details", path_params={"id": "s1"}) == {"id": "s"}
