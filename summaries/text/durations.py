"""Times into a video and lengths, as editors type them and readers read them."""

import re

_CLOCK = re.compile(r"^(?:(\d+):)?([0-5]?\d):([0-5]\d)$")


def parse_duration(value: str) -> int:
    """Seconds from "34:21", "1:02:03" or "2061"; ValueError for anything else."""
    value = value.strip()
    if value.isdigit():
        return int(value)
    match = _CLOCK.match(value)
    if not match:
        raise ValueError(value)
    hours, minutes, seconds = (int(part or 0) for part in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def format_duration(seconds: int) -> str:
    """A clock: "34:21" for 2061 seconds, "1:02:03" past an hour."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"
