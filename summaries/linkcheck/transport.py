"""The connection layer: pinned urllib3 connections that a watchdog ends at a deadline.

A name is resolved once and every address it gives is vetted by the policy
(`vetted_addresses`); a connection is then made to one of those very addresses
(`connect_first`). For https, SNI and certificate verification use the name
(`server_hostname`), so the certificate must be valid for the name while DNS is never
asked again. urllib3 connection objects (not pools) never read proxy settings from the
environment. Each exchange arms a `Guard`: when its time is up, the watchdog thread shuts
the socket down, which ends any blocked connect, handshake or read at once. The fetcher
(`fetch`) and the webhook sender (`deliver`) both connect through here.

`KeepAlive` holds a batch's idle connections per host. A fetch takes one only for an
address it has just vetted (its name resolved and every address checked again for this
fetch), so a kept connection never reaches an address the policy would refuse now.
"""

from __future__ import annotations

import contextlib
import heapq
import http.client
import ipaddress
import itertools
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeoutError
from typing import Any

import urllib3.exceptions
from urllib3.connection import HTTPConnection, HTTPSConnection

from .policy import (
    Blocked,
    IPAddress,
    IPNetwork,
    Target,
    check_target,
    is_public_allowed,
    vet_address,
    vet_port,
)
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
            with contextlib.suppress(Exception):  # a failed shutdown must not stop the watchdog
                callback()


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
        # A new descriptor for the same socket (socket.dup() refuses a TLS socket).
        duplicate = socket.fromfd(sock.fileno(), sock.family, sock.type, sock.proto)
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
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)

    def disarm(self, *, abort: bool = False) -> None:
        """Stop watching the exchange's sockets.

        With `abort` (the exchange failed or was given up on) each socket is reset when it
        is closed (SO_LINGER 0) rather than ended with a FIN: bytes the peer has not
        acknowledged (a request sent into a dead link) are dropped, where a FIN would leave
        the kernel sending them again for a minute or more, to arrive after the caller has
        given up on them and may send them again.
        """
        WATCHDOG.cancel(self._entry)
        with self._lock:
            self._done = True
            for duplicate in self._sockets:
                if abort:
                    _reset_on_close(duplicate)
                duplicate.close()
            self._sockets.clear()


def _reset_on_close(sock: socket.socket) -> None:
    """Make the socket's last close send a RST and drop what is still unsent (the option
    belongs to the shared socket, so setting it on a duplicate is enough)."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


class GuardedHTTPConnection(HTTPConnection):
    def __init__(self, *args: Any, guard: Guard, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guard = guard

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self._guard.attach(sock)
        return sock

    def rearm(self, guard: Guard, timeout: float) -> None:
        """Put a kept-alive connection under the next exchange's guard and timeout."""
        self._guard, self.timeout = guard, timeout
        if self.sock is not None:
            guard.attach(self.sock)


class GuardedHTTPSConnection(HTTPSConnection):
    def __init__(self, *args: Any, guard: Guard, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._guard = guard

    def _new_conn(self) -> socket.socket:
        sock = super()._new_conn()
        self._guard.attach(sock)
        return sock

    def rearm(self, guard: Guard, timeout: float) -> None:
        """Put a kept-alive connection under the next exchange's guard and timeout."""
        self._guard, self.timeout = guard, timeout
        if self.sock is not None:
            guard.attach(self.sock)


Connection = GuardedHTTPConnection | GuardedHTTPSConnection
# Idle connections kept per scheme, host and port; and for how long at most.
KEEP_PER_HOST = 4
KEEP_IDLE_FOR = 4.0


class KeepAlive:
    """A batch's idle connections, per (scheme, host name, port, TLS context), each with
    the address it is connected to. Thread-safe; `close()` (or leaving a `with` block)
    closes every one left."""

    def __init__(self, *, per_host: int = KEEP_PER_HOST, idle_for: float = KEEP_IDLE_FOR) -> None:
        self.per_host = per_host
        self.idle_for = idle_for
        self._idle: dict[tuple[Any, ...], list[tuple[Connection, float]]] = {}
        self._lock = threading.Lock()
        self.reused = 0

    @staticmethod
    def _key(target: Target, ssl_context: ssl.SSLContext | None) -> tuple[Any, ...]:
        return (target.scheme, target.host, target.port, id(ssl_context))

    def take(
        self,
        target: Target,
        addresses: Sequence[IPAddress],
        *,
        ssl_context: ssl.SSLContext | None = None,
    ) -> Connection | None:
        """An idle connection to one of `addresses` (just vetted by the caller), still
        open and not idle too long; None when there is none."""
        allowed = {str(address) for address in addresses}
        now = time.monotonic()
        stale: list[Connection] = []
        found = None
        with self._lock:
            idle = self._idle.get(self._key(target, ssl_context), [])
            for entry in list(idle):
                connection, since = entry
                if now - since > self.idle_for or not connection.is_connected:
                    idle.remove(entry)
                    stale.append(connection)
                elif found is None and connection.host in allowed:
                    idle.remove(entry)
                    found = connection
                    self.reused += 1
        for connection in stale:
            connection.close()
        return found

    def give_back(
        self, target: Target, connection: Connection, *, ssl_context: ssl.SSLContext | None
    ) -> None:
        """Keep a connection whose last response was read to its end, for the next fetch."""
        if connection.sock is None:
            return
        dropped = None
        with self._lock:
            idle = self._idle.setdefault(self._key(target, ssl_context), [])
            idle.append((connection, time.monotonic()))
            if len(idle) > self.per_host:
                dropped = idle.pop(0)[0]
        if dropped is not None:
            dropped.close()

    def close(self) -> None:
        with self._lock:
            everything = [c for idle in self._idle.values() for c, _since in idle]
            self._idle.clear()
        for connection in everything:
            connection.close()

    def __enter__(self) -> KeepAlive:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


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


# -- from a name to a connection -----------------------------------------------------------

Resolver = Callable[[str], Iterable[str]]
# Resolution runs in these threads so that a hanging lookup cannot outlive the deadline.
_RESOLVER_POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="linkcheck-dns")


def default_resolver(host: str) -> list[str]:
    """The addresses the system resolver gives for a name (socket.gaierror when none)."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def hosts_file_resolver(host: str, path: str = "/etc/hosts") -> list[str]:
    """The addresses the hosts file gives for a name, asking no DNS server (Blocked when it
    has none: the name is outside a closed allow-list): how names are looked up then."""
    wanted = host.rstrip(".").lower()
    found = []
    with open(path, encoding="utf-8", errors="replace") as hosts:
        for line in hosts:
            fields = line.split("#", 1)[0].split()
            if any(name.lower() == wanted for name in fields[1:]):
                found.append(fields[0])
    if not found:
        raise Blocked(f"{host} is not in {path} (public addresses are off)")
    return list(dict.fromkeys(found))


def resolve(host: str, resolver: Resolver, *, timeout: float) -> list[IPAddress]:
    """The addresses `resolver` gives for a name, within `timeout` seconds.

    NetError "timeout" when no time is left to ask, "dns" when the lookup fails, takes too
    long or finds nothing; Blocked when an answer is not an IP address.
    """
    if timeout <= 0:
        raise NetError(ErrorClass.TIMEOUT, "deadline passed before resolving " + host)
    future = _RESOLVER_POOL.submit(resolver, host)
    try:
        answers = list(future.result(timeout=timeout))
    except FutureTimeoutError:
        raise NetError(ErrorClass.DNS, f"resolving {host} timed out") from None
    except (OSError, LookupError, UnicodeError) as error:
        raise NetError(ErrorClass.DNS, f"cannot resolve {host}: {error}") from None
    if not answers:
        raise NetError(ErrorClass.DNS, f"{host} has no address")
    addresses = []
    for answer in answers:
        try:
            addresses.append(ipaddress.ip_address(answer))
        except ValueError:
            raise Blocked(f"{host} resolves to an invalid address {answer!r}") from None
    return addresses


def vetted_addresses(
    target: Target,
    *,
    resolver: Resolver,
    allowed_networks: tuple[IPNetwork, ...],
    timeout: float,
    known: dict[str, list[IPAddress]] | None = None,
) -> list[IPAddress]:
    """The target's addresses, every one vetted; Blocked if the target or any is refused.

    The target passes `check_target`; each address `vet_address`, and the port `vet_port`
    for it: the scheme's own port (http 80, https 443) unless that address is in an
    allowed network. A name is resolved (`resolve`, within `timeout`) unless `known`
    holds its addresses already; what is resolved is added to `known`. Under a closed
    allow-list the system resolver is replaced by the hosts file (no DNS query is sent).
    """
    check_target(target, allowed_networks=allowed_networks)
    if resolver is default_resolver and not is_public_allowed(allowed_networks):
        resolver = hosts_file_resolver
    if target.address is not None:
        addresses = [target.address]
    elif known is not None and target.host in known:
        addresses = known[target.host]
    else:
        addresses = resolve(target.host, resolver, timeout=timeout)
        if known is not None:
            known[target.host] = addresses
    # Vet every address: a name that resolves to a public and an internal address at
    # once is refused, whichever one would have been used.
    vetted = [vet_address(address, allowed_networks=allowed_networks) for address in addresses]
    for address in vetted:
        vet_port(target.port, address, scheme=target.scheme, allowed_networks=allowed_networks)
    return vetted


def connect_first(
    target: Target,
    addresses: Sequence[IPAddress],
    *,
    guard: Guard,
    timeout: float,
    ssl_context: ssl.SSLContext | None = None,
) -> HTTPConnection:
    """A connection to the first of the vetted `addresses` that takes one, in their order.

    Each attempt connects to the address itself (`open_connection`; for https the
    handshake verifies the target's name) with `timeout` as its socket timeout. An address
    that refuses, resets or times out is followed by the next one; the last failure is
    raised, classified (NetError). A TLS failure ends the search, as a browser's would:
    the name's certificate is what failed, not the address. So does `guard` firing: the
    deadline has passed.
    """
    error = NetError(ErrorClass.REFUSED, "no address to connect to")
    for address in addresses:
        connection = open_connection(
            target.scheme,
            str(address),
            target.port,
            server_hostname=target.host,
            timeout=timeout,
            guard=guard,
            ssl_context=ssl_context,
        )
        try:
            connection.connect()
        except Exception as exc:  # noqa: BLE001 - classified, then the next address
            connection.close()
            error = classify(exc)
            if guard.fired or error.error_class is ErrorClass.TLS:
                break
        else:
            return connection
    raise error


def quick_ack(connection: HTTPConnection) -> None:
    """Acknowledge the answer's segments at once rather than after the delayed-ACK timer.

    A server that writes its headers and its body separately with Nagle's algorithm on
    holds the body back until the headers are acknowledged: with delayed ACKs that is
    about 40 ms more per request on Linux. TCP_QUICKACK (Linux only) is set once the
    request is sent, before reading; elsewhere nothing changes.
    """
    option = getattr(socket, "TCP_QUICKACK", None)
    if option is None or connection.sock is None:
        return
    with contextlib.suppress(OSError):
        connection.sock.setsockopt(socket.IPPROTO_TCP, option, 1)


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
