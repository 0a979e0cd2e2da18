"""Per-host concurrency limits and back-off, shared by every fetch of a process.

`fetch` takes a slot for each request it sends (not while it sleeps between retries) and
pauses a host that pushes back (429/503). The Celery layer can pass any object with the
same three methods, e.g. one backed by Redis so that the limit holds across processes.
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


class InProcessHostLimiter:
    """At most `per_host` requests in flight per host within this process."""

    def __init__(self, per_host: int = 2, *, clock: Callable[[], float] = time.monotonic):
        if per_host < 1:
            raise ValueError("per_host must be at least 1")
        self.per_host = per_host
        self._clock = clock
        self._in_flight: dict[str, int] = {}
        self._paused_until: dict[str, float] = {}
        self._condition = threading.Condition()

    def acquire(self, host: str, *, timeout: float | None = None) -> bool:
        give_up_at = None if timeout is None else self._clock() + timeout
        with self._condition:
            while True:
                now = self._clock()
                paused_for = self._paused_until.get(host, 0.0) - now
                if paused_for <= 0 and self._in_flight.get(host, 0) < self.per_host:
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
