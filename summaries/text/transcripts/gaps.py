"""Warnings about a transcript's times: gaps without words, and an end well past the
video's or well before it (a file cut short).
"""

from __future__ import annotations

import math

from ..durations import format_duration
from .base import (
    COVERAGE_SHARE,
    COVERAGE_SLACK_S,
    DURATION_SLACK_S,
    DURATION_SLACK_SHARE,
    GAP_S,
    GAPS_NAMED,
    Segment,
    _clock,
)


def _gap_warnings(segments: list[Segment]) -> list[str]:
    """A warning for each stretch of GAP_S or more between one cue's end and the next
    one's start (the first GAPS_NAMED by their times, the rest counted)."""
    gaps: list[tuple[float, float]] = []
    said_until = None
    for segment in segments:
        if said_until is not None and segment.start - said_until >= GAP_S:
            gaps.append((said_until, segment.start))
        said_until = segment.end if said_until is None else max(said_until, segment.end)
    warnings = [
        f"no words between {format_duration(int(start))} and {format_duration(int(end))}: "
        "is part of the transcript missing?"
        for start, end in gaps[:GAPS_NAMED]
    ]
    if len(gaps) > GAPS_NAMED:
        more = len(gaps) - GAPS_NAMED
        warnings.append(
            f"{more:,} more gap{'s' * (more > 1)} of {GAP_S / 60:.0f} minutes or more without "
            f"words, the last up to {format_duration(int(gaps[-1][1]))}"
        )
    return warnings


def _duration_warnings(segments: list[Segment], duration: float) -> list[str]:
    """A warning when the transcript runs well past the video's `duration`, or when its
    last words end well before it (a file cut short)."""
    if not segments or not math.isfinite(duration) or duration < 0:
        return []
    last = max(segment.end for segment in segments)
    if last < COVERAGE_SHARE * duration and duration - last >= COVERAGE_SLACK_S:
        share = math.floor(100 * last / duration)
        return [
            f"the transcript ends at {format_duration(int(last))} of a "
            f"{format_duration(int(duration))} video ({share} %): it may be cut short"
        ]
    slack = max(DURATION_SLACK_S, DURATION_SLACK_SHARE * duration)
    if last <= duration + slack:
        return []
    return [
        f"the transcript runs to {_clock(round(last * 1000))}, {last - duration:.0f} s past "
        f"the end of the video ({_clock(round(duration * 1000))}): is it the transcript of "
        "this video?"
    ]
