"""Several paged walks at once, their pages in one stream.

The first run of a date-windowed resource walks its windows; one walk waits, page after page, for its
request and then for its decoding (in a helper process, `offload.py`), and leaves the cores idle
meanwhile: in a large first run the fiscal documents' walk alone lasts about as long as the whole
extract (bench/README.md).
`interleaved` runs up to `parallel` walks, each in a thread of its own, and yields their pages as they
come, with at most `depth` pages waiting to be taken, so that memory stays a few pages whatever the
window sizes. The order across walks is not kept: a caller's cursors must not depend on it.

A walk that fails stops the others, and its error is raised to the caller. A caller that stops taking
pages (the generator is closed) stops the walks too; each ends after the request it is in, so up to
`parallel` pages may be fetched and not used.

`fan_out` runs the walks of a fan the same way (one list per parent) and says, for each parent, whether
its walk ended, or which tolerated error (a 404 for one event) ended it, so that the caller can commit
each parent's cursor only after its last page and warn about the others.
"""

from __future__ import annotations

import contextlib
import contextvars
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")
K = TypeVar("K")

# The walks of a fan read at once, and their pages waiting to be taken (`fan_out`): with pages fetched
# ahead inside each walk (`platform_client/walking.py`), enough to hide a remote API's latency.
FAN_WALKS_AT_ONCE = 8
FAN_PAGES_WAITING = 8

# How often a walk whose page cannot be queued checks whether the caller stopped.
_STOP_POLL_SECONDS = 0.1


@dataclass(frozen=True, slots=True)
class _Message(Generic[T]):
    """One item of a walk, its end (`last`), or its error."""

    item: T | None = None
    last: bool = False
    error: BaseException | None = None


def interleaved(
    walks: Iterable[Callable[[], Iterator[T]]], parallel: int | Callable[[], int], depth: int
) -> Iterator[T]:
    """The items of every walk (a function starting one), up to `parallel` walks at a time (a function:
    asked again as items arrive, e.g. the operation's rule of requests in flight), in the order they
    arrive; one walk after the other, in this thread, if `parallel` is 1."""
    if not callable(parallel) and parallel <= 1:
        for walk in walks:
            yield from walk()
        return
    at_once: Callable[[], int] = parallel if callable(parallel) else lambda: parallel
    pending = iter(walks)
    outbox: queue.Queue[_Message[T]] = queue.Queue(maxsize=max(1, depth))
    stopped = threading.Event()

    def start_next() -> bool:
        walk = next(pending, None)
        if walk is None:
            return False
        context = contextvars.copy_context()  # e.g. dlt's pipeline context, as in the caller's thread
        threading.Thread(
            target=context.run,
            args=(_run, walk, outbox, stopped),
            name="platform-sync-walk",
            daemon=True,
        ).start()
        return True

    running = 0
    more = True  # walks not started yet may remain
    try:
        while more and running < at_once():
            more = start_next()
            running += more
        while running:
            message = outbox.get()
            if message.error is not None:
                raise message.error
            if message.last:
                running -= 1
            while more and running < at_once():  # a walk ended, or more are wanted at once now
                more = start_next()
                running += more
            if message.last:
                continue
            yield message.item  # type: ignore[misc]  # a page message always carries its item
    finally:
        stopped.set()
        with contextlib.suppress(queue.Empty):  # wake walks waiting for room, so that they see the stop
            while True:
                outbox.get_nowait()


def _run(walk: Callable[[], Iterator[T]], outbox: queue.Queue[_Message[T]], stopped: threading.Event) -> None:
    items = walk()
    try:
        for item in items:
            # Checked again after queueing: the caller's stop makes room in the queue as it stops.
            if not _put(outbox, _Message(item), stopped) or stopped.is_set():
                return
    except BaseException as error:  # handed to the caller, which raises it
        _put(outbox, _Message(error=error), stopped)
        return
    finally:
        close = getattr(items, "close", None)  # a generator stopped early releases its connection
        if close is not None:
            close()
    _put(outbox, _Message(last=True), stopped)


def _put(outbox: queue.Queue[_Message[T]], message: _Message[T], stopped: threading.Event) -> bool:
    """Queue the message unless the caller stopped meanwhile; whether it was queued."""
    while not stopped.is_set():
        try:
            outbox.put(message, timeout=_STOP_POLL_SECONDS)
            return True
        except queue.Full:
            continue
    return False


@dataclass(frozen=True, slots=True)
class FanItem(Generic[K, T]):
    """What `fan_out` yields: a page of the walk of `parent`, the error that ended it early (one of the
    tolerated kinds), or its end (`done`: the walk read its list to the end)."""

    parent: K
    page: T | None = None
    error: BaseException | None = None
    done: bool = False


def fan_out(
    walks: Iterable[tuple[K, Callable[[], Iterator[T]]]],
    parallel: int | Callable[[], int],
    depth: int,
    tolerated: tuple[type[BaseException], ...] = (),
) -> Iterator[FanItem[K, T]]:
    """The walks of a fan (one list per parent: an event's attendees, a student's enrollments, a date
    window), up to `parallel` at once (a function: asked again as pages come), their pages as they
    come. Each walk's items come in its order, ended by `done`, or by an `error` of a `tolerated` kind
    (any other error stops every walk and is raised). Only the pages are fetched in the walks' threads:
    the caller reads them in its own."""

    def tagged(parent: K, walk: Callable[[], Iterator[T]]) -> Callable[[], Iterator[FanItem[K, T]]]:
        def run() -> Iterator[FanItem[K, T]]:
            try:
                for page in walk():
                    yield FanItem(parent, page)
            except tolerated as error:
                yield FanItem(parent, error=error)
                return
            yield FanItem(parent, done=True)

        return run

    return interleaved((tagged(parent, walk) for parent, walk in walks), parallel, depth)
