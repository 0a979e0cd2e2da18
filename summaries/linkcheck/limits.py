"""Per-host concurrency limits, shared by every fetch of a process.

`fetch` takes a slot for each request it sends (not while it sleeps between retries). A
host that pushes back (429/503) is slowed down, not stopped: its concurrency is halved
(never below one request at a time) and grows back by one after every INCREASE_AFTER
answers without push-back, up to the configured limit (AIMD, as TCP does). The URL that
got the push-back waits out its own Retry-After (`fetch`); the host's other URLs go on at
the reduced concurrency. An explicit `pause` (nothing at all for a while) is still there
for callers that need one. The Celery layer can pass any object with the same methods,
e.g. one backed by Redis so that the limit holds across processes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Protocol


class HostLimiter(Protocol):
    def acquire(self, host: str, *, timeout: float | None = None) -> bool:
        """Take a slot for one request to host; wait at most timeout seconds (None: forever).

        Returns False when no slot was free (or the host stayed paused) in time.
        """

    def release(self, host: str) -> None:
        """Give back a slot taken by acquire."""

    def pause(self, host: str, seconds: float) -> None:
        """The host pushed back: give out no slot for it during the next seconds."""

    def wait_time(self, host: str) -> float:
        """Seconds until the host's pause ends (0 when it is not paused)."""

    def slow_down(self, host: str) -> None:
        """The host pushed back: halve its concurrency (at least 1)."""

    def speed_up(self, host: str) -> None:
        """The host answered without pushing back: one step towards its full concurrency."""

    def limit(self, host: str) -> int:
        """The host's current concurrency (requests it may have in flight)."""


# Answers without push-back after which a slowed-down host gets one more slot.
INCREASE_AFTER = 5


class InProcessHostLimiter:
    """At most `per_host` requests in flight per host within this process."""

    def __init__(self, per_host: int = 2, *, clock: Callable[[], float] = time.monotonic):
        if per_host < 1:
            raise ValueError("per_host must be at least 1")
        self.per_host = per_host
        self._clock = clock
        self._in_flight: dict[str, int] = {}
        self._paused_until: dict[str, float] = {}
        # Hosts slowed down: their current limit, and answers since it last changed.
        self._limit: dict[str, int] = {}
        self._answers: dict[str, int] = {}
        self._condition = threading.Condition()

    def acquire(self, host: str, *, timeout: float | None = None) -> bool:
        give_up_at = None if timeout is None else self._clock() + timeout
        with self._condition:
            while True:
                now = self._clock()
                paused_for = self._paused_until.get(host, 0.0) - now
                limit = self._limit.get(host, self.per_host)
                if paused_for <= 0 and self._in_flight.get(host, 0) < limit:
                    self._in_flight[host] = self._in_flight.get(host, 0) + 1
                    return True
                if give_up_at is not None and now >= give_up_at:
                    return False
                waits = [give_up_at - now] if give_up_at is not None else []
                if paused_for > 0:
                    waits.append(paused_for)
                self._condition.wait(min(waits) if waits else None)

    def release(self, host: str) -> None:
        with self._condition:
            count = self._in_flight.get(host, 0) - 1
            if count > 0:
                self._in_flight[host] = count
            else:
                self._in_flight.pop(host, None)
            self._condition.notify_all()

    def pause(self, host: str, seconds: float) -> None:
        with self._condition:
            until = self._clock() + seconds
            if until > self._paused_until.get(host, 0.0):
                self._paused_until[host] = until

    def wait_time(self, host: str) -> float:
        with self._condition:
            until = self._paused_until.get(host)
            if until is None:
                return 0.0
            remaining = until - self._clock()
            if remaining <= 0:
                del self._paused_until[host]
                return 0.0
            return remaining

    def in_flight(self, host: str) -> int:
        with self._condition:
            return self._in_flight.get(host, 0)

    def slow_down(self, host: str) -> None:
        with self._condition:
            self._limit[host] = max(1, self._limit.get(host, self.per_host) // 2)
            self._answers[host] = 0

    def speed_up(self, host: str) -> None:
        with self._condition:
            if host not in self._limit:
                return
            self._answers[host] += 1
            if self._answers[host] < INCREASE_AFTER:
                return
            limit = self._limit[host] + 1
            if limit >= self.per_host:
                del self._limit[host], self._answers[host]
            else:
                self._limit[host], self._answers[host] = limit, 0
            self._condition.notify_all()

    def limit(self, host: str) -> int:
        with self._condition:
            return self._limit.get(host, self.per_host)
