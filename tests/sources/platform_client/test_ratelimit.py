"""The proactive rate limiter: never more than L requests in a window, and never slower than that."""

from __future__ import annotations

import math
import threading
import time

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sources.platform_client.clock import SystemClock
from sources.platform_client.errors import ConfigurationError
from sources.platform_client.ratelimit import (
    DEFAULT_WINDOW_MARGIN,
    OperationLimiter,
    RateLimiters,
    Verdict,
    per_window,
    resolve_rate_limits,
)


def max_in_any_window(times: list[float], window: float) -> int:
    """The most grants in any half-open window [t, t + window)."""
    times = sorted(times)
    best, start = 0, 0
    for end, t in enumerate(times):
        while times[start] <= t - window:
            start += 1
        best = max(best, end - start + 1)
    return best


def exact_limiter(clock, limit, window=60.0):
    return OperationLimiter("op", limit, window, clock, margin=0.0)


# --- the guarantee and the spend -------------------------------------------------------------------------


def test_full_limit_at_once_then_one_per_freed_slot(clock):
    limiter = exact_limiter(clock, 3)
    assert [limiter.acquire().granted_at for _ in range(9)] == [0, 0, 0, 60, 60, 60, 120, 120, 120]
    assert clock.monotonic() == 120


def test_slots_free_one_by_one_when_requests_were_spread(clock):
    limiter = exact_limiter(clock, 3)
    grants = []
    for arrival in (0, 10, 20, 25, 26, 90):
        clock.advance(max(0.0, arrival - clock.monotonic()))
        grants.append(limiter.acquire().granted_at)
    # the 4th waits for the 1st to leave the window (60), the 5th for the 2nd (70); the 6th is free at 90
    assert grants == [0, 10, 20, 60, 70, 90]


@settings(max_examples=200, deadline=None)
@given(
    limit=st.integers(min_value=1, max_value=8),
    window=st.floats(min_value=0.5, max_value=120, allow_nan=False),
    gaps=st.lists(st.floats(min_value=0, max_value=40, allow_nan=False), min_size=1, max_size=60),
)
def test_property_at_most_l_per_window_and_each_grant_as_early_as_allowed(clock_factory, limit, window, gaps):
    clock = clock_factory()
    limiter = exact_limiter(clock, limit, window)
    arrivals, grants = [], []
    t = 0.0
    for gap in gaps:
        t += gap
        clock.advance(max(0.0, t - clock.monotonic()))
        arrivals.append(clock.monotonic())
        grants.append(limiter.acquire().granted_at)
    for i, granted in enumerate(grants):
        # work-conserving: the earliest moment that keeps the guarantee, given the previous grants
        earliest = max(arrivals[i], grants[i - 1] if i else -math.inf)
        if i >= limit:
            earliest = max(earliest, grants[i - limit] + window)
        assert granted == pytest.approx(earliest, abs=1e-9)
        if i >= limit:
            assert granted - grants[i - limit] >= window - 1e-9
    assert max_in_any_window(grants, window * (1 - 1e-9)) <= limit


def test_many_threads_never_exceed_the_limit(clock):
    limiter = exact_limiter(clock, 10)
    grants: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(25):
            permit = limiter.acquire()
            with lock:
                grants.append(permit.granted_at)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(grants) == 200
    assert max_in_any_window(grants, 60.0) == 10


def test_many_threads_on_the_real_clock():
    """20 requests per 0.5 s, 60 requests from 4 threads on the real clock: never 21 grants in a window,
    and done in about 1 s. (The exact spend is proved on the fake clock above; here a loaded machine may
    wake a thread late, which delays its grant, so time is bounded loosely.)"""
    limiter = OperationLimiter("op", 20, 0.5, SystemClock(), margin=0.0)
    grants: list[float] = []
    lock = threading.Lock()
    start = time.monotonic()

    def worker() -> None:
        for _ in range(15):
            permit = limiter.acquire()
            with lock:
                grants.append(permit.granted_at)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    elapsed = time.monotonic() - start
    assert len(grants) == 60
    assert max_in_any_window(grants, 0.5) == 20
    assert 1.0 <= elapsed < 3.0  # bursts at 0, 0.5 and 1.0 s; nothing near one window per request (30 s)


def test_margin_lengthens_the_window_slightly(clock):
    limiter = OperationLimiter("op", 2, 60.0, clock)  # default margin
    assert [limiter.acquire().granted_at for _ in range(4)] == pytest.approx(
        [0, 0, 60 * (1 + DEFAULT_WINDOW_MARGIN)] * 1 + [60 * (1 + DEFAULT_WINDOW_MARGIN)]
    )


# --- against a server like the sandbox (token bucket, capacity = limit) --------------------------------


def token_bucket_server(clock, limit, window):
    """Contracts part 1: a token bucket of capacity `limit` refilled at limit/window per second."""
    state = {"tokens": float(limit), "at": 0.0}
    lock = threading.Lock()

    def handle(request: httpx.Request) -> httpx.Response:
        with lock:
            now = clock.monotonic()
            state["tokens"] = min(limit, state["tokens"] + (now - state["at"]) * limit / window)
            state["at"] = now
            if state["tokens"] >= 1:
                state["tokens"] -= 1
                return httpx.Response(200, json={"id": request.url.path.rsplit("/", 1)[-1]})
            wait = (1 - state["tokens"]) * window / limit
            return httpx.Response(429, headers={"Retry-After": str(max(1, math.ceil(wait)))})

    return handle


@pytest.mark.parametrize(("time_scale", "window"), [(1.0, 60.0), (60.0, 1.0)])
def test_spec_limit_meets_a_token_bucket_without_429_and_without_waiting_longer(
    make_client, clock, time_scale, window
):
    client, api = make_client(token_bucket_server(clock, 30, window), rate_limit_time_scale=time_scale)
    for n in range(90):
        client.request("sale_details", {"id": n})
    stats = client.stats["sale_details"]
    assert (stats.requests, stats.rate_limited) == (90, 0)
    span = window * (1 + DEFAULT_WINDOW_MARGIN)
    assert [s.at for s in api.seen] == pytest.approx([0.0] * 30 + [span] * 30 + [2 * span] * 30)
    assert stats.rate_limit_wait_seconds == pytest.approx(2 * span)  # the first of each burst waits


def test_configured_rate_overrides_the_spec(make_client, clock):
    client, api = make_client(lambda r: httpx.Response(200, json={}), rate_limits={"sale_details": 10})
    for n in range(11):
        client.request("sale_details", {"id": n})
    assert [s.at for s in api.seen][-2:] == pytest.approx([0.0, 60 * (1 + DEFAULT_WINDOW_MARGIN)])


def test_unlisted_operations_are_not_limited(make_client, clock):
    client, api = make_client(lambda r: httpx.Response(200, json={"items": []}))
    for _ in range(1000):
        client.request("top_commented_posts", {"communityId": 1})
    assert clock.monotonic() == 0.0 and len(api.seen) == 1000


# --- adapting to 429 ------------------------------------------------------------------------------------


def burst(limiter, count):
    return [limiter.acquire() for _ in range(count)]


def test_first_429_on_an_unlimited_operation_halves_the_observed_rate(clock):
    limiter = exact_limiter(clock, None)
    permits = burst(limiter, 40)
    limiter.on_rate_limited(permits[-1])
    assert limiter.limit == 20
    assert limiter.acquire().granted_at == 60.0  # the 20 most recent grants fill the new window


def test_server_limit_header_is_used_when_consistent_with_what_was_observed(clock):
    limiter = exact_limiter(clock, None)
    permits = burst(limiter, 40)
    limiter.on_rate_limited(permits[-1], server_limit=30)
    assert limiter.limit == 30
    other = exact_limiter(clock, None)
    permits = burst(other, 40)
    # 40 sent where the server allows 600: another client spent the budget (issue 27); no limit.
    assert other.on_rate_limited(permits[-1], server_limit=600) is Verdict.FOREIGN
    assert other.limit is None
    # A second 429 in a row, no success between: taken as ours, half the observed rate.
    assert other.on_rate_limited(other.acquire(), server_limit=600) is Verdict.OURS
    assert other.limit == 20


def test_each_further_429_halves_but_one_burst_counts_once(clock):
    limiter = exact_limiter(clock, None)
    permits = burst(limiter, 16)
    for permit in permits[-5:]:  # five threads see 429s from the same burst
        limiter.on_rate_limited(permit)
    assert limiter.limit == 8
    clock.advance(1)
    later = limiter.acquire()
    limiter.on_rate_limited(later)
    assert limiter.limit == 4
    limiter.on_rate_limited(later)  # the same request's 429 seen again, or one granted before
    limiter.on_rate_limited(permits[0])
    assert limiter.limit == 4
    for _ in range(10):
        clock.advance(1)
        limiter.on_rate_limited(limiter.acquire())
    assert limiter.limit == 1


def test_a_429_after_a_single_request_sets_no_limit(clock):
    limiter = exact_limiter(clock, None)
    limiter.on_rate_limited(limiter.acquire(), retry_after=3.0)
    assert limiter.limit is None
    assert [limiter.acquire().granted_at for _ in range(3)] == [3.0, 3.0, 3.0]


def test_spec_limited_operation_halves_on_429(clock):
    limiter = exact_limiter(clock, 30)
    limiter.on_rate_limited(limiter.acquire())
    assert limiter.limit == 15


def test_retry_after_holds_every_thread_of_the_operation(clock):
    limiter = exact_limiter(clock, None)
    permit = limiter.acquire()
    limiter.on_rate_limited(permit, retry_after=5.0)
    grants: list[float] = []
    threads = [threading.Thread(target=lambda: grants.append(limiter.acquire().granted_at)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert len(grants) == 4 and min(grants) >= 5.0


def test_retry_after_blocks_only_its_operation(make_client, clock, script):
    responses = [httpx.Response(429, headers={"Retry-After": "9"})] + [httpx.Response(200, json={})] * 3
    client, api = make_client(script(*responses))
    client.request("list_webhook_origins")  # 429, waits 9 s, then 200
    client.request("list_webhook_origins")
    assert [s.at for s in api.seen] == [0.0, 9.0, 9.0]
    limiters = client._limiters
    assert limiters.get("list_products").reserve() == clock.monotonic()


# --- configuration --------------------------------------------------------------------------------------


def test_per_window():
    assert per_window(30, 1) == (30, 60.0)
    assert per_window(30, 60) == (30, 1.0)
    assert per_window(1.5, 1) == (1, 40.0)
    assert per_window(0.5, 2) == (1, 60.0)


def test_resolve_rate_limits():
    assert resolve_rate_limits(None)["sale_details"] == 30
    assert resolve_rate_limits({"list_products": 120})["list_products"] == 120.0
    with pytest.raises(
        ConfigurationError, match="unknown operation name.*'sales'.*valid names: add_attendee, "
    ):
        resolve_rate_limits({"sales": 1})
    for bad in (0, -3, float("inf"), True, "10"):
        with pytest.raises(ConfigurationError, match="positive numbers"):
            resolve_rate_limits({"list_products": bad})


def test_time_scale_divides_every_window(clock):
    limiters = RateLimiters({"list_products": 120}, 4.0, clock)
    assert limiters.get("sale_details").window == 15.0
    assert limiters.get("list_products").window == 15.0
    assert limiters.get("list_products").limit == 120
    assert limiters.get("list_transfers").limit is None
    assert limiters.get("sale_details") is limiters.get("sale_details")
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ConfigurationError, match="rate_limit_time_scale"):
            RateLimiters(None, bad, clock)
