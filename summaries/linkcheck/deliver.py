"""Sending one POST safely (webhook deliveries): the fetcher's address rules, one attempt.

The URL, and every address its name resolves to, pass the same policy as source checks
(`policy`), and the connection goes to a vetted address with the name kept for the Host
header, SNI and certificate checks (no DNS rebinding): `transport` does both, as for a
fetch. Redirects are not followed: a receiver that answers 3xx has not taken the
delivery. One attempt only; whoever calls decides when to try again (Celery, with
backoff). `deadline` bounds the whole exchange, body included, as for a fetch.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .fetch import DEFAULT_USER_AGENT
from .policy import Blocked, IPNetwork, parse_networks, parse_target
from .result import ErrorClass
from .transport import (
    Guard,
    NetError,
    Resolver,
    classify,
    connect_first,
    default_resolver,
    read_body,
    vetted_addresses,
)

# What a receiver answers is kept for the delivery log only this far.
RESPONSE_EXCERPT = 1024
# Statuses worth trying again: the receiver may take it later (others are its refusal).
RETRIED_STATUSES = frozenset({408, 425, 429})
# Network trouble that says nothing about the receiver refusing the delivery for good.
NOT_RETRIED_ERRORS = frozenset({ErrorClass.BLOCKED})


@dataclass
class PostResult:
    """What one POST got back: a status, or the class of failure with a detail."""

    status: int | None = None
    error_class: ErrorClass | None = None
    error: str = ""
    response_ms: int | None = None
    response_excerpt: str = ""
    address: str = ""
    retry_after: str = ""  # the answer's Retry-After header, as sent

    @property
    def delivered(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def worth_retrying(self) -> bool:
        """A failure the receiver may recover from: a 5xx, 408/425/429, or a network
        failure other than a refused address. 3xx and other 4xx are final."""
        if self.delivered:
            return False
        if self.status is not None:
            return self.status >= 500 or self.status in RETRIED_STATUSES
        return self.error_class not in NOT_RETRIED_ERRORS


def post(
    url: str,
    body: bytes,
    *,
    headers: dict[str, str],
    resolver: Resolver = default_resolver,
    allowed_networks: str | Iterable[str | IPNetwork] = (),
    deadline: float = 10.0,
    user_agent: str = DEFAULT_USER_AGENT,
    ssl_context: ssl.SSLContext | None = None,
    clock: Callable[[], float] = time.monotonic,
    content_type: str = "application/json",
) -> PostResult:
    """POST `body` (with `headers`, of `content_type`) to `url` once; never raises for
    network trouble. A refused URL or address is error_class "blocked" and nothing is sent."""
    networks = parse_networks(allowed_networks)
    deadline_at = clock() + deadline
    try:
        target = parse_target(url)
        addresses = vetted_addresses(
            target, resolver=resolver, allowed_networks=networks, timeout=deadline
        )
    except Blocked as blocked:
        return PostResult(error_class=ErrorClass.BLOCKED, error=blocked.reason)
    except NetError as error:
        return PostResult(error_class=error.error_class, error=error.detail)
    started = clock()
    guard = Guard(deadline)
    connection = None
    answered = False
    try:
        connection = connect_first(
            target,
            addresses,
            guard=guard,
            timeout=max(0.001, deadline_at - clock()),
            ssl_context=ssl_context,
        )
        connection.request(
            "POST",
            target.request_target,
            body=body,
            headers={
                **headers,
                "Host": target.host_header,
                "User-Agent": user_agent,
                "Content-Type": content_type,
                "Content-Length": str(len(body)),
                "Connection": "close",
            },
            preload_content=False,
            decode_content=True,
        )
        response = connection.getresponse()
        excerpt, _ = read_body(response, RESPONSE_EXCERPT)
        if guard.fired:
            raise NetError(ErrorClass.TIMEOUT, "deadline passed while reading")
        answered = True
        return PostResult(
            status=response.status,
            response_ms=round((clock() - started) * 1000),
            response_excerpt=excerpt[:RESPONSE_EXCERPT].decode("utf-8", "replace"),
            address=str(connection.host),
            retry_after=response.headers.get("Retry-After", ""),
        )
    except Exception as exc:  # noqa: BLE001 - every failure is a result, never an exception
        failure = (
            NetError(ErrorClass.TIMEOUT, f"deadline of {deadline}s passed")
            if guard.fired
            else exc
            if isinstance(exc, NetError)
            else classify(exc)
        )
        return PostResult(
            error_class=failure.error_class,
            error=failure.detail,
            response_ms=round((clock() - started) * 1000),
        )
    finally:
        guard.disarm(abort=not answered)  # a delivery given up on is not delivered later
        if connection is not None:
            connection.close()
