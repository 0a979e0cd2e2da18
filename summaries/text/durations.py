"""Times into a video and lengths, as editors type them and readers read them."""

import re

# Times and durations are stored in seconds; nothing we summarise runs longer than this.
MAX_SECONDS = 7 * 24 * 3600

DURATION_MESSAGES = {
    "invalid": "Enter a length such as 34:21, 1:02:03 or a number of seconds.",
    "not_positive": "A duration must be longer than zero seconds.",
    "too_long": "That is longer than a week; check the value.",
}

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


def running_time(seconds: int | str | None) -> str:
    """A video's length as video sites show it: "0:26", "34:21", "1:02:07"; "" for none.

    The same clock as positions in a video (`format_duration`), never rounded: a list
    reads 25:50, not "26 min".
    """
    if seconds in (None, ""):
        return ""
    return format_duration(int(seconds))


class DurationError(ValueError):
    """Why a typed duration was refused; `code` is a key of DURATION_MESSAGES."""

    def __init__(self, code: str) -> None:
        super().__init__(DURATION_MESSAGES[code])
        self.code = code


def read_duration(value: str, *, allow_zero: bool = False) -> int:
    """Seconds from what an editor typed (34:21, 1:02:03 or seconds), within MAX_SECONDS.

    The one rule for times and lengths, in the admin and the API alike. Raises
    DurationError ("invalid", "not_positive" or "too_long").
    """
    try:
        seconds = parse_duration(value)
    except ValueError:
        raise DurationError("invalid") from None
    if seconds <= 0 and not (allow_zero and seconds == 0):
        raise DurationError("not_positive")
    if seconds > MAX_SECONDS:
        raise DurationError("too_long")
    return seconds
