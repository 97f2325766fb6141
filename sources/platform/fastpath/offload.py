"""Decoding the pages of large flat lists in helper processes, beside the extract.

The extract is bound by the interpreter lock: parsing, validating and packing the records of a page is
most of its work (the fiscal documents alone, half of it in a large sync: bench/README.md), and it
runs on one core while the others wait. A `PageDecoder` hands the body of a page of a flat model
(`fastpath/columnar.py`) to a helper process, which validates it as this process would and packs it with
the same `page_table` (`page_decoding.decode_page`: the whole body in one call of pydantic's JSON
validator, into the rows `parse_record` returns, then the same envelope check) and sends back the Arrow
table; this process meanwhile fetches and writes other pages.

Records that depart from the spec are read in the helper too, record by record with the same
`records.RecordReader`, and their departures come back with the table. A page the helper cannot answer
for (a malformed envelope, a record to quarantine, whose token this process redacts, a value Arrow cannot
carry, strict reading) comes back as "not decoded", and the page is decoded here as if there were no
helper, with the same errors, warnings and settings. If a helper dies, its page and the following ones
are decoded here too.

Helpers are separate interpreters running `serve_stdio` (not forked from this multi-threaded process,
and not `multiprocessing`'s spawn, which would import the caller's main module again); they start only
once a walk reaches its `OFFLOAD_FROM_PAGE`th page, so a small sync never starts one, and stop when the
extract ends (`PageDecoder.close`).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import pickle
import signal
import struct
import subprocess
import sys
import threading
import weakref
from concurrent.futures import Future
from typing import IO, Any

import pyarrow as pa

from sources.platform.fastpath.lifeline import end_with_parent
from sources.platform.fastpath.page_decoding import DecodedPage, PageJob, decode_page
from sources.platform_client.paging import Page

logger = logging.getLogger("platform_sync.offload")

# Pages 1 .. OFFLOAD_FROM_PAGE - 1 of a walk are decoded in this process: a list of a few pages is over
# before a helper (about a second to start) would be of use.
OFFLOAD_FROM_PAGE = 4

# Pages sent to one helper at a time: the one it decodes and the next ones, already in its pipe.
JOBS_PER_HELPER = 3

_LENGTH = struct.Struct("<Q")
# The sync's pid, for its helpers: a helper that finds another parent once it has started ends at once.
PARENT_PID_VARIABLE = "PLATFORM_SYNC_HELPER_PARENT"


# --- the wire: length-prefixed pickles over the helper's stdin and stdout ---
# Pages travel as bytes and tables as Arrow IPC streams; the helper is our own program, started by us,
# so its pickles are as trusted as this process.


def _send(stream: IO[bytes], message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_LENGTH.pack(len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        raise EOFError("the helper process closed its output")
    (length,) = _LENGTH.unpack(header)
    data = stream.read(length)
    if len(data) < length:
        raise EOFError("the helper process closed its output mid-answer")
    return pickle.loads(data)


def _table_to_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue())


def _encode_answer(page: Page | DecodedPage | None) -> tuple[Any, ...] | None:
    if page is None:
        return None
    items = _table_to_bytes(page.items) if isinstance(page.items, pa.Table) else None
    answer = (items, page.page, page.pages, page.total_items, page.items_per_page)
    if isinstance(page, DecodedPage) and (page.leftover or page.departures or page.cursor_departed):
        return (*answer, page.leftover, page.departures, page.cursor_departed)
    return answer


def _decode_answer(answer: tuple[Any, ...] | None) -> DecodedPage | None:
    if answer is None:
        return None
    items, number, pages, total_items, items_per_page, *departed = answer
    if items is None:  # an empty page
        return DecodedPage([], number, pages, total_items, items_per_page)
    table = pa.ipc.open_stream(items).read_all()
    if departed:
        leftover, departures, cursor_departed = departed
        return DecodedPage(
            table, number, pages, total_items, items_per_page, leftover, departures, cursor_departed
        )
    return DecodedPage(table, number, pages, total_items, items_per_page)


def serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The helper's loop: decode each job until its input closes."""
    departing: set[str] = set()
    while True:
        try:
            job = _receive(requests)
        except EOFError:
            return
        try:
            answer: object = _encode_answer(decode_page(job, departing))
        except Exception as exc:  # a bug, not a bad page: say so, and let the caller decode the page
            answer = ("error", f"{type(exc).__name__}: {exc}")
        _send(answers, answer)


class _Helper:
    """One helper process, the pipes to it, and the jobs it was sent and has not answered yet.

    Jobs are written to the helper as soon as a thread has one (it decodes them in turn) and a thread of
    our own reads the answers, in the same order. So the helper has its next page at hand while this
    process, busy with other threads, has yet to take the last answer: with one job at a time it waited
    on this process a good part of the time (bench/README.md).
    """

    def __init__(self) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(path for path in sys.path if path),
            PARENT_PID_VARIABLE: str(os.getpid()),
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                # SIGINT ignored before the imports (seconds): a Ctrl-C meanwhile is the sync's to handle
                "import signal; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                "from sources.platform.fastpath.offload import serve_stdio; serve_stdio()",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self._sending = threading.Lock()
        self._unanswered: collections.deque[Future[DecodedPage | None]] = collections.deque()
        self._ended: Exception | None = None  # why no more answers will come
        threading.Thread(target=self._read_answers, name="platform-sync-helper-answers", daemon=True).start()

    @property
    def unanswered(self) -> int:
        return len(self._unanswered)

    def submit(self, job: PageJob) -> Future[DecodedPage | None]:
        """Send the job; the future holds its page, or the helper's failure."""
        assert self.process.stdin is not None
        future: Future[DecodedPage | None] = Future()
        with self._sending:  # the answers come in the order the jobs were sent
            if self._ended is not None:
                future.set_exception(self._ended)
                return future
            self._unanswered.append(future)
            try:
                _send(self.process.stdin, job)
            except (OSError, ValueError) as exc:  # a helper that died leaves a broken or closed pipe
                self._unanswered.remove(future)
                future.set_exception(exc)
        return future

    def _read_answers(self) -> None:
        assert self.process.stdout is not None
        try:
            while True:
                answer = _receive(self.process.stdout)
                future = self._unanswered.popleft()
                if isinstance(answer, tuple) and answer[:1] == ("error",):
                    future.set_exception(RuntimeError(answer[1]))
                else:
                    future.set_result(_decode_answer(answer))
        except Exception as exc:  # the helper ended (or its output is unreadable): no answer will come
            with self._sending:
                self._ended = exc
                while self._unanswered:
                    self._unanswered.popleft().set_exception(exc)

    def stop(self) -> None:
        if self.process.stdin is not None:
            with self._sending, contextlib.suppress(OSError):  # a helper that died leaves a broken pipe
                self.process.stdin.close()  # the helper's loop ends at the end of its input
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class PageDecoder:
    """Up to `workers` helper processes, started when first needed, shared by the extract's threads,
    each with up to `JOBS_PER_HELPER` pages sent to it at a time. A walk offers them its pages from the
    `from_page`th on."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.from_page = OFFLOAD_FROM_PAGE
        self.decoded_pages = 0  # pages a helper decoded (not counting those it left to this process)
        self._helpers: list[_Helper] = []
        # Helpers of a decoder dropped without `close` (an extract that never finished) stop with it.
        weakref.finalize(self, _stop_all, self._helpers)
        self._slots = threading.BoundedSemaphore(max(1, workers) * JOBS_PER_HELPER)
        self._lock = threading.Lock()
        self._closed = False
        self._broken: str | None = None

    def decode(self, job: PageJob) -> DecodedPage | None:
        """The decoded page, or None: decode it in this process (see the module's docstring)."""
        while not self._slots.acquire(timeout=0.2):  # all helpers have their share of pages
            if self._stopped():
                return None
        try:
            helper = self._helper()
            if helper is None:
                return None
            try:
                page = helper.submit(job).result()
            except Exception as exc:  # whatever went wrong there, this process can still decode the page
                self._give_up(f"{type(exc).__name__}: {exc}")
                return None
        finally:
            self._slots.release()
        with self._lock:
            self.decoded_pages += page is not None
        return page

    @property
    def running_helpers(self) -> int:
        """How many helper processes are running now."""
        return sum(helper.process.poll() is None for helper in self._helpers)

    def close(self) -> None:
        """Stop the helpers; later pages are decoded in this process."""
        with self._lock:
            self._closed = True
            helpers = list(self._helpers)
        _stop_all(helpers)

    def _stopped(self) -> bool:
        with self._lock:
            return self._closed or self._broken is not None

    def _helper(self) -> _Helper | None:
        """The helper with the fewest pages in hand, a new one while all have some and fewer than
        `workers` run, or None once stopped."""
        with self._lock:
            if self._closed or self._broken is not None:
                return None
            least = min(self._helpers, key=lambda helper: helper.unanswered, default=None)
            if least is not None and (least.unanswered == 0 or len(self._helpers) >= self.workers):
                return least
            try:
                helper = _Helper()
            except OSError as exc:
                problem = f"could not start: {exc}"
            else:
                self._helpers.append(helper)
                return helper
        self._give_up(problem)
        return None

    def _give_up(self, problem: str) -> None:
        with self._lock:
            if self._broken is not None:
                return
            self._broken = problem
        logger.warning(
            "decoding pages in a helper process stopped (%s); they are decoded in this process, "
            "which is slower but loads the same rows. Set decode_workers = 0 to not start helpers.",
            problem,
        )
        self.close()


def serve_stdio() -> None:
    """The helper's program: jobs on stdin, answers on stdout. Anything else printed goes to stderr, so
    that a library printing cannot corrupt the answers."""
    # Ctrl-C in a terminal reaches the whole process group: the sync handles it, and the helper ends
    # when the sync closes its input, without a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A sync killed (kill -9, SIGTERM) closes nothing: the helper must not outlive it (`lifeline.py`).
    # Not prctl: started from an extract thread, which prctl would tie it to.
    end_with_parent(use_prctl=False, parent=int(os.environ.get(PARENT_PID_VARIABLE) or os.getppid()))
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    serve(sys.stdin.buffer, answers)


def _stop_all(helpers: list[_Helper]) -> None:
    for helper in helpers:
        helper.stop()
