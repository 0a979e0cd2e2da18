"""The verdict on a pinned span: found, judged on whole sentences, and timed."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from ..durations import format_duration
from ..transcripts import Word
from . import support as point_support
from .base import TIME_TOLERANCE, Kind, Span, Status, Verdict
from .claims import _conflict
from .finding import (
    _MARGIN_TOKENS,
    CHAPTER_NEAR,
    QUOTE_CONFLICT,
    QUOTE_NEAR,
    _aligned,
    _find_exact,
    _Found,
    _search,
)
from .index import _index, _Transcript
from .statements import _Statement, _statement
from .support import SUPPORTED, Support


def verify(
    statement: str,
    words: Sequence[Word],
    span: Span,
    *,
    kind: Kind,
    stated_time: float | None = None,
) -> Verdict:
    """Whether the pinned `span` of the transcript supports `statement`.

    A point is judged on the sentences its span touches (and one either side): supported
    when more than half of what it claims is said there in order, else looked for in the
    whole transcript. A quote or a chapter's first words are looked for in the span and a
    little around it, then in the whole transcript. Words found elsewhere are judged where
    they are and given as `suggested_span`. A contradiction (the other polarity, another
    quantity or name) outweighs a paraphrase; a stated time (a chapter start, a point's
    "watch from 3:21") more than two seconds from where the supporting words start makes
    the pin mis-timed, with `suggested_time`.
    """
    if not words:
        return Verdict(Status.NOT_FOUND, 0.0, "there are no words to compare")
    index = _index(words)
    target = _statement(statement, kind, bounded=not index.reading.punctuated)
    if not target.tokens:
        return Verdict(Status.NOT_FOUND, 0.0, "there are no words to compare")
    a, b = index.tokens_of(span.first_word, span.end_word)
    # A span from an older, longer transcript may end past this one.
    a = min(a, len(index.tokens) - 1)
    b = min(max(b, a + 1), len(index.tokens))
    if kind == "point":
        return _verify_point(index, target, span, (a, b), stated_time)
    found, local = _locate_words(index, target, a, b)
    if found is None:
        return Verdict(Status.NOT_FOUND, 0.0, "nothing in the transcript says this")
    verdict = _judge_words(index, target, found)
    if verdict.status == Status.NOT_FOUND:
        return verdict
    moved = index.span(found.a, found.b, round(found.score, 1))
    inside = span.first_word <= moved.first_word and moved.end_word <= span.end_word
    return _timed(verdict, moved, None if inside else moved, local, stated_time)


def _verify_point(
    index: _Transcript,
    target: _Statement,
    span: Span,
    pinned: tuple[int, int],
    stated_time: float | None,
) -> Verdict:
    near = point_support.best_near(index, target, *pinned)
    # A span from an older, longer transcript, past this one's end, is not where it is.
    found, local = _decisive(index, target, near, pinned, stated_time)
    local = local and span.first_word < len(index.words)
    if found is None or found.share <= SUPPORTED:
        best = found.score if found is not None else 0.0
        return Verdict(
            Status.NOT_FOUND,
            best,
            f"nothing in the transcript says this (best match {best:.0f}/100)",
        )
    verdict = _judge_point(index, target, found, word_for_word=local)
    # The span starts where the point starts being said: its time. A stated time is right
    # anywhere from the passage's first sentence to the start of the one that says most
    # of the point: a reader sent there hears the point made.
    moved = index.span(found.start, found.pinned_end, found.score)
    inside = span.first_word <= moved.first_word and moved.end_word <= span.end_word
    first = _start(index, min(found.a, found.start))
    last = _start(index, max(found.start, found.main))
    return _timed(
        verdict, moved, None if inside or local else moved, local, stated_time, (first, last)
    )


# Passages elsewhere weighed against the pinned one.
_RIVALS = 3


def _decisive(
    index: _Transcript,
    target: _Statement,
    near: Support | None,
    pinned: tuple[int, int],
    stated: float | None,
) -> tuple[Support | None, bool]:
    """The passage that decides a point, and whether it is where the point is pinned
    (the best passage near the pin, `near`, or one overlapping the pinned tokens). The passage
    that starts at the point's stated time, else the pinned one, decides when nothing
    elsewhere (not overlapping it) says more of the point; of passages elsewhere that say
    it as well, one that contradicts it decides (a contradiction outweighs a paraphrase).
    Otherwise the passage that says most of it, wherever it is: support elsewhere counts
    only where it matches at least as well. So the "it's not a bubble" said at the stated
    time decides "it's not a bubble", not the "is it a bubble?" asked before it."""
    found = point_support.search(index, target, _RIVALS)
    at_stated = None
    if stated is not None:
        a, b = _tokens_at(index, stated)
        at_stated = point_support.starting_in(index, target, a, b) if a < b else None
        if at_stated is not None and abs(_start(index, at_stated.start) - stated) > TIME_TOLERANCE:
            at_stated = None
    everything = [p for p in (near, at_stated, *found) if p is not None]
    if not everything:
        return None, False
    for place in (at_stated, near):
        if place is None or place.share <= SUPPORTED:
            continue
        elsewhere = [p for p in everything if p.b <= place.a or p.a >= place.b]
        if any(p.share > place.share + _SAME_SHARE for p in elsewhere):
            continue
        return place, place is near or _overlaps(place, pinned)
    best = max(everything, key=lambda p: p.share)
    return best, best is near or _overlaps(best, pinned)


# Shares closer than this are equal (sums of the same weights in another order).
_SAME_SHARE = 1e-9


def _overlaps(passage: Support, pinned: tuple[int, int]) -> bool:
    return passage.a < pinned[1] and pinned[0] < passage.b


def _tokens_at(index: _Transcript, seconds: float) -> tuple[int, int]:
    """The tokens said within the tolerance of a stated time."""
    first = bisect_left(index.token_starts, seconds - TIME_TOLERANCE)
    end = bisect_left(index.token_starts, seconds + TIME_TOLERANCE)
    return first, max(end, min(first + 1, len(index.tokens)))


def _timed(
    verdict: Verdict,
    moved: Span,
    suggested: Span | None,
    local: bool,
    stated: float | None,
    right: tuple[float, float] | None = None,
) -> Verdict:
    """The verdict with where the words are said and whether a stated time is right: within
    two seconds of their start, or of the stretch `right`."""
    said_at = moved.start
    first, last = right or (said_at, said_at)
    if not local:
        verdict = _with(
            verdict,
            reason=f"{verdict.reason}; said at {_clock(said_at)}, outside the pinned span",
        )
    if stated is not None and not first - TIME_TOLERANCE <= stated <= last + TIME_TOLERANCE:
        status = Status.CONTRADICTED if verdict.status == Status.CONTRADICTED else Status.MIS_TIMED
        reason = f"said at {_clock(said_at)}, not {_clock(stated)}"
        if status == Status.CONTRADICTED:
            reason = f"{verdict.reason}; {reason}"
        elif verdict.status != Status.VERBATIM:
            # The editor still reads why the words are not verbatim.
            reason = f"{reason}; {verdict.reason}"
        return Verdict(status, verdict.score, reason, suggested, said_at)
    return Verdict(verdict.status, verdict.score, verdict.reason, suggested)


def _with(verdict: Verdict, *, reason: str) -> Verdict:
    return Verdict(
        verdict.status, verdict.score, reason, verdict.suggested_span, verdict.suggested_time
    )


def _locate_words(
    index: _Transcript, target: _Statement, a: int, b: int
) -> tuple[_Found | None, bool]:
    """Where a quote or a chapter's first words are said: in the pinned span or near it
    if they are there, else the best place of the whole transcript. (place, near the pin)"""
    margin = _MARGIN_TOKENS + len(target.tokens)
    lo, hi = max(0, a - margin), min(len(index.tokens), b + margin)
    exact = _find_exact(index, target.pieces, lo, hi)
    if exact is not None:
        return exact, True
    near = _aligned(index, target.stems, lo, hi)
    if near is not None and near.score >= QUOTE_NEAR:
        return near, True
    found = _search(index, target, 1)
    best = found[0] if found else None
    if best is None or (near is not None and near.score + 5 >= best.score):
        return near, True
    return best, False


def _judge_point(
    index: _Transcript, target: _Statement, found: Support, *, word_for_word: bool
) -> Verdict:
    """The verdict on a point's passage (without its time). Said word for word is verbatim
    only where it is pinned: a pin elsewhere is for an editor to move or approve, since its
    time is wrong."""
    conflict = _conflict(index, found.a, found.b, target)
    if conflict:
        return Verdict(Status.CONTRADICTED, found.score, conflict)
    if word_for_word and _find_exact(index, target.pieces, found.a, found.b) is not None:
        return Verdict(
            Status.VERBATIM, 100.0, f"said word for word at {_clock(_start(index, found.a))}"
        )
    missing = [target.tokens[k] for k in target.claim_positions if k not in found.pairs]
    note = f"; not said: {', '.join(dict.fromkeys(missing[:5]))}" if missing else ""
    return Verdict(
        Status.PARAPHRASE,
        found.score,
        f"a paraphrase ({found.score:.0f}/100) for an editor to approve{note}",
    )


def _judge_words(index: _Transcript, target: _Statement, found: _Found) -> Verdict:
    """The verdict on the words of a quote or a chapter's start where they were found
    (without its time): their polarity as said, from the start of the clause they are
    said in, and their quantities and names."""
    score = round(found.score, 1)
    floor = QUOTE_CONFLICT
    near = QUOTE_NEAR if target.kind == "quote" else CHAPTER_NEAR
    if score < floor:
        return Verdict(
            Status.NOT_FOUND,
            score,
            f"nothing in the transcript says this (best match {score:.0f}/100)",
        )
    conflict = _conflict(index, found.a, found.b, target)
    if conflict:
        return Verdict(Status.CONTRADICTED, score, conflict)
    if found.verbatim:
        return Verdict(
            Status.VERBATIM, 100.0, f"said word for word at {_clock(_start(index, found.a))}"
        )
    if score < near:
        return Verdict(
            Status.NOT_FOUND,
            score,
            f"nothing in the transcript says this (best match {score:.0f}/100)",
        )
    said = index.said(found.a, found.b)
    return Verdict(
        Status.PARAPHRASE,
        score,
        f"close but not word for word ({score:.0f}/100); the transcript says: {_shorten(said)}",
    )


def _start(index: _Transcript, token: int) -> float:
    return index.words[index.first_word[token]].start


def _shorten(text: str, size: int = 200) -> str:
    return text if len(text) <= size else text[: size - 1].rsplit(" ", 1)[0] + "\u2026"


def _clock(seconds: float) -> str:
    return format_duration(int(seconds))
