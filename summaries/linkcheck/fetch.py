"""Fetching one URL safely: vetted and pinned connections, redirects, retries and caps.

Each name is resolved once per fetch with the injected resolver and every address is vetted
(`policy.vet_address`) before a connection is made to that very address; the Host header,
TLS SNI and certificate verification keep the name, so a DNS answer that changes between
the check and the connection (rebinding) cannot redirect the request. Every redirect hop
goes through the same steps. Connections are plain urllib3 connection objects: no proxy
(urllib3 never reads proxy variables from the environment) and no cookies. Within a batch
(`connections`, a `transport.KeepAlive`) a connection whose response was read to its end
is kept for the host's next request, and taken again only for an address that request
has just vetted; without one, every request has a connection of its own.

A whole fetch (every hop, attempt and back-off wait) ends by `deadline`: a watchdog thread
shuts the socket down when it passes, so a slow-drip body cannot outlive it.
"""

from __future__ import annotations

import contextlib
import http.client
import random
import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC
from email.utils import parsedate_to_datetime
from urllib.parse import quote, urljoin, urlsplit

import urllib3.exceptions
from urllib3.util.request import ACCEPT_ENCODING

from .limits import HostLimiter
from .page import HTML_TYPES, PDF_TYPES, HeadScanner, Page, media_type, read_page
from .policy import Blocked, IPAddress, IPNetwork, Target, parse_networks, parse_target
from .result import CheckResult, ErrorClass, State
from .transport import (
    Connection,
    Guard,
    KeepAlive,
    NetError,
    Resolver,
    classify,
    connect_first,
    default_resolver,
    quick_ack,
    read_body,
    vetted_addresses,
)

DEFAULT_USER_AGENT = "curation-linkcheck/1.0 (source checker for curated summaries)"
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
PERMANENT_REDIRECTS = frozenset({301, 308})
UNVERIFIABLE_STATUSES = frozenset({401, 403, 407, 429})
PUSHBACK_STATUSES = frozenset({429, 503})
NOT_RETRIED_5XX = frozenset({501, 505})  # "not implemented", "version not supported"
# What is left of a response's body that is still read so its connection can be kept.
DRAIN_LIMIT = 64 * 1024
# A first request needs at least this share of the deadline left when its host slot comes
# free; with less, a timeout would say nothing of the site, so the fetch counts as not
# started (no slot in time) and is tried again later.
FAIR_SHARE = 0.25
# Error pages are read only this far, to recognise a challenge page.
ERROR_BODY_LIMIT = 256 * 1024
DEFAULT_ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.8"
# A page checked without a claim is read up to the end of its head (title, description),
# but never further than this: a head full of inline styles and scripts ends somewhere.
HEAD_LIMIT = 512 * 1024
HEAD_CHUNK_SIZE = 16 * 1024


def parse_retry_after(value: str | None, *, now: float) -> float | None:
    """Seconds to wait from a Retry-After value (delta-seconds or HTTP date); None if invalid."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        moment = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return max(0.0, moment.timestamp() - now)


@dataclass
class _Body:
    """What was read of a response's body."""

    data: bytes
    complete: bool  # the whole body (a head-only read of a short page is complete too)
    too_large: bool = False  # over max_body when all of it was needed
    read: bool = True  # False: not read at all, nothing to say about the content


@dataclass
class _Response:
    """One response: the status, the headers and what its body (if read) says."""

    status: int
    headers: urllib3.HTTPHeaderDict
    page: Page | None  # read from the body of a GET (not when it was too large)
    too_large: bool
    elapsed: float
    address: str
    body: bytes | None = None  # the 2xx body as received, only when asked to keep it

    @property
    def challenge(self) -> bool:
        header = self.headers.get("cf-mitigated", "").lower() == "challenge"
        return header or bool(self.page and self.page.challenge)


def _fix_location(location: str) -> str:
    """A Location value as a browser would read it: UTF-8 sent raw, spaces encoded.

    Control characters and backslashes are left for the policy to refuse.
    """
    with contextlib.suppress(UnicodeError):
        location = location.encode("latin-1").decode("utf-8")
    location = location.strip(" ")
    return "".join(
        quote(character, safe="") if character == " " or ord(character) > 127 else character
        for character in location
    )


def _material(url: str) -> tuple[str, str, str]:
    """What identifies a page for "has it moved": host without www., path, query."""
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    return host, parts.path.rstrip("/") or "/", parts.query


def _moved_permanently(url: str, chain: list[tuple[str, int]], final_url: str) -> bool:
    """Whether the permanent redirects at the start of the chain lead somewhere else.

    A link whose 301/308 redirects lead to another host, path or query should be updated
    (state "redirected"); a scheme upgrade (http to https), a "www." prefix or a trailing
    slash does not count, and neither do temporary redirects (302/303/307: the link stays
    right, the server chose where to send readers today).
    """
    destination = url
    for index, (_hop_url, status) in enumerate(chain):
        if status not in PERMANENT_REDIRECTS:
            break
        destination = chain[index + 1][0] if index + 1 < len(chain) else final_url
    return _material(destination) != _material(url)


@dataclass
class _Options:
    need_body: bool
    resolver: Resolver
    allowed_networks: tuple[IPNetwork, ...]
    timeout: float
    deadline: float
    max_body: int
    max_redirects: int
    user_agent: str
    retries: int
    backoff: float
    max_backoff: float
    sleep: Callable[[float], None]
    rng: Callable[[], float]
    clock: Callable[[], float]
    limiter: HostLimiter | None
    ssl_context: ssl.SSLContext | None
    keep_body: bool = False
    accept: str = DEFAULT_ACCEPT
    send_until: float | None = None
    connections: KeepAlive | None = None


class _Fetch:
    """The state of one fetch: its deadline, resolved names and counters."""

    def __init__(self, url: str, options: _Options) -> None:
        self.url = url
        self.options = options
        self.deadline_at = options.clock() + options.deadline
        self.addresses: dict[str, list[IPAddress]] = {}
        self.attempts = 0

    def remaining(self) -> float:
        return self.deadline_at - self.options.clock()

    def past_send_until(self) -> bool:
        """Past `send_until`: the batch's claim on the URL may have lapsed."""
        send_until = self.options.send_until
        return send_until is not None and self.options.clock() >= send_until

    def too_late(self) -> bool:
        """Whether a request that just got its host slot may no longer be sent: past
        `send_until`, or, for a first request, with less than a fair share of the deadline
        left (a timeout then would say nothing of the site)."""
        if self.past_send_until():
            return True
        return self.attempts == 0 and self.remaining() < FAIR_SHARE * self.options.deadline

    # -- resolution -----------------------------------------------------------------------

    def vetted_addresses(self, target: Target) -> list[IPAddress]:
        """The target's addresses, all vetted (Blocked if any is refused; NetError for
        DNS); each name is resolved once per fetch, whatever its hops and attempts."""
        return vetted_addresses(
            target,
            resolver=self.options.resolver,
            allowed_networks=self.options.allowed_networks,
            timeout=self.remaining(),
            known=self.addresses,
        )

    # -- one request ----------------------------------------------------------------------

    def exchange(self, target: Target, addresses: list[IPAddress]) -> _Response:
        """Send one GET and read its response (as much of the body as the check needs)."""
        options = self.options
        limiter = options.limiter
        if limiter is not None:
            if not limiter.acquire(target.host, timeout=max(0.0, self.remaining())):
                raise NetError(ErrorClass.NO_SLOT, f"no free slot for {target.host} in time")
            if self.too_late():
                limiter.release(target.host)
                raise NetError(ErrorClass.NO_SLOT, f"no free slot for {target.host} in time")
        elif self.past_send_until():
            raise NetError(ErrorClass.NO_SLOT, "no request may be sent any more")
        try:
            return self._exchange(target, addresses)
        finally:
            if limiter is not None:
                limiter.release(target.host)

    def _connection(
        self, target: Target, addresses: list[IPAddress], guard: Guard, timeout: float
    ) -> tuple[Connection, bool]:
        """A kept-alive connection to one of the just vetted addresses, or a new one; and
        whether it was kept."""
        options = self.options
        if options.connections is not None:
            kept = options.connections.take(target, addresses, ssl_context=options.ssl_context)
            if kept is not None:
                kept.rearm(guard, timeout)
                return kept, True
        return self._connection_new(target, addresses, guard, timeout)

    def _send(self, connection: Connection, target: Target) -> urllib3.BaseHTTPResponse:
        options = self.options
        headers = {
            "Host": target.host_header,
            "User-Agent": options.user_agent,
            "Accept": options.accept,
            "Accept-Encoding": ACCEPT_ENCODING,
            "Accept-Language": "en;q=1.0, *;q=0.5",
        }
        if options.connections is None:
            headers["Connection"] = "close"
        connection.request(
            "GET",
            target.request_target,
            headers=headers,
            preload_content=False,
            decode_content=True,
            enforce_content_length=True,
        )
        quick_ack(connection)
        return connection.getresponse()

    def _exchange(self, target: Target, addresses: list[IPAddress]) -> _Response:
        options = self.options
        remaining = self.remaining()
        if remaining <= 0:
            raise NetError(ErrorClass.TIMEOUT, "deadline passed")
        self.attempts += 1
        started = options.clock()
        guard = Guard(remaining)
        timeout = min(options.timeout, remaining)
        connection = None
        answered = keep = False
        try:
            connection, kept = self._connection(target, addresses, guard, timeout)
            try:
                response = self._send(connection, target)
            except (ConnectionError, http.client.HTTPException, urllib3.exceptions.HTTPError):
                if not kept or guard.fired:
                    raise
                # The server closed the kept connection while it was idle: nothing of this
                # request was answered, so it is sent once more on a connection of its own.
                connection.close()
                connection, kept = self._connection_new(target, addresses, guard, timeout)
                response = self._send(connection, target)
            body = _Body(b"", complete=True)
            if response.status not in REDIRECT_STATUSES:
                body = self._body(response)
            if guard.fired:  # the body may look complete when a shutdown ended it
                raise NetError(ErrorClass.TIMEOUT, "deadline passed while reading")
            content_type = response.headers.get("Content-Type")
            keep_body = options.keep_body and 200 <= response.status < 300 and body.complete
            page = None
            if body.read and not body.too_large:
                page = read_page(body.data, content_type, complete=body.complete)
            answer = _Response(
                status=response.status,
                headers=response.headers,
                page=page,
                too_large=body.too_large,
                elapsed=options.clock() - started,
                address=str(connection.host),
                body=body.data if keep_body else None,
            )
            answered = True
            keep = options.connections is not None and _read_to_the_end(response)
            return answer
        except Exception as exc:
            if guard.fired:
                raise NetError(
                    ErrorClass.TIMEOUT, f"deadline of {options.deadline}s passed"
                ) from exc
            raise classify(exc) from exc
        finally:
            guard.disarm(abort=not answered)
            if connection is not None:
                if keep and not guard.fired and options.connections is not None:
                    options.connections.give_back(
                        target, connection, ssl_context=options.ssl_context
                    )
                else:
                    connection.close()

    def _connection_new(
        self, target: Target, addresses: list[IPAddress], guard: Guard, timeout: float
    ) -> tuple[Connection, bool]:
        connection = connect_first(
            target, addresses, guard=guard, timeout=timeout, ssl_context=self.options.ssl_context
        )
        return connection, False  # type: ignore[return-value]

    def _body(self, response: urllib3.BaseHTTPResponse) -> _Body:
        """As much of the body as the check needs.

        An error page: its start, to recognise a challenge. With `need_body` (claims, kept
        bodies): all of it, or none when it is over max_body ("body_too_large"). Otherwise
        (a link without a claim, whose title and description editors see): an HTML page up
        to the end of its head, a PDF whole when it fits (its title is in its metadata),
        nothing of anything else. Stopping early sends nothing more to the server; the
        connection is closed.
        """
        if not 200 <= response.status < 300:
            return _Body(read_body(response, ERROR_BODY_LIMIT)[0], complete=False)
        options = self.options
        limit = options.max_body
        length = response.headers.get("Content-Length", "")
        encoded = response.headers.get("Content-Encoding", "identity").lower() != "identity"
        known_too_large = not encoded and length.isdigit() and int(length) > limit
        content_type = response.headers.get("Content-Type")
        if options.need_body or options.keep_body:
            if known_too_large:
                return _Body(b"", complete=False, too_large=True)
            data, more = read_body(response, limit)
            return _Body(data, complete=not more, too_large=more)
        kind = media_type(content_type)[0]
        if kind in PDF_TYPES:
            if known_too_large:
                return _Body(b"", complete=False, read=False)
            data, more = read_body(response, limit)
            return _Body(data, complete=not more, read=not more)
        if kind in HTML_TYPES or kind in ("", "text/plain", "application/octet-stream"):
            data, more = read_head(response, min(HEAD_LIMIT, limit))
            return _Body(data, complete=not more)
        return _Body(b"", complete=False, read=False)

    # -- attempts, retries, redirects -----------------------------------------------------

    def wait_before_retry(self, outcome: _Response | NetError, retry: int) -> float | None:
        """Seconds to wait before retrying, or None when that would pass the deadline.

        Exponential back-off with full jitter, never shorter than Retry-After.
        """
        options = self.options
        wait = options.rng() * min(options.max_backoff, options.backoff * 2.0**retry)
        if isinstance(outcome, _Response):
            wait = max(wait, _retry_after(outcome))
        if options.clock() + wait >= self.deadline_at:
            return None
        return wait

    def push_back(self, target: Target, response: _Response) -> None:
        """A 429 or 503 slows the host down in the limiter (its concurrency halved, for
        every fetch that shares it); any other answer is a step back to full speed.

        The host is never stopped: its Retry-After binds the URL that got it (the retry
        waits for it, `wait_before_retry`), and the host's other URLs go on meanwhile.
        """
        limiter = self.options.limiter
        if limiter is None:
            return
        if response.status in PUSHBACK_STATUSES:
            limiter.slow_down(target.host)
        else:
            limiter.speed_up(target.host)

    def attempt(self, target: Target, addresses: list[IPAddress]) -> _Response | NetError:
        """The outcome (_Response or NetError) at one URL after retries."""
        retry = 0
        while True:
            outcome: _Response | NetError
            try:
                outcome = self.exchange(target, addresses)
            except NetError as error:
                outcome = error
            if isinstance(outcome, _Response):
                self.push_back(target, outcome)
            if _is_retryable(outcome) and retry < self.options.retries:
                # The wait holds no request slot: exchange() gave it back.
                wait = self.wait_before_retry(outcome, retry)
                if wait is None:
                    return outcome
                self.options.sleep(wait)
                retry += 1
                continue
            return outcome

    def run(self) -> CheckResult:
        options = self.options
        result = CheckResult(url=self.url, state=State.ERROR, final_url=self.url)
        try:
            target = parse_target(self.url)
            seen = {target.url}
            while True:
                result.final_url = target.url
                addresses = self.vetted_addresses(target)
                outcome = self.attempt(target, addresses)
                result.attempts, result.method = self.attempts, "GET"
                if isinstance(outcome, NetError):
                    return _failed(result, outcome)
                location = outcome.headers.get("Location")
                if outcome.status not in REDIRECT_STATUSES or not location:
                    return self._finish(result, outcome)
                result.redirect_chain.append((target.url, outcome.status))
                # The last response received, also when the next hop is refused or fails.
                result.status = outcome.status
                if len(result.redirect_chain) > options.max_redirects:
                    return _broken(result, ErrorClass.TOO_MANY_REDIRECTS, "too many redirects")
                next_url = urljoin(target.url, _fix_location(location))
                result.final_url = next_url
                target = parse_target(next_url)
                if target.url in seen:
                    return _broken(result, ErrorClass.REDIRECT_LOOP, f"loops back to {next_url}")
                seen.add(target.url)
        except Blocked as blocked:
            result.attempts = self.attempts
            result.state, result.error_class = State.BLOCKED, ErrorClass.BLOCKED
            result.error = blocked.reason
            return result
        except NetError as error:  # DNS, or the deadline before a request
            result.attempts = self.attempts
            return _failed(result, error)

    def _finish(self, result: CheckResult, response: _Response) -> CheckResult:
        status = response.status
        result.status = status
        result.address = response.address
        result.response_ms = round(response.elapsed * 1000)
        result.content_type = media_type(response.headers.get("Content-Type"))[0]
        page, challenge = response.page, response.challenge
        if page is not None and 200 <= status < 300:
            result.title, result.fingerprint = page.title, page.fingerprint
            result.description = page.description
            if self.options.need_body:
                result.text = page.text
        if response.body is not None and 200 <= status < 300:
            result.body = response.body
            result.headers = list(response.headers.items())
        if response.too_large:
            result.state, result.error_class = State.ERROR, ErrorClass.BODY_TOO_LARGE
            result.error = f"body larger than {self.options.max_body} bytes"
        elif challenge or status in UNVERIFIABLE_STATUSES:
            result.state, result.error_class = State.UNVERIFIABLE, ErrorClass.HTTP
            result.error = "challenge page" if challenge else f"HTTP {status}"
        elif 200 <= status < 300:
            moved = _moved_permanently(self.url, result.redirect_chain, result.final_url)
            result.state = State.REDIRECTED if moved else State.OK
        else:
            result.state, result.error_class = State.BROKEN, ErrorClass.HTTP
            result.error = f"HTTP {status}"
        return result


def read_head(response: urllib3.BaseHTTPResponse, limit: int) -> tuple[bytes, bool]:
    """The start of a page up to the end of its head (at most limit bytes), and whether
    the rest was left unread. It takes what has arrived (read1), so a page that drips
    slowly is left as soon as its head is in."""
    scanner = HeadScanner()
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        chunk = response.read1(min(HEAD_CHUNK_SIZE, limit - total), decode_content=True)
        if not chunk:
            return b"".join(chunks), False
        chunks.append(chunk)
        total += len(chunk)
        if scanner.feed(chunk):
            break
    return b"".join(chunks), True


def _read_to_the_end(response: urllib3.BaseHTTPResponse) -> bool:
    """Whether the response's body has been read whole (what is left of it is read here
    when its length is known and small), so its connection can carry the next request."""
    if not response.closed:
        left = response.length_remaining
        if left is None or left > DRAIN_LIMIT:
            return False
        try:
            response.read(left + 1, decode_content=False)
        except Exception:  # noqa: BLE001 - the answer stands; only the connection is lost
            return False
    return bool(response.closed)


def _retry_after(response: _Response) -> float:
    """Seconds the server asked us to wait (0 without a valid Retry-After)."""
    if response.status not in PUSHBACK_STATUSES:
        return 0.0
    seconds = parse_retry_after(response.headers.get("Retry-After"), now=time.time())
    return seconds or 0.0


def _is_retryable(outcome: _Response | NetError) -> bool:
    if isinstance(outcome, NetError):
        return outcome.error_class in (ErrorClass.TIMEOUT, ErrorClass.RESET)
    if outcome.challenge:
        return False  # a challenge answers the same way however often it is asked
    status = outcome.status
    return status == 429 or (500 <= status < 600 and status not in NOT_RETRIED_5XX)


def _failed(result: CheckResult, error: NetError) -> CheckResult:
    result.state, result.error_class, result.error = State.ERROR, error.error_class, error.detail
    return result


def _broken(result: CheckResult, error_class: ErrorClass, detail: str) -> CheckResult:
    result.state, result.error_class, result.error = State.BROKEN, error_class, detail
    return result


def fetch(
    url: str,
    *,
    need_body: bool,
    resolver: Resolver = default_resolver,
    allowed_networks: str | Iterable[str | IPNetwork] = (),
    timeout: float = 5.0,
    deadline: float = 5.0,
    max_body: int = 2_000_000,
    max_redirects: int = 10,
    user_agent: str = DEFAULT_USER_AGENT,
    retries: int = 3,
    backoff: float = 0.5,
    max_backoff: float = 4.0,
    sleep: Callable[[float], None] = time.sleep,
    rng: Callable[[], float] = random.random,
    clock: Callable[[], float] = time.monotonic,
    limiter: HostLimiter | None = None,
    ssl_context: ssl.SSLContext | None = None,
    keep_body: bool = False,
    accept: str = DEFAULT_ACCEPT,
    send_until: float | None = None,
    connections: KeepAlive | None = None,
) -> CheckResult:
    """Check one URL and return what was found; never raises for network trouble.

    The rules:
    - The URL and every redirect target pass the address policy (`policy`): a refusal is
      the state "blocked", nothing is sent, and it is never retried.
    - One GET per attempt (no HEAD first: a title is wanted for every page, and many
      servers answer HEAD wrongly). With `need_body` (claims need the text and its
      fingerprint) the whole body is read; without it, an HTML page only up to the end of
      its head (title and description), a PDF whole if it fits (title from its metadata),
      anything else not at all.
    - 429, 5xx (but 501/505), timeouts and resets are retried up to `retries` times with
      exponential back-off (`backoff` doubling up to `max_backoff`) and full jitter, never
      sooner than Retry-After; 404/410 and other answers are not.
    - `deadline` seconds bound the whole fetch: every hop, attempt and wait. A retry whose
      wait would pass it is not made, and the last answer stands. `timeout` bounds each
      connect and each read within that.
    - With `need_body`, decoded bodies over `max_body` bytes are "error"/"body_too_large" (a
      gzip bomb is cut off after max_body decoded bytes; a Content-Length over it is not
      read at all); without it, a large body is simply not read to its end.
    - States: 2xx is "ok", or "redirected" when permanent redirects (301/308) lead to
      another host, path or query; 401/403/407/429 after retries and challenge pages are
      "unverifiable"; other 4xx, 5xx after retries, 3xx without Location, redirect loops and
      over `max_redirects` redirects are "broken"; network failures are "error".
    `sleep`, `rng` and `clock` are injectable for tests; `limiter` (see `limits`) spaces
    requests per host; `ssl_context` replaces the default verifying context (it must keep
    check_hostname on). `keep_body` (with `need_body`) keeps a 2xx body's bytes, within
    `max_body`, in `CheckResult.body` and its headers in `CheckResult.headers` (thumbnails,
    the evidence vault); without `need_body` it keeps nothing; `accept` is the
    Accept header sent. No request is sent once `clock()` reaches `send_until` (a batch's
    claim on the URL may have lapsed by then): the fetch ends as "no slot in time".
    `connections` (a `KeepAlive`, one per batch) keeps connections alive between requests
    to the same host, reused only for an address this fetch has vetted.
    A 429 or 503 halves the host's concurrency in `limiter` (any other answer helps it
    recover); the host is never paused: only the URL that got a Retry-After waits for it.
    """
    options = _Options(
        need_body=need_body,
        resolver=resolver,
        allowed_networks=parse_networks(allowed_networks),
        timeout=timeout,
        deadline=deadline,
        max_body=max_body,
        max_redirects=max_redirects,
        user_agent=user_agent,
        retries=retries,
        backoff=backoff,
        max_backoff=max_backoff,
        sleep=sleep,
        rng=rng,
        clock=clock,
        limiter=limiter,
        ssl_context=ssl_context,
        # Only a body read whole can be kept: pages checked without a claim stay head-only.
        keep_body=keep_body and need_body,
        accept=accept,
        send_until=send_until,
        connections=connections,
    )
    return _Fetch(url, options).run()
