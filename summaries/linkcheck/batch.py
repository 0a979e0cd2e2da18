"""Checking many URLs at once in one process: a global and a per-host limit."""

from __future__ import annotations

import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from urllib.parse import urlsplit

from .fetch import CheckResult, ErrorClass, State, fetch
from .limits import HostLimiter, InProcessHostLimiter

# How long the dispatcher sleeps when every host with work is paused or at its limit.
IDLE_POLL = 0.02
_DONE = object()  # the dispatcher's last message
# Results the caller has not taken yet beyond which no new fetch starts.
BACKLOG = 16


def not_started(result: CheckResult) -> bool:
    """Whether a check sent nothing because every slot of its host stayed taken (or the
    shared limiter was unreachable) for its whole deadline: a later attempt checks it."""
    return result.error_class == ErrorClass.NO_SLOT and result.attempts == 0


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


def check_many(
    urls: Mapping[str, bool] | Iterable[tuple[str, bool]],
    *,
    max_in_flight: int = 64,
    per_host: int = 2,
    host_limiter: HostLimiter | None = None,
    on_result: Callable[[str, CheckResult], None] | None = None,
    time_budget: float | None = None,
    should_stop: Callable[[], bool] | None = None,
    **fetch_options,
) -> dict[str, CheckResult]:
    """Fetch every URL (url -> need_body) and return url -> CheckResult.

    At most `max_in_flight` fetches are under way at once (threads), and at most `per_host`
    of them per host in this process; a fetch sleeping before a retry (back-off or
    Retry-After) holds neither, so fresh work overlaps the retry tail (up to
    `max_in_flight` sleeping fetches more); each request also takes a slot from `host_limiter` (an
    InProcessHostLimiter(per_host) by default; pass a shared one, e.g. Redis-backed, to
    hold the limit across processes). A host that answers 429/503 is paused in the limiter
    and gets no new fetch until the pause ends. Hosts are served round-robin, so one big
    host does not starve the others. A URL listed twice is fetched once (with its body if
    either asked for it). `on_result(url, result)` is called, in the calling thread, as each
    result arrives (for progress bars and bulk writes), while a dispatcher thread keeps
    starting fetches; if it raises, nothing new starts and it is raised once the fetches
    in flight have ended. After `time_budget` seconds no new
    fetch starts: the URLs never started are missing from the result, for the caller to
    queue again (keep it under the task's soft time limit minus one fetch deadline). Once
    `should_stop()` is true (its process is shutting down) the same happens at once: the
    fetches in flight end, by their deadline at the latest, and nothing new starts.
    `fetch_options` go to `fetch`.
    Two brakes for a worker cut off from its services: no new fetch starts while BACKLOG
    results wait for the caller (it cannot write them), and when a fetch got no slot in its
    whole deadline (the shared limiter unreachable, or the host's slots held elsewhere) the
    host's other URLs are not started (missing from the result, for a later attempt).
    Never raises for a URL: a checker bug is recorded as state "error", class "internal".
    """
    if max_in_flight < 1 or per_host < 1:
        raise ValueError("max_in_flight and per_host must be at least 1")
    limiter = host_limiter if host_limiter is not None else InProcessHostLimiter(per_host)
    needs = _as_pairs(urls)
    queues: OrderedDict[str, deque[str]] = OrderedDict()
    for url in needs:
        queues.setdefault(_host_key(url), deque()).append(url)
    running: dict[Future, tuple[str, str]] = {}
    # Fetches per host that are sending or waiting for a slot, i.e. not sleeping before a
    # retry: a fetch waiting out a back-off or Retry-After gives its place to fresh work.
    active_per_host: dict[str, int] = {}
    sleeping = [0]
    lock = threading.Lock()
    results: dict[str, CheckResult] = {}
    finished: queue.SimpleQueue = queue.SimpleQueue()  # (url, result); _DONE at the end
    abort = threading.Event()  # the caller failed: start nothing new
    sleep = fetch_options.pop("sleep", time.sleep)

    def run_one(url: str, host: str) -> CheckResult:
        def sleep_without_a_place(seconds: float) -> None:
            with lock:
                active_per_host[host] -= 1
                sleeping[0] += 1
            try:
                sleep(seconds)
            finally:
                with lock:
                    active_per_host[host] += 1
                    sleeping[0] -= 1

        try:
            return fetch(
                url,
                need_body=needs[url],
                limiter=limiter,
                sleep=sleep_without_a_place,
                **fetch_options,
            )
        except Exception as error:  # noqa: BLE001 - one bad URL must not lose the batch
            return CheckResult(
                url=url,
                state=State.ERROR,
                final_url=url,
                error_class=ErrorClass.INTERNAL,
                error=f"{type(error).__name__}: {error}",
            )

    def room() -> bool:
        # Sleeping fetches hold a thread but no place: up to max_in_flight of them more.
        # And the caller must keep up: while it cannot write results (its database is
        # unreachable), at most BACKLOG of them wait, so a cut-off worker stops fetching.
        if finished.qsize() >= BACKLOG:
            return False
        with lock:
            return len(running) - min(sleeping[0], max_in_flight) < max_in_flight

    def dispatch(pool: ThreadPoolExecutor) -> None:
        """Start fetches for hosts that have work, a free place and no pause, round-robin."""
        progressed = True
        while progressed and room():
            progressed = False
            for host in list(queues):
                if not room():
                    return
                with lock:
                    busy = active_per_host.get(host, 0) >= per_host
                if busy or limiter.wait_time(host) > 0:
                    continue
                url = queues[host].popleft()
                if not queues[host]:
                    del queues[host]
                with lock:
                    active_per_host[host] = active_per_host.get(host, 0) + 1
                running[pool.submit(run_one, url, host)] = (url, host)
                progressed = True

    stop_at = None if time_budget is None else time.monotonic() + time_budget

    def run_dispatcher() -> None:
        """Keep every usable place busy; hand results to the calling thread as they come.

        It runs in a thread of its own so that what the caller does with each result
        (recording it in the database) never leaves a place idle.
        """
        try:
            with ThreadPoolExecutor(
                max_workers=2 * max_in_flight, thread_name_prefix="linkcheck"
            ) as pool:
                while queues or running:
                    out_of_time = stop_at is not None and time.monotonic() >= stop_at
                    stopping = abort.is_set() or (should_stop is not None and should_stop())
                    if queues and (out_of_time or stopping):
                        queues.clear()  # start nothing new; let the running fetches finish
                    dispatch(pool)
                    if not running and not queues:
                        break
                    if not running:
                        time.sleep(IDLE_POLL)  # every host with work is paused
                        continue
                    done, _ = wait(list(running), timeout=IDLE_POLL, return_when=FIRST_COMPLETED)
                    for future in done:
                        url, host = running.pop(future)
                        with lock:
                            active_per_host[host] -= 1
                        result = future.result()
                        if not_started(result) and host in queues:
                            # No slot in a whole deadline (the shared limiter unreachable,
                            # or every slot held elsewhere): the host's other URLs are not
                            # started either; the caller hands them to a later attempt.
                            del queues[host]
                        finished.put((url, result))
        except BaseException as error:  # noqa: BLE001 - raised again in the calling thread
            finished.put((_DONE, error))
        else:
            finished.put((_DONE, None))

    dispatcher = threading.Thread(target=run_dispatcher, name="linkcheck-dispatch", daemon=True)
    dispatcher.start()
    try:
        while True:
            url, result = finished.get()
            if url is _DONE:
                if result is not None:
                    raise result
                break
            results[url] = result
            if on_result is not None:
                on_result(url, result)
    finally:
        abort.set()
        dispatcher.join()
    return results
