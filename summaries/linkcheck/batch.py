"""Checking many URLs at once in one process: a global and a per-host limit."""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .fetch import fetch
from .limits import HostLimiter, InProcessHostLimiter
from .result import CheckResult, ErrorClass, State
from .transport import KeepAlive

# How long the dispatcher sleeps when every host with work is paused or at its limit.
IDLE_POLL = 0.02
# Results the caller has not taken yet beyond which no new fetch starts.
BACKLOG = 16

Check = Callable[..., CheckResult]  # `fetch`, or a stand-in with its keyword arguments


def not_started(result: CheckResult) -> bool:
    """Whether a check sent nothing because every slot of its host stayed taken (or the
    shared limiter was unreachable) for its whole deadline: a later attempt checks it."""
    return result.error_class == ErrorClass.NO_SLOT and result.attempts == 0


def internal_error(url: str, error: Exception) -> CheckResult:
    """The result recorded for a URL whose check raised: a bug in the checker."""
    return CheckResult(
        url=url,
        state=State.ERROR,
        final_url=url,
        error_class=ErrorClass.INTERNAL,
        error=f"{type(error).__name__}: {error}",
    )


def _host_key(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _as_pairs(urls: Mapping[str, bool] | Iterable[tuple[str, bool]]) -> dict[str, bool]:
    pairs = urls.items() if isinstance(urls, Mapping) else urls
    needs: dict[str, bool] = {}
    for url, need_body in pairs:
        needs[url] = needs.get(url, False) or bool(need_body)
    return needs


@dataclass(frozen=True)
class _Done:
    """The dispatcher's last message: it has ended, for this reason if it failed."""

    error: BaseException | None = None


Message = tuple[str, CheckResult] | _Done


class BatchCheck:
    """One run of `check_many`: the URLs waiting per host, the fetches under way, and the
    results on their way to the calling thread.

    A dispatcher thread starts fetches (`start_fetches`) and collects them (`collect`) while
    the calling thread hands each result to the caller (`hand_over`). Fetches run in a pool
    of threads; `check` is the function each calls (`fetch` unless a test says otherwise)
    and `clock` the one the time budget is read from.
    """

    def __init__(
        self,
        needs: Mapping[str, bool],
        *,
        max_in_flight: int,
        per_host: int,
        limiter: HostLimiter | None = None,
        time_budget: float | None = None,
        should_stop: Callable[[], bool] | None = None,
        fetch_options: Mapping[str, Any] | None = None,
        check: Check = fetch,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_in_flight < 1 or per_host < 1:
            raise ValueError("max_in_flight and per_host must be at least 1")
        self.needs = dict(needs)
        self.max_in_flight = max_in_flight
        self.per_host = per_host
        # Each request also takes a slot here: per_host per host unless a shared one is given.
        self.limiter = limiter if limiter is not None else InProcessHostLimiter(per_host)
        self.should_stop = should_stop
        self.check = check
        self.clock = clock
        self.stop_at = None if time_budget is None else clock() + time_budget
        self.fetch_options = dict(fetch_options or {})
        # Connections kept alive between the requests of a host, for this batch only.
        self.connections = self.fetch_options.pop("connections", None) or KeepAlive(
            per_host=per_host
        )
        # The fetch's waits before a retry go through sleep_without_a_place.
        self.sleep: Callable[[float], None] = self.fetch_options.pop("sleep", time.sleep)
        self.queues: OrderedDict[str, deque[str]] = OrderedDict()
        for url in self.needs:
            self.queues.setdefault(_host_key(url), deque()).append(url)
        self.running: dict[Future[CheckResult], tuple[str, str]] = {}
        # Fetches per host that are sending or waiting for a slot, i.e. not sleeping before
        # a retry: a fetch waiting out a back-off or Retry-After gives its place to fresh work.
        self.active_per_host: dict[str, int] = {}
        self.sleeping = 0
        self.lock = threading.Lock()
        self.finished: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self.abort = threading.Event()  # the caller failed: start nothing new

    # -- one fetch (in a pool thread) -----------------------------------------------------

    def fetch_one(self, url: str, host: str) -> CheckResult:
        """Check one URL; a checker bug is its result ("internal"), never an exception."""
        try:
            return self.check(
                url,
                need_body=self.needs[url],
                limiter=self.limiter,
                sleep=functools.partial(self.sleep_without_a_place, host),
                connections=self.connections,
                **self.fetch_options,
            )
        except Exception as error:  # noqa: BLE001 - one bad URL must not lose the batch
            return internal_error(url, error)

    def sleep_without_a_place(self, host: str, seconds: float) -> None:
        """A fetch's wait before a retry: its host's place goes to fresh work meanwhile."""
        with self.lock:
            self.active_per_host[host] -= 1
            self.sleeping += 1
        try:
            self.sleep(seconds)
        finally:
            with self.lock:
                self.active_per_host[host] += 1
                self.sleeping -= 1

    # -- starting fetches -----------------------------------------------------------------

    def room(self) -> bool:
        """Whether another fetch may start.

        Sleeping fetches hold a thread but no place: up to max_in_flight of them more. And
        the caller must keep up: while it cannot write results (its database is
        unreachable), at most BACKLOG of them wait, so a cut-off worker stops fetching.
        """
        if self.finished.qsize() >= BACKLOG:
            return False
        with self.lock:
            places_taken = len(self.running) - min(self.sleeping, self.max_in_flight)
        return places_taken < self.max_in_flight

    def host_ready(self, host: str) -> bool:
        """Whether the host has a free place here, within its current concurrency in the
        limiter (halved after push-back), and is not paused there."""
        with self.lock:
            active = self.active_per_host.get(host, 0)
        # The limiter is asked only for a host with a free place here (it may be Redis).
        if active >= self.per_host or active >= self.limiter.limit(host):
            return False
        return self.limiter.wait_time(host) <= 0

    def start_fetches(self, pool: Executor) -> None:
        """Start fetches for hosts that have work, a free place and no pause, round-robin."""
        progressed = True
        while progressed and self.room():
            progressed = False
            for host in list(self.queues):
                if not self.room():
                    return
                if self.host_ready(host):
                    self.start_next(pool, host)
                    progressed = True

    def start_next(self, pool: Executor, host: str) -> None:
        """Start the fetch of the host's next URL."""
        url = self.queues[host].popleft()
        if not self.queues[host]:
            del self.queues[host]
        with self.lock:
            self.active_per_host[host] = self.active_per_host.get(host, 0) + 1
        self.running[pool.submit(self.fetch_one, url, host)] = (url, host)

    # -- deadlines --------------------------------------------------------------------------

    def start_nothing_more(self) -> bool:
        """Whether no new fetch may start: the time budget is spent, a stop was asked for
        (the process is shutting down) or the caller failed."""
        if self.stop_at is not None and self.clock() >= self.stop_at:
            return True
        return self.abort.is_set() or (self.should_stop is not None and self.should_stop())

    def drop_waiting_when_due(self) -> None:
        """Forget the URLs not started once no new fetch may start; those running finish."""
        if self.queues and self.start_nothing_more():
            self.queues.clear()

    # -- collecting results ---------------------------------------------------------------

    def collect(self, done: Iterable[Future[CheckResult]]) -> None:
        """Pass each ended fetch's result on to the calling thread."""
        for future in done:
            url, host = self.running.pop(future)
            with self.lock:
                self.active_per_host[host] -= 1
            result = future.result()
            if not_started(result):
                # No slot in a whole deadline (the shared limiter unreachable, or every slot
                # held elsewhere): the host's other URLs are not started either; the caller
                # hands them to a later attempt.
                self.queues.pop(host, None)
            self.finished.put((url, result))

    # -- the two threads ------------------------------------------------------------------

    def dispatch(self) -> None:
        """The dispatcher thread: keep every usable place busy until no work is left.

        It runs in a thread of its own so that what the caller does with each result
        (recording it in the database) never leaves a place idle. Its last message says
        that it ended, and how.
        """
        try:
            with ThreadPoolExecutor(
                max_workers=2 * self.max_in_flight, thread_name_prefix="linkcheck"
            ) as pool:
                self.dispatch_until_done(pool)
        except BaseException as error:  # noqa: BLE001 - raised again in the calling thread
            self.connections.close()
            self.finished.put(_Done(error))
        else:
            self.connections.close()
            self.finished.put(_Done())

    def dispatch_until_done(self, pool: Executor) -> None:
        while self.queues or self.running:
            self.drop_waiting_when_due()
            self.start_fetches(pool)
            if not self.running:
                if not self.queues:
                    return
                time.sleep(IDLE_POLL)  # every host with work is paused or out of places
                continue
            done, _ = wait(list(self.running), timeout=IDLE_POLL, return_when=FIRST_COMPLETED)
            self.collect(done)

    def hand_over(
        self, on_result: Callable[[str, CheckResult], None] | None
    ) -> dict[str, CheckResult]:
        """The calling thread: take each result as it comes, until the dispatcher ends."""
        results: dict[str, CheckResult] = {}
        while True:
            message = self.finished.get()
            if isinstance(message, _Done):
                if message.error is not None:
                    raise message.error
                return results
            url, result = message
            results[url] = result
            if on_result is not None:
                on_result(url, result)

    def run(
        self, on_result: Callable[[str, CheckResult], None] | None = None
    ) -> dict[str, CheckResult]:
        """Check every URL; if `on_result` raises, nothing new starts and it is raised once
        the fetches in flight have ended."""
        dispatcher = threading.Thread(target=self.dispatch, name="linkcheck-dispatch", daemon=True)
        dispatcher.start()
        try:
            return self.hand_over(on_result)
        finally:
            self.abort.set()
            dispatcher.join()


def check_many(
    urls: Mapping[str, bool] | Iterable[tuple[str, bool]],
    *,
    max_in_flight: int = 64,
    per_host: int = 2,
    host_limiter: HostLimiter | None = None,
    on_result: Callable[[str, CheckResult], None] | None = None,
    time_budget: float | None = None,
    should_stop: Callable[[], bool] | None = None,
    **fetch_options: Any,
) -> dict[str, CheckResult]:
    """Fetch every URL (url -> need_body) and return url -> CheckResult.

    At most `max_in_flight` fetches are under way at once (threads), and at most `per_host` of
    them per host in this process; a fetch sleeping before a retry (back-off or Retry-After)
    holds neither, so fresh work overlaps the retry tail (up to `max_in_flight` sleeping fetches
    more); each request also takes a slot from `host_limiter` (an InProcessHostLimiter(per_host)
    by default; pass a shared one, e.g. Redis-backed, to hold the limit across processes). A
    host that answers 429/503 is slowed down, not stopped: its concurrency is halved in the
    limiter and recovers step by step (`limits`), the URL that got a Retry-After waits for it on
    its own, and the host's other URLs go on at the reduced concurrency. Connections are kept
    alive per host for the batch (`transport.KeepAlive`), reused only for an address just
    vetted. Hosts are served round-robin, so one big host does not starve the others. A URL
    listed twice is fetched once (with its body if either asked for it). `on_result(url,
    result)` is called, in the calling thread, as each result arrives (for progress bars and
    bulk writes), while a dispatcher thread keeps starting fetches; if it raises, nothing new
    starts and it is raised once the fetches in flight have ended. After `time_budget` seconds
    no new fetch starts: the URLs never started are missing from the result, for the caller to
    queue again (keep it under the task's soft time limit minus one fetch deadline). Once
    `should_stop()` is true (its process is shutting down) the same happens at once: the fetches
    in flight end, by their deadline at the latest, and nothing new starts. `fetch_options` go
    to `fetch`.
    Two brakes for a worker cut off from its services: no new fetch starts while BACKLOG
    results wait for the caller (it cannot write them), and when a fetch got no slot in its
    whole deadline (the shared limiter unreachable, or the host's slots held elsewhere) the
    host's other URLs are not started (missing from the result, for a later attempt).
    Never raises for a URL: a checker bug is recorded as state "error", class "internal".
    """
    batch = BatchCheck(
        _as_pairs(urls),
        max_in_flight=max_in_flight,
        per_host=per_host,
        limiter=host_limiter,
        time_budget=time_budget,
        should_stop=should_stop,
        fetch_options=fetch_options,
    )
    return batch.run(on_result)
