"""Several walks at once, their items in one stream (`interleave.py`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import pytest

from sources.platform.fastpath.interleave import interleaved

WAIT = 5.0  # seconds; only reached if the behaviour under test is broken


class Walks:
    """Walks of numbered items that record when they run, and can be held at an item."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most_running = 0
        self.produced = 0
        self.closed: list[str] = []
        self.threads: set[str] = set()

    def walk(
        self,
        name: str,
        count: int | None,
        *,
        hold: threading.Event | None = None,
        fail_at: int | None = None,
        started: threading.Barrier | None = None,
    ) -> Callable[[], Iterator[str]]:
        def items() -> Iterator[str]:
            with self.lock:
                self.running += 1
                self.most_running = max(self.most_running, self.running)
                self.threads.add(threading.current_thread().name)
            try:
                if started is not None:  # counted as running, it waits for the others to be running too
                    started.wait()
                index = 0
                while count is None or index < count:
                    if fail_at == index:
                        raise ValueError(f"{name} failed at {index}")
                    with self.lock:
                        self.produced += 1
                    yield f"{name}{index}"
                    if hold is not None:
                        assert hold.wait(WAIT)
                    index += 1
            finally:
                with self.lock:
                    self.running -= 1
                    self.closed.append(name)

        return items


def test_one_at_a_time_is_every_walk_in_order_in_this_thread() -> None:
    walks = Walks()
    items = list(interleaved([walks.walk("a", 2), walks.walk("b", 3)], parallel=1, depth=4))
    assert items == ["a0", "a1", "b0", "b1", "b2"]
    assert walks.threads == {threading.current_thread().name}


def test_every_item_of_every_walk_arrives_each_walk_in_its_order_two_walks_at_a_time() -> None:
    walks = Walks()
    both_started = threading.Barrier(2, timeout=WAIT)  # the first two walks run at once
    names = {"a": 5, "b": 7, "c": 3, "d": 1, "e": 0}
    walk_list = [walks.walk(n, c, started=both_started if n in "ab" else None) for n, c in names.items()]
    items = list(interleaved(walk_list, parallel=2, depth=3))
    assert sorted(items) == sorted(f"{n}{i}" for n, c in names.items() for i in range(c))
    for name in names:
        assert [i for i in items if i[0] == name] == [f"{name}{i}" for i in range(names[name])]
    assert walks.most_running == 2
    assert sorted(walks.closed) == sorted(names)


def test_a_failing_walk_raises_its_error_and_stops_the_others() -> None:
    walks = Walks()
    endless = walks.walk("a", None)
    failing = walks.walk("b", 5, fail_at=2)
    never = walks.walk("c", 5)
    with pytest.raises(ValueError, match="b failed at 2"):
        for _ in interleaved([endless, failing, never], parallel=2, depth=2):
            pass
    _until(lambda: sorted(walks.closed) == ["a", "b"])
    assert "c" not in walks.closed  # the next walk was never started


def test_a_caller_that_stops_taking_items_stops_the_walks_within_a_few_items() -> None:
    walks = Walks()
    release = threading.Event()
    items = interleaved([walks.walk("a", None), walks.walk("b", None, hold=release)], parallel=2, depth=3)
    first = next(items)
    assert first[0] in "ab"
    _until(lambda: walks.produced >= 4)  # the queue is full: 3 waiting, one more being offered
    items.close()
    release.set()
    _until(lambda: sorted(walks.closed) == ["a", "b"])
    # taken + waiting + the one each walk was offering when stopped
    assert walks.produced <= 1 + 3 + 2


def _until(condition: Callable[[], bool]) -> None:
    done = threading.Event()
    for _ in range(int(WAIT / 0.01)):
        if condition():
            return
        done.wait(0.01)
    assert condition()


def test_fan_out_tags_pages_ends_walks_and_hands_tolerated_errors_to_the_caller():
    from sources.platform.fastpath.interleave import fan_out

    class Gone(Exception):
        pass

    def walk(parent: str) -> Callable[[], Iterator[int]]:
        def run() -> Iterator[int]:
            yield from range(3)
            if parent == "b":
                raise Gone(parent)

        return run

    items = list(fan_out([(p, walk(p)) for p in "abc"], parallel=3, depth=2, tolerated=(Gone,)))
    by_parent = {
        p: [(i.page, i.done, type(i.error).__name__ if i.error else None) for i in items if i.parent == p]
        for p in "abc"
    }
    assert (
        by_parent["a"]
        == by_parent["c"]
        == [(0, False, None), (1, False, None), (2, False, None), (None, True, None)]
    )
    assert by_parent["b"] == [(0, False, None), (1, False, None), (2, False, None), (None, False, "Gone")]


def test_fan_out_raises_an_error_it_does_not_tolerate():
    from sources.platform.fastpath.interleave import fan_out

    def broken() -> Iterator[int]:
        yield 1
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        list(fan_out([("x", broken)], parallel=2, depth=2))


def test_walks_at_once_follow_a_function_asked_again_as_items_arrive() -> None:
    """`parallel` as a function (the operation's rule of requests in flight): two walks at once while it
    says 2, four once it says 4; never more than it says. Four walks must be running together to pass
    the barrier, so a reader that kept to two would fail it."""
    walks = Walks()
    wanted = [2]
    together = threading.Barrier(4, timeout=WAIT)
    first = [walks.walk(f"a{i}", 3) for i in range(2)]
    then = [walks.walk(f"b{i}", 1, started=together) for i in range(4)]
    items = []
    for item in interleaved([*first, *then], lambda: wanted[0], depth=2):
        items.append(item)
        if len(items) == 1:
            assert walks.most_running <= 2
            wanted[0] = 4
    assert sorted(items) == sorted(
        [f"a{i}{j}" for i in range(2) for j in range(3)] + [f"b{i}0" for i in range(4)]
    )
    assert walks.most_running == 4
