"""What one check found: the CheckResult, its states and error classes."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


class State(StrEnum):
    OK = "ok"
    REDIRECTED = "redirected"  # 2xx reached through a permanent move elsewhere
    BROKEN = "broken"
    UNVERIFIABLE = "unverifiable"  # a bot wall: 401/403/429 or a challenge page
    BLOCKED = "blocked"  # refused by the address policy; nothing was sent
    ERROR = "error"  # no usable answer: see error_class


class ErrorClass(StrEnum):
    DNS = "dns"
    REFUSED = "refused"  # the connection could not be made (refused or unreachable)
    RESET = "reset"  # closed or reset before a complete response
    TIMEOUT = "timeout"  # the deadline (or a per-operation timeout) passed
    # No request slot for the host freed up within the deadline: nothing was sent.
    NO_SLOT = "no_slot"
    TLS = "tls"
    BODY_TOO_LARGE = "body_too_large"
    TOO_MANY_REDIRECTS = "too_many_redirects"
    REDIRECT_LOOP = "redirect_loop"
    BLOCKED = "blocked"
    HTTP = "http"  # the server answered with an error status (or a challenge page)
    PROTOCOL = "protocol"  # an answer that is not valid HTTP, or undecodable content
    INTERNAL = "internal"  # a bug in the checker (check_many records it, never raises)


@dataclass
class CheckResult:
    """Everything one check of one URL found out."""

    url: str
    state: State
    status: int | None = None  # of the last response received
    final_url: str = ""  # the last URL requested (or refused)
    redirect_chain: list[tuple[str, int]] = field(default_factory=list)  # (url, 3xx status)
    title: str | None = None
    description: str | None = None  # an HTML page's meta description
    content_type: str = ""  # media type only, e.g. "text/html"
    response_ms: int | None = None  # of the last exchange, body included
    fingerprint: str | None = None  # sha256 of the main text (of the bytes if not text)
    error_class: ErrorClass | None = None
    error: str = ""  # a human-readable detail
    text: str | None = None  # main text, only when the body was needed
    attempts: int = 0  # requests sent (retries included, over every hop)
    method: str = ""  # of the last request: always GET (HEAD is no longer sent)
    address: str = ""  # the address the last request went to
    checked_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    # The body's bytes, only when fetched with keep_body (never in as_dict).
    body: bytes | None = field(default=None, repr=False)
    # The response headers as received, kept with the body (never in as_dict).
    headers: list[tuple[str, str]] | None = field(default=None, repr=False)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form (datetime as ISO 8601, chain as lists; no body)."""
        data = asdict(self)
        del data["body"], data["headers"]
        data["checked_at"] = self.checked_at.isoformat()
        data["redirect_chain"] = [list(hop) for hop in self.redirect_chain]
        return data
