"""summaries.linkcheck.batch: the parts of BatchCheck, each on its own, without a network.

The fetch is a stand-in (`check`) and the pool an executor that starts nothing, so each
test sees exactly which fetches were started, and ends them itself. check_many against real
loopback servers is tested in test_linkcheck_fetch.py.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future

import pytest

from summaries.linkcheck import CheckResult, ErrorClass, InProcessHostLimiter, State, batch
from summaries.linkcheck.batch import BACKLOG, BatchCheck

A = [f"http://a.test/{n}" for n in range(3)]
B = ["http://b.test/0"]
C = ["http://c.test/0"]


class HeldPool:
    """An executor that runs nothing: each fetch stays under way until the test ends it."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.futures: dict[str, Future] = {}

    def submit(self, function, url: str, host: str) -> Future:
        self.started.append(url)
        self.futures[url] = Future()
        return self.futures[url]


def ok(url: str) -> CheckResult:
    return CheckResult(url=url, state=State.OK, final_url=url, attempts=1)


def no_slot(url: str) -> CheckResult:
    return CheckResult(url=url, state=State.ERROR, final_url=url, error_class=ErrorClass.NO_SLOT)


def make(urls: list[str], **options) -> BatchCheck:
    options = {"max_in_flight": 10, "per_host": 2, **options}
    return BatchCheck(dict.fromkeys(urls, False), **options)


# --- Starting fetches -------------------------------------------------------------------


def test_hosts_are_served_round_robin_up_to_their_places():
    check = make(A + B + C)
    pool = HeldPool()
    check.start_fetches(pool)
    assert pool.started == [A[0], B[0], C[0], A[1]]  # a third fetch of a.test waits
    assert list(check.queues) == ["a.test"] and list(check.queues["a.test"]) == [A[2]]
    assert check.active_per_host == {"a.test": 2, "b.test": 1, "c.test": 1}


def test_no_more_fetches_start_than_there_are_places():
    check = make(A + B + C, max_in_flight=3)
    pool = HeldPool()
    check.start_fetches(pool)
    assert pool.started == [A[0], B[0], C[0]]


def test_a_host_paused_in_the_limiter_gets_no_new_fetch():
    limiter = InProcessHostLimiter(2)
    limiter.pause("a.test", 60)
    check = make(A + B, limiter=limiter)
    pool = HeldPool()
    check.start_fetches(pool)
    assert pool.started == B
    assert list(check.queues) == ["a.test"]


def test_a_host_slowed_down_in_the_limiter_gets_fetches_up_to_its_reduced_limit():
    limiter = InProcessHostLimiter(2)
    limiter.slow_down("a.test")  # it pushed back: one request at a time
    check = make(A + B, limiter=limiter)
    pool = HeldPool()
    check.start_fetches(pool)
    assert pool.started == [A[0], B[0]]  # not stopped, and not two at a time
    assert list(check.queues["a.test"]) == A[1:]


def test_sleeping_fetches_hold_no_place_but_count_beyond_twice_the_places():
    check = make([], max_in_flight=2)
    check.running = {Future(): ("u", "h") for _ in range(2)}
    assert not check.room()
    check.sleeping = 1
    assert check.room()
    check.running = {Future(): ("u", "h") for _ in range(4)}
    check.sleeping = 4  # only max_in_flight of them are not counted
    assert not check.room()


def test_no_fetch_starts_while_a_backlog_of_results_waits_for_the_caller():
    check = make(A)
    for n in range(BACKLOG):
        check.finished.put((f"http://a.test/{n}", ok("x")))
    pool = HeldPool()
    check.start_fetches(pool)
    assert pool.started == []


# --- Deadlines and stops ------------------------------------------------------------------


def test_nothing_new_starts_once_the_time_budget_is_spent():
    now = [100.0]
    check = make(A, time_budget=5.0, clock=lambda: now[0])
    check.drop_waiting_when_due()
    assert list(check.queues) == ["a.test"]
    now[0] = 105.0
    check.drop_waiting_when_due()
    assert not check.queues


def test_nothing_new_starts_once_a_stop_is_asked_for_or_the_caller_failed():
    stop = threading.Event()
    check = make(A, should_stop=stop.is_set)
    assert not check.start_nothing_more()
    stop.set()
    assert check.start_nothing_more()
    other = make(A)
    other.abort.set()
    other.drop_waiting_when_due()
    assert not other.queues


# --- Collecting results -------------------------------------------------------------------


def test_a_result_frees_its_place_and_goes_to_the_calling_thread():
    check = make(A, per_host=1)
    pool = HeldPool()
    check.start_fetches(pool)
    result = ok(A[0])
    pool.futures[A[0]].set_result(result)
    check.collect([pool.futures[A[0]]])
    assert check.finished.get_nowait() == (A[0], result)
    assert check.active_per_host["a.test"] == 0 and not check.running
    assert list(check.queues["a.test"]) == A[1:]


def test_a_host_that_got_no_slot_in_a_whole_deadline_is_not_tried_again():
    check = make(A, per_host=1)
    pool = HeldPool()
    check.start_fetches(pool)
    pool.futures[A[0]].set_result(no_slot(A[0]))
    check.collect([pool.futures[A[0]]])
    assert batch.not_started(check.finished.get_nowait()[1])
    assert "a.test" not in check.queues  # its other URLs are left for a later attempt


# --- One fetch ---------------------------------------------------------------------------


def test_one_fetch_gets_its_body_need_the_limiter_and_the_options():
    calls = []
    result = ok(A[0])

    def check(url, **options):
        calls.append((url, options))
        return result

    limiter = InProcessHostLimiter(1)
    batch_check = BatchCheck(
        {A[0]: True},
        max_in_flight=1,
        per_host=1,
        limiter=limiter,
        fetch_options={"deadline": 3.0},
        check=check,
    )
    assert batch_check.fetch_one(A[0], "a.test") is result
    ((url, options),) = calls
    assert url == A[0] and options["need_body"] is True and options["deadline"] == 3.0
    assert options["limiter"] is limiter and callable(options["sleep"])


def test_a_checker_bug_is_the_urls_result_not_an_exception():
    def check(url, **options):
        raise RuntimeError("bug")

    result = make(A, check=check).fetch_one(A[0], "a.test")
    assert (result.state, result.error_class) == ("error", "internal")
    assert result.error == "RuntimeError: bug"


def test_a_fetch_waiting_to_retry_gives_its_place_back_while_it_waits():
    seen = []

    def check(url, *, sleep, **options):
        sleep(0.5)  # a back-off before a retry
        return ok(url)

    def record_sleep(seconds):
        seen.append((seconds, batch_check.active_per_host["a.test"], batch_check.sleeping))

    batch_check = make(A, check=check, fetch_options={"sleep": record_sleep})
    batch_check.active_per_host["a.test"] = 1  # as start_next leaves it
    batch_check.fetch_one(A[0], "a.test")
    assert seen == [(0.5, 0, 1)]  # no place held while waiting
    assert (batch_check.active_per_host["a.test"], batch_check.sleeping) == (1, 0)


# --- The whole run --------------------------------------------------------------------------


def test_every_url_is_checked_once_and_each_result_handed_over_as_it_comes():
    handed = []
    check = make(A + B, check=lambda url, **options: ok(url))
    results = check.run(lambda url, result: handed.append(url))
    assert set(results) == set(A + B) and sorted(handed) == sorted(A + B)


def test_a_failure_of_the_dispatcher_is_raised_in_the_calling_thread():
    class BrokenLimiter(InProcessHostLimiter):
        def wait_time(self, host):
            raise RuntimeError("limiter broken")

    check = make(A, limiter=BrokenLimiter(2), check=lambda url, **options: ok(url))
    with pytest.raises(RuntimeError, match="limiter broken"):
        check.run()


def test_places_must_be_at_least_one():
    with pytest.raises(ValueError, match="must be at least 1"):
        make(A, per_host=0)
    with pytest.raises(ValueError, match="must be at least 1"):
        batch.check_many(dict.fromkeys(A, False), max_in_flight=0)
