"""The connection layer: pinned urllib3 connections that a watchdog ends at a deadline.

A connection is made to one vetted IP address; for https, SNI and certificate verification
use the name (`server_hostname`), so the certificate must be valid for the name while DNS
is never asked again. urllib3 connection objects (not pools) never read proxy settings
from the environment. Each exchange arms a `Guard`: when its time is up, the watchdog
thread shuts the socket down, which ends any blocked connect, handshake or read at once.
"""

from __future__ import annotations

import heapq
import http.client
import itertools
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import urllib3.exceptions
from urllib3.connection import HTTPConnection, HTTPSConnection

from .result import ErrorClass

CHUNK_SIZE = 64 * 1024

# A watchdog entry: [when, sequence number, callback], the callback None once cancelled.
# A list rather than a tuple so that cancelling does not have to search the heap.
WatchdogEntry = list[Any]


class Watchdog:
    """One thread that runs callbacks at given times; cancelled entries are skipped."""

    def __init__(self) -> None:
        self._heap: list[WatchdogEntry] = []
        self._condition = threading.Condition()
        self._counter = itertools.count()
        self._thread: threading.Thread | None = None

    def call_later(self, delay: float, callback: Callable[[], None]) -> WatchdogEntry:
        entry = [time.monotonic() + delay, next(self._counter), callback]
        with self._condition:
            heapq.heappush(self._heap, entry)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="linkcheck-watchdog", daemon=True
                )
                self._thread.start()
            self._condition.notify()
        return entry

    def cancel(self, entry: WatchdogEntry) -> None:
        with self._condition:
            entry[2] = None

    def _run(self) -> None:
        while True:
            with self._condition:
                while True:
                    while self._heap and self._heap[0][2] is None:
                        heapq.heappop(self._heap)
                    if not self._heap:
                        self._condition.wait()
                        continue
                    delay = self._heap[0][0] - time.monotonic()
                    if delay <= 0:
                        callback = heapq.heappop(self._heap)[2]
                        break
                    self._condition.wait(delay)
            try:
                callback()
            except Exception:  # noqa: S110 - a failed shutdown must not stop the watchdog
                pass


WATCHDOG = Watchdog()


class Guard:
    """Shuts down the sockets of one exchange when its deadline passes.

    It keeps a duplicate of each socket's file descriptor: shutdown() on it ends the
    connection even after TLS has taken over the original socket object, and the
    duplicate is ours to close, so no unrelated socket can ever be hit.
    """

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._done = False
        self.fired = False
        self._entry = WATCHDOG.call_later(max(0.0, seconds), self._fire)

    def attach(self, sock: socket.socket) -> None:
        duplicate = sock.dup()
        with self._lock:
            self._sockets.append(duplicate)
            if self.fired:
                self._shutdown(duplicate)

    def _fire(self) -> None:
        with self._lock:
            if self._done:
                return
            self.fired = True
            for duplicate in self._sockets:
                self._shutdown(duplicate)

    @staticmethod
    def _shutdown(sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def disarm(self) -> None:
        WATCHDOG.cancel(self._entry)
        with self._lock:
            self._done = True
            for duplicate in self._sockets:
                duplicate.close()
            self._sockets.clear()


class GuardedHTTPConnection(HTTPConnection):
    def __init__(self, *args: Any, guard: Guard, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guard = guard

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self._guard.attach(sock)
        return sock


class GuardedHTTPSConnection(HTTPSConnection):
    def __init__(self, *args: Any, guard: Guard, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guard = guard

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self._guard.attach(sock)
        return sock


def open_connection(
    scheme: str,
    address: str,
    port: int,
    *,
    server_hostname: str,
    timeout: float,
    guard: Guard,
    ssl_context: ssl.SSLContext | None = None,
) -> HTTPConnection:
    """An unconnected connection to the vetted address; https verifies server_hostname."""
    if scheme == "http":
        return GuardedHTTPConnection(host=address, port=port, timeout=timeout, guard=guard)
    return GuardedHTTPSConnection(
        host=address,
        port=port,
        timeout=timeout,
        guard=guard,
        server_hostname=server_hostname,
        cert_reqs="CERT_REQUIRED",
        ssl_context=ssl_context,
    )


class NetError(Exception):
    """An exchange that produced no usable response."""

    def __init__(self, error_class: ErrorClass, detail: str) -> None:
        super().__init__(detail)
        self.error_class = error_class
        self.detail = detail


def classify(error: BaseException) -> NetError:
    """The error class of an exception raised while connecting or reading."""
    if isinstance(error, NetError):
        return error
    detail = f"{type(error).__name__}: {error}"
    # urllib3 wraps socket errors: NewConnectionError (a ConnectTimeoutError subclass, even
    # for a refusal) chains the OSError; ProtocolError carries it as its second argument.
    cause = error.__cause__
    if isinstance(error, urllib3.exceptions.ProtocolError) and len(error.args) > 1:
        cause = error.args[1]
    if isinstance(error, urllib3.exceptions.HTTPError) and isinstance(cause, OSError):
        return NetError(classify(cause).error_class, detail)
    if isinstance(error, ssl.SSLError | ssl.CertificateError | urllib3.exceptions.SSLError):
        return NetError(ErrorClass.TLS, detail)
    if isinstance(error, TimeoutError | urllib3.exceptions.TimeoutError):
        return NetError(ErrorClass.TIMEOUT, detail)
    if isinstance(error, ConnectionRefusedError):
        return NetError(ErrorClass.REFUSED, detail)
    if isinstance(error, ConnectionError | http.client.IncompleteRead):
        # Reset, aborted, broken pipe, closed before a (complete) response.
        return NetError(ErrorClass.RESET, detail)
    if isinstance(error, urllib3.exceptions.ProtocolError) and isinstance(
        cause, http.client.IncompleteRead
    ):
        return NetError(ErrorClass.RESET, detail)
    if isinstance(error, OSError):
        return NetError(ErrorClass.REFUSED, detail)  # unreachable network or host
    if isinstance(error, http.client.HTTPException | urllib3.exceptions.HTTPError | ValueError):
        return NetError(ErrorClass.PROTOCOL, detail)
    raise error


def read_body(response: urllib3.BaseHTTPResponse, limit: int) -> tuple[bytes, bool]:
    """Up to limit bytes of decoded content, and whether there was more."""
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = response.read(CHUNK_SIZE, decode_content=True)
        if not chunk:
            return b"".join(chunks), False
        total += len(chunk)
        if total > limit:
            chunks.append(chunk[: len(chunk) - (total - limit)])
            return b"".join(chunks), True
        chunks.append(chunk)
