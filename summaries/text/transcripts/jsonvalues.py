"""Values of a JSON transcript (json3 or Whisper) checked as they are read: lists, objects,
times and their order, each error naming the event or segment where it is.
"""

from __future__ import annotations

from .base import MAX_CUES, MAX_SECONDS, OVERLAP_MS, TranscriptError, _clock, _shown


def _items(value: object, name: str) -> list[object]:
    if not isinstance(value, list):
        raise TranscriptError(f'"{name}" is {_shown(value)}, not a list')
    if len(value) > MAX_CUES:
        raise TranscriptError(
            f"the file has {len(value):,} {name}, more than the {MAX_CUES:,} a transcript may have"
        )
    return value


def _object(value: object, where: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise TranscriptError(f"{where}: {_shown(value)}, not an object")
    return value


def _ms(value: object, where: str, key: str, *, scale: int) -> int:
    """A time of a JSON transcript in milliseconds (`scale` 1 for milliseconds, 1000 for
    seconds); an error naming where, for anything but a number from 0 to 100 hours."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TranscriptError(f'{where}: "{key}" is {_shown(value)}, not a number')
    if not 0 <= value <= MAX_SECONDS * 1000 / scale:
        raise TranscriptError(f'{where}: "{key}" is {_shown(value)}, not a time in a video')
    return round(value * scale)


def _json_tokens(text: str) -> list[str]:
    return text.split()


def _check_json_order(
    start: int, before: tuple[str, int, int] | None, where: str, *, overlap_allowed: bool
) -> None:
    if before is None:
        return
    name, before_start, before_end = before
    if start < before_start:
        raise TranscriptError(
            f"{where} starts at {_clock(start)}, before {name} ({_clock(before_start)}): "
            "they must be in time order"
        )
    if not overlap_allowed and before_end - start > OVERLAP_MS:
        raise TranscriptError(
            f"{where} starts at {_clock(start)}, {(before_end - start) / 1000:.3f} s before "
            f"{name} ends ({_clock(before_end)}); they may overlap by 1 s at most"
        )
