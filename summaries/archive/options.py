"""The archive's settings, read where they are used."""

import math
import re

from django.conf import settings

from summaries.linkcheck import DEFAULT_USER_AGENT, allow_list
from summaries.linkcheck.archive import Archive

_RATE = re.compile(r"\s*(\d+)\s*/\s*(s|m|h)\s*\Z")
_PERIODS = {"s": 1, "m": 60, "h": 3600}


def archive() -> Archive:
    """The configured archive, reached under the checker's address rules."""
    return Archive.of(
        settings.ARCHIVE_ENDPOINT,
        allowed_networks=allow_list(settings.FETCH_ALLOWED_NETWORKS, public=settings.FETCH_PUBLIC),
        access_key=settings.ARCHIVE_ACCESS_KEY,
        secret_key=settings.ARCHIVE_SECRET_KEY,
        deadline=settings.ARCHIVE_DEADLINE,
        user_agent=settings.FETCH_USER_AGENT or DEFAULT_USER_AGENT,
    )


def capture_rate() -> tuple[int, int]:
    """ARCHIVE_CAPTURE_RATE as (requests, period in seconds); ValueError if malformed."""
    match = _RATE.match(settings.ARCHIVE_CAPTURE_RATE)
    if match is None or int(match[1]) < 1:
        raise ValueError(
            f"ARCHIVE_CAPTURE_RATE must read N/s, N/m or N/h, not {settings.ARCHIVE_CAPTURE_RATE!r}"
        )
    return int(match[1]), _PERIODS[match[2]]


def poll_seconds() -> float:
    return max(0.0, float(settings.ARCHIVE_POLL_SECONDS))


def backoff(attempt: int) -> float:
    """Seconds before capture request `attempt` + 1 after a refusal: doubling from the poll
    interval, at most an hour."""
    return min(3600.0, max(1.0, poll_seconds()) * math.pow(2, max(0, attempt - 1)))
