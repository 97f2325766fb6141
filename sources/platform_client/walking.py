"""Walking a paged list fast and safely: pages fetched ahead concurrently, a list that moves read again.

**Pages ahead.** Once a page has said how many pages the list has (`pages`), the walk asks for the next
ones together when the caller asks for the next page, up to `pages_ahead()` at a time per walk (asked as
each page is taken: the operation's rule of `inflight.py`, so they are
in flight while the caller works on the page it took), from threads
shared by every walk of the client (`PagePool`, at most `total` requests of pages ahead at once). Each
request still goes through the operation's rate limiter, retry policy and decoding (`fetch`: the
caller's, the client's own JSON pages or the source's decoded pages), so nothing of the road of one page
changes but the thread it runs in. Pages are handed to `PageWalk` and yielded in
page order, so a page that repeats or an empty page stops the walk exactly as a sequential walk would; at
most `pages_ahead` pages are held or in flight, so memory stays bounded. The first `SEQUENTIAL_PAGES`
pages are fetched one by one, then the number ahead doubles with each page taken (2, 4, 8): a list of up
to three pages makes the requests of a sequential walk, in the same order. When the walk stops early (an
empty page, a loop, the caller closes the generator) the pages not yet sent are cancelled; those in
flight end and are dropped.

**A list that moves** (issue 26). Paging by page number over a list that changes while it is read shifts
records across page boundaries: one is skipped or repeated per move. A walk notes the signs: the total
changes, a record comes twice (by its `id`, or `document.id` for fiscal documents, where the items carry
one), a page other than the last is short, the last page holds other than the total promised, a page is
empty before the announced end. Its pages are yielded all the same (they are what the server said), and
when the walk ends the whole list is walked again, up to `MAX_WALKS` walks in all. Its records come
twice in the run; the merge on the key keeps one (newest by `newest_by`). To see a record come twice a
walk keeps one hash per record it read (about 60 bytes each: 60 MB for a million-record list walked in
one go; the largest lists are walked in date windows, each with its own). A caller that keeps what it is
given as it is (a snapshot replaced or appended by each scan) asks for `distinct` pages: each record at
most once, the first time it came. A list still moving on its last
walk raises `ListMovedError`: the caller's resource fails and its cursor is not committed, so no state
moves past a record that may have been skipped.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

from sources.platform_client.errors import ApiError, ListMovedError, PagingLoopError
from sources.platform_client.paging import UNKNOWN, PagedBody, PageWalk

P = TypeVar("P", bound=PagedBody)
K = TypeVar("K")
T = TypeVar("T")

logger = logging.getLogger("platform_sync.client")

# Walks of one list before a list that keeps moving is reported instead of walked again.
MAX_WALKS = 3
DEFAULT_PAGES_AHEAD = 8
# Pages of a walk fetched one after the other before any is fetched ahead: a list of up to this many
# pages makes exactly the requests of a sequential walk, in the same order (a 401 or a loop on page 3
# costs one request, not a window of them).
SEQUENTIAL_PAGES = 3
# The statuses a server may answer a page past the end of a list with, besides an empty page.
PAST_THE_END = frozenset({400, 404, 416, 422})
# The pool's threads: requests ahead of every walk and fan together (two fans of 16 at once).
DEFAULT_PAGES_AHEAD_TOTAL = 32
# The most requests of one operation a walk or a fan keeps in flight, whatever its rule asks.
MOST_AHEAD_PER_OPERATION = 16


class PagePool:
    """The threads that fetch pages ahead, shared by every walk of a client; started as needed, up to
    `total`. Daemon threads: a sync that ends (Ctrl-C included) does not wait for pages nobody will take,
    which a `ThreadPoolExecutor`'s threads would make it do, each to the end of its rate-limit wait."""

    def __init__(self, total: int) -> None:
        self.total = max(1, total)
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = queue.SimpleQueue()
        self._threads = 0
        self._idle = 0
        self._closed = False

    def submit(self, fetch: Callable[[int], T], number: int) -> Future[T]:
        """Fetch page `number` in a pool thread, in the caller's context (e.g. dlt's pipeline context)."""
        future: Future[T] = Future()
        context = contextvars.copy_context()
        with self._lock:
            if self._closed:
                raise RuntimeError("the client is closed")
            self._jobs.put((future, functools.partial(context.run, fetch, number)))
            if self._idle:
                self._idle -= 1
            elif self._threads < self.total:
                self._threads += 1
                threading.Thread(target=self._work, name="platform-sync-page", daemon=True).start()
        return future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, call = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(call())
                except BaseException as error:  # handed to the walk, which raises it in its turn
                    future.set_exception(error)
            with self._lock:
                self._idle += 1

    def close(self) -> None:
        """Let the threads end once their requests end; pages not started are dropped."""
        with self._lock:
            self._closed = True
            threads = self._threads
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                break
            if job is not None:
                job[0].cancel()
        for _ in range(threads):
            self._jobs.put(None)


class MoveWatch:
    """The signs that a list moved during one walk (see the module's docstring)."""

    def __init__(self) -> None:
        self.moved: str | None = None
        self.misfit: str | None = None  # a page holding other than announced (judged at the end)
        self._total: int | None = None
        self._keyed = True
        self._seen: set[int] = set()

    def _note(self, problem: str) -> None:
        if self.moved is None:
            self.moved = problem

    def watch(self, page: PagedBody, zero_based: bool) -> None:
        count = page.record_count()  # the rows a helper set apart beside its table count too
        keys = page.record_keys() if count else []
        self._keyed = self._keyed and keys is not None
        if page.total_items == UNKNOWN:  # not announced on this page: nothing to hold it to
            pass
        elif self._total is None:
            self._total = page.total_items
        elif page.total_items < self._total or (page.total_items > self._total and not self._keyed):
            # Records added at the end move nothing; added before, they push one past a page boundary,
            # which comes twice and is caught below when the records carry keys.
            self._note(f"its total went from {self._total} to {page.total_items}")
        if count and UNKNOWN not in (page.total_items, page.items_per_page):
            before = (page.page if zero_based else page.page - 1) * page.items_per_page
            expected = max(0, min(page.items_per_page, page.total_items - before))
            if count != expected and self.misfit is None:
                self.misfit = f"page {page.page} held {count} records where {expected} were announced"
        if keys:
            hashes = {hash(key) for key in keys}
            if len(hashes) < len(keys) or not self._seen.isdisjoint(hashes):
                self._note(f"a record came twice (page {page.page})")
            self._seen.update(hashes)

    def verdict(self, numbering_consistent: bool) -> str | None:
        """Why the walk must be read again, if it must. Page sizes say nothing about a server that does
        not number its pages consistently (the page-0 probe of `PageWalk`)."""
        return self.moved or (self.misfit if numbering_consistent else None)


def walk_pages(
    operation: str,
    fetch: Callable[[int], P],
    pool: PagePool,
    pages_ahead: Callable[[], int],
    on_loop: Callable[[], None],
    distinct: bool = False,
) -> Iterator[P]:
    """The pages of a list, walked again while it moves (module docstring); `fetch(number)` gets one
    page, `on_loop` counts a paging loop before it is raised. `distinct`: each record (by its key) at
    most once over all the walks, the first time it comes (pages left empty are not yielded)."""
    yielded: set[int] = set()
    for walk_number in range(1, MAX_WALKS + 1):
        watch = MoveWatch()
        walk = PageWalk(operation)
        for page in _one_walk(walk, fetch, pool, pages_ahead, on_loop, watch):
            if distinct:
                page = page.unseen(yielded)
                if not page.record_count():
                    continue
            yield page
        moved = watch.verdict(numbering_consistent=not walk.probed_zero)
        if moved is None:
            return
        if walk_number < MAX_WALKS:
            logger.warning(
                "%s: the list moved while it was read (%s); reading it again (walk %d of at most %d)",
                operation,
                moved,
                walk_number + 1,
                MAX_WALKS,
            )
    raise ListMovedError(
        f"{operation}: the list kept moving while it was read ({moved}), {MAX_WALKS} walks in a row; "
        "records may have been skipped, so its position was not saved. The next run reads it again.",
        operation=operation,
    )


def _one_walk(
    walk: PageWalk,
    fetch: Callable[[int], P],
    pool: PagePool,
    pages_ahead: Callable[[], int],
    on_loop: Callable[[], None],
    watch: MoveWatch,
) -> Iterator[P]:
    operation = walk.operation
    number: int | None = walk.first
    ahead: deque[tuple[int, Future[P]]] = deque()
    window = 1
    taken = 0
    try:
        while number is not None:
            probe = walk.zero_probe
            try:
                if ahead and ahead[0][0] == number:
                    page = ahead.popleft()[1].result()
                else:
                    _cancel(ahead)
                    page = fetch(number)
            except ApiError as exc:
                if probe and 400 <= exc.status < 500:
                    # The page-0 probe was a guess about an inconsistent server; a refusal ends the walk.
                    logger.warning("%s: the server refused page 0 (%s); paging ends", operation, exc.status)
                    return
                raise
            try:
                fresh = walk.accept(page)
            except PagingLoopError:
                on_loop()
                raise
            if not probe:
                watch.watch(page, zero_based=walk.zero_based)
            number = walk.next()
            if fresh:
                yield page  # nothing more is asked for until the caller asks for the next page
                taken += 1
                if number is not None and taken >= SEQUENTIAL_PAGES:
                    window = min(max(1, pages_ahead()), window * 2)
            if number is not None:
                _plan(ahead, walk.upcoming(window) if window > 1 else [], fetch, pool)
    finally:
        _cancel(ahead)


def _plan(
    ahead: deque[tuple[int, Future[P]]], wanted: list[int], fetch: Callable[[int], P], pool: PagePool
) -> None:
    """Make `ahead` hold the requests of the `wanted` page numbers, in order. When fewer are wanted than
    are held (the operation's window was cut), those held stay: they are in flight or next."""
    held = [number for number, _ in ahead]
    common = min(len(held), len(wanted))
    if held[:common] != wanted[:common]:
        _cancel(ahead)
        held = []
    for number in wanted[len(held) :]:
        ahead.append((number, pool.submit(fetch, number)))


def _cancel(ahead: deque[tuple[Any, Future[Any]]]) -> None:
    while ahead:
        ahead.popleft()[1].cancel()


def in_order(
    keys: Iterable[K], fetch: Callable[[K], T], pool: PagePool, ahead: Callable[[], int]
) -> Iterator[tuple[K, Future[T]]]:
    """One request per key (a fan over parent records or configured ids), each key with its request's
    future in the keys' order, up to `ahead()` requests in flight in `pool` (asked again as each answer
    is taken). The first request goes alone (a 401 costs one request, not a window of them), then
    `ahead()` go together; the keys are taken from
    `keys` only as requests are sent, so a fan over a paged list reads the list as the requests go. When
    the caller stops early the requests not yet sent are cancelled; those in flight end and are
    dropped."""
    pending: deque[tuple[K, Future[T]]] = deque()
    window = 1
    try:
        for key in keys:
            pending.append((key, pool.submit(functools.partial(_fetch_key, fetch, key), 0)))
            while len(pending) >= window:
                yield pending.popleft()
                window = max(1, ahead())
        while pending:
            yield pending.popleft()
    finally:
        _cancel(pending)


def _fetch_key(fetch: Callable[[K], T], key: K, _number: int) -> T:
    return fetch(key)


def walk_tail(
    operation: str,
    fetch: Callable[[int], P],
    pool: PagePool,
    pages_ahead: Callable[[], int],
    first: int,
    known_last: int,
) -> Iterator[P]:
    """The last pages of a list sent oldest first, the last page first (issue 47: its new records are at
    its end). `first` is the server's first page number (0 or 1) and `known_last` the last page the
    previous read saw: that page is asked first, for the list's page count now; then each page after it,
    the last first (up to `pages_ahead` in flight), then page `known_last`, then the pages before it one
    at a time, down to `first` or until the caller stops (at a page holding a record it knew). Empty
    pages are not yielded. Going backwards, a record deleted before a page yet to be read moves into that
    page and comes twice, never not at all; a record added at the end while the read goes is newer than
    every record it yields and comes in the next read. A server that announces neither `pages` nor
    `totalItems` is walked forward from `known_last` to its first empty or short page; one that refuses
    page `known_last` as past its end (400, 404, 416, 422) is read from page `first`."""
    try:
        probe = fetch(known_last)
    except ApiError as exc:
        # A server that refuses a page past its end (the list shrank): the first page says its size.
        if known_last == first or exc.status not in PAST_THE_END:
            raise
        logger.warning(
            "%s: page %d refused (%s); the tail is read from page %d",
            operation,
            known_last,
            exc.status,
            first,
        )
        known_last = first
        probe = fetch(first)
    _same_page(operation, probe, known_last)
    last = _announced_last(probe, first)
    newer: Iterable[P]
    if last is None:
        newer = reversed(_forward_to_end(operation, fetch, probe, known_last))
    else:
        newer = _in_turn(operation, range(last, known_last, -1), fetch, pool, pages_ahead)
    for page in newer:
        if page.record_count():
            yield page
    if probe.record_count():
        yield probe
    below = known_last if last is None else min(known_last, last + 1)
    for number in range(below - 1, first - 1, -1):
        page = fetch(number)
        _same_page(operation, page, number)
        if page.record_count():
            yield page


def _announced_last(page: PagedBody, first: int) -> int | None:
    """The list's last page number as `page`'s envelope announces it, or None."""
    pages = page.pages
    if pages == UNKNOWN and page.total_items != UNKNOWN and page.items_per_page > 0:
        pages = -(-page.total_items // page.items_per_page)
    return None if pages == UNKNOWN else pages + first - 1


def _forward_to_end(operation: str, fetch: Callable[[int], P], start: P, number: int) -> list[P]:
    """The pages after `start` (page `number`) of a list that announces no size, to its first empty
    page or a page shorter than the fullest one seen."""
    pages: list[P] = []
    fullest = start.record_count()
    page = start
    while page.record_count() and page.record_count() >= fullest:
        number += 1
        page = fetch(number)
        _same_page(operation, page, number)
        if page.record_count():
            pages.append(page)
            fullest = max(fullest, page.record_count())
    return pages


def _in_turn(
    operation: str,
    numbers: Iterable[int],
    fetch: Callable[[int], P],
    pool: PagePool,
    ahead: Callable[[], int],
) -> Iterator[P]:
    """The pages `numbers`, in that order, up to `ahead` in flight in `pool`; those not yet sent are
    cancelled when the caller stops."""
    pending: deque[tuple[int, Future[P]]] = deque()
    try:
        for number in numbers:
            pending.append((number, pool.submit(fetch, number)))
            if len(pending) >= max(1, ahead()):
                number, future = pending.popleft()
                yield _same_page(operation, future.result(), number)
        while pending:
            number, future = pending.popleft()
            yield _same_page(operation, future.result(), number)
    finally:
        _cancel(pending)


def _same_page(operation: str, page: P, number: int) -> P:
    """`page`, if it is the page asked for (an empty answer past the end may carry any number)."""
    if page.record_count() and page.page != number:
        raise PagingLoopError(
            f"{operation}: asked for page {number}, got page {page.page}; the server's paging is "
            "inconsistent; report it with this message.",
            operation=operation,
            page=number,
        )
    return page
