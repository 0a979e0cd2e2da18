"""Talking to a web archive: Save Page Now 2 captures, the CDX index, archived copies.

Written from the Internet Archive's public documentation: a capture is asked with
`POST /save` (form field `url`, `Authorization: LOW key:secret`, answer `{"job_id": …}`),
followed with `GET /save/status/<job_id>` (`status`: "pending", "success" with
`timestamp` and `original_url`, or "error" with `status_ext`); captures are listed by
`GET /cdx/search/cdx` (JSON rows, the first one naming the columns) and served raw at
`/web/<timestamp>id_/<url>`. Every request goes through the address-safe fetcher and
sender (`fetch`, `deliver`), so the archive's address is vetted like any other. No ORM.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode

from .claims import find_phrase
from .deliver import post
from .fetch import DEFAULT_USER_AGENT, fetch, parse_retry_after
from .policy import Blocked, IPNetwork, parse_networks, parse_target
from .result import CheckResult, State
from .transport import NetError, Resolver, default_resolver, vetted_addresses

TIMESTAMP_FORMAT = "%Y%m%d%H%M%S"
# Words of pages that are not the cited page: error pages served with a 200 ("soft 404"),
# and the archive's own notices about a missing or redirected capture.
SOFT_ERROR_MARKERS = (
    "page not found",
    "404 not found",
    "error 404",
    "page does not exist",
    "page doesn't exist",
    "wayback machine has not archived that url",
    "got an http 301 response at crawl time",
    "got an http 302 response at crawl time",
    "this url has been excluded from the wayback machine",
)
_TIMESTAMP = re.compile(r"\d{14}\Z")


@dataclass(frozen=True)
class Archive:
    """Where the archive is and how to reach it."""

    endpoint: str  # e.g. https://web.archive.org, no trailing slash
    access_key: str = ""
    secret_key: str = ""
    allowed_networks: tuple[IPNetwork, ...] = ()
    deadline: float = 30.0
    user_agent: str = DEFAULT_USER_AGENT
    resolver: Resolver = default_resolver

    @classmethod
    def of(
        cls,
        endpoint: str,
        *,
        allowed_networks: Iterable[str | IPNetwork] = (),
        access_key: str = "",
        secret_key: str = "",
        deadline: float = 30.0,
        user_agent: str = DEFAULT_USER_AGENT,
    ) -> Archive:
        """An Archive from settings-like values (CIDR strings allowed)."""
        return cls(
            endpoint.rstrip("/"),
            access_key=access_key,
            secret_key=secret_key,
            allowed_networks=parse_networks(allowed_networks),
            deadline=deadline,
            user_agent=user_agent,
        )

    def snapshot_url(self, timestamp: str, original: str, *, raw: bool = False) -> str:
        """The copy of `original` taken at `timestamp`: as readers open it, or `raw`
        (the page as captured, without the archive's banner) for checking."""
        return f"{self.endpoint}/web/{timestamp}{'id_' if raw else ''}/{original}"


@dataclass(frozen=True)
class CaptureAnswer:
    """What a capture request got: a job to follow, or why not (and whether to retry)."""

    job_id: str = ""
    error: str = ""
    transient: bool = False  # 429, 5xx or network trouble: worth asking again later
    retry_after: float | None = None  # seconds the archive asked us to wait


@dataclass(frozen=True)
class CaptureStatus:
    """A capture job's status: "pending", "success" (with the copy) or "error"."""

    status: str
    timestamp: str = ""
    original_url: str = ""
    error: str = ""

    def captured_at(self) -> datetime | None:
        return parse_timestamp(self.timestamp)


def parse_timestamp(value: str) -> datetime | None:
    """A 14-digit archive timestamp as an aware UTC datetime; None if it is not one."""
    if not _TIMESTAMP.match(value or ""):
        return None
    try:
        return datetime.strptime(value, TIMESTAMP_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None


def format_timestamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIMESTAMP_FORMAT)


def may_capture(url: str, *, archive: Archive, opted_out: Iterable[str] = ()) -> str:
    """Why `url` must not be sent to the archive ("" when it may).

    Refused: hosts that opted out (and their subdomains), and any URL the fetcher would
    refuse, judged by the addresses its name resolves to now (a private or internal address
    is never given away to a third party).
    """
    try:
        target = parse_target(url)
        host = target.host.lower().rstrip(".")
        for name in opted_out:
            name = name.lower().strip().rstrip(".")
            if name and (host == name or host.endswith("." + name)):
                return f"{name} opted out of archiving"
        vetted_addresses(
            target,
            resolver=archive.resolver,
            allowed_networks=archive.allowed_networks,
            timeout=min(archive.deadline, 10.0),
        )
    except Blocked as blocked:
        return blocked.reason
    except NetError as error:
        return error.detail or str(error.error_class)
    return ""


def request_capture(url: str, *, archive: Archive) -> CaptureAnswer:
    """Ask the archive to capture `url` (one attempt; the caller paces and retries)."""
    headers = {"Accept": "application/json"}
    if archive.access_key or archive.secret_key:
        headers["Authorization"] = f"LOW {archive.access_key}:{archive.secret_key}"
    answer = post(
        f"{archive.endpoint}/save",
        urlencode({"url": url}).encode(),
        headers=headers,
        content_type="application/x-www-form-urlencoded",
        resolver=archive.resolver,
        allowed_networks=archive.allowed_networks,
        deadline=archive.deadline,
        user_agent=archive.user_agent,
    )
    if answer.status is None:  # network trouble is retried; a refused address is not
        return CaptureAnswer(error=answer.error or "no answer", transient=answer.worth_retrying)
    retry_after = parse_retry_after(answer.retry_after, now=time.time())
    if answer.status == 429 or answer.status >= 500:
        return CaptureAnswer(error=f"HTTP {answer.status}", transient=True, retry_after=retry_after)
    data = _json(answer.response_excerpt)
    job_id = str(data.get("job_id") or "")
    if answer.delivered and job_id:
        return CaptureAnswer(job_id=job_id)
    reason = data.get("message") or data.get("status_ext") or f"HTTP {answer.status}"
    return CaptureAnswer(error=str(reason)[:500])


def capture_status(job_id: str, *, archive: Archive) -> CaptureStatus:
    """The status of capture job `job_id`; network trouble reads as still pending."""
    result = _get(f"{archive.endpoint}/save/status/{quote(job_id, safe='')}", archive)
    if result.body is None:
        return CaptureStatus("pending", error=result.error or f"HTTP {result.status}")
    data = _json(result.body.decode("utf-8", "replace"))
    status = str(data.get("status") or "")
    if status == "success":
        timestamp, original = str(data.get("timestamp") or ""), str(data.get("original_url") or "")
        if parse_timestamp(timestamp) and original.startswith(("http://", "https://")):
            return CaptureStatus("success", timestamp=timestamp, original_url=original)
        return CaptureStatus("error", error="the archive named no copy")
    if status == "error":
        reason = data.get("status_ext") or data.get("message") or "error"
        return CaptureStatus("error", error=str(reason)[:500])
    return CaptureStatus("pending")


def closest_captures(
    url: str, *, before: datetime, archive: Archive, limit: int = 5
) -> list[tuple[str, str]] | None:
    """Captures of `url` taken at `before` or earlier that the archive recorded with status
    200, newest first, as (timestamp, original URL); None when the index could not be read.
    """
    query = urlencode(
        {
            "url": url,
            "to": format_timestamp(before),
            "output": "json",
            "fl": "timestamp,original,statuscode",
            "filter": "statuscode:200",
            "limit": str(-abs(limit)),
        }
    )
    result = _get(f"{archive.endpoint}/cdx/search/cdx?{query}", archive)
    if result.body is None:
        return None
    rows = _json_rows(result.body.decode("utf-8", "replace"))
    found = [
        (str(row[0]), str(row[1]))
        for row in rows[1:]
        if len(row) >= 3 and parse_timestamp(str(row[0])) and str(row[2]) == "200"
    ]
    return sorted(found, reverse=True)[:limit]


def read_copy(
    timestamp: str, original: str, *, archive: Archive, max_body: int, keep_body: bool = False
) -> CheckResult:
    """The archived page as captured (the archive's raw copy), with its text; with
    `keep_body`, its body's bytes too (for the payload digest)."""
    return fetch(
        archive.snapshot_url(timestamp, original, raw=True),
        need_body=True,
        keep_body=keep_body,
        resolver=archive.resolver,
        allowed_networks=archive.allowed_networks,
        deadline=archive.deadline,
        timeout=archive.deadline,
        max_body=max_body,
        retries=1,
        user_agent=archive.user_agent,
    )


def copy_problem(result: CheckResult, key_phrase: str) -> tuple[str, str]:
    """Whether an archived copy may stand in for the page: ("", excerpt) when it may, else
    (why not, "").

    Only a copy answered 200 directly (no redirect: a captured redirect is not the page),
    that is not an error page served as 200, and that holds the key phrase (matched as on
    live pages, `claims.find_phrase`).
    """
    if result.state is not State.OK or result.status != 200:
        return f"the copy answered {result.status or result.error_class}", ""
    if result.redirect_chain:
        return "the copy is a redirect", ""
    words = " ".join(filter(None, [result.title, (result.text or "")[:4000]])).lower()
    marker = next((m for m in SOFT_ERROR_MARKERS if m in words), None)
    if marker is not None:
        return f"the copy is an error page ({marker})", ""
    excerpt = find_phrase(result.text, key_phrase)
    if excerpt is None:
        return "the copy does not hold the key phrase", ""
    return "", excerpt


def _get(url: str, archive: Archive) -> CheckResult:
    return fetch(
        url,
        need_body=True,
        keep_body=True,
        resolver=archive.resolver,
        allowed_networks=archive.allowed_networks,
        deadline=archive.deadline,
        timeout=archive.deadline,
        retries=1,
        accept="application/json",
        user_agent=archive.user_agent,
    )


def _json(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _json_rows(text: str) -> list[list[Any]]:
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, list):
        return []
    return [row for row in data if isinstance(row, list)]
