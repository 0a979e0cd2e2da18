"""The verdict on a pinned span: found, judged on whole sentences, and timed."""

from __future__ import annotations

from collections.abc import Sequence

from ..durations import format_duration
from ..transcripts import Word
from .base import TIME_TOLERANCE, Kind, Span, Status, Verdict
from .claims import _conflict, _word_for
from .finding import (
    _CONTEXT_TOKENS,
    _MARGIN_TOKENS,
    CHAPTER_NEAR,
    POINT_SUPPORT,
    QUOTE_CONFLICT,
    QUOTE_NEAR,
    _aligned,
    _covered,
    _find_exact,
    _Found,
    _search,
)
from .index import _index, _Transcript
from .statements import _Statement, _statement

# ---------------------------------------------------------------------------------------
# Verifying a pin
# ---------------------------------------------------------------------------------------


def verify(
    statement: str,
    words: Sequence[Word],
    span: Span,
    *,
    kind: Kind,
    stated_time: float | None = None,
) -> Verdict:
    """Whether the pinned `span` of the transcript supports `statement`.

    The statement is looked for in the span and a little around it, then, if it is not
    there, in the whole transcript: words found elsewhere are judged where they are and
    given as `suggested_span`. A contradiction (a flipped negation, another number, unit
    or name) outweighs a paraphrase; a stated time (a chapter start, "watch from 3:21")
    more than two seconds from where the words are said makes the pin mis-timed, with
    `suggested_time`.
    """
    target = _statement(statement, kind)
    if not words or not target.tokens:
        return Verdict(Status.NOT_FOUND, 0.0, "there are no words to compare")
    index = _index(words)
    a, b = index.tokens_of(span.first_word, span.end_word)
    # A span from an older, longer transcript may end past this one.
    a = min(a, len(index.tokens) - 1)
    b = min(max(b, a + 1), len(index.tokens))
    if kind == "point":
        found, local = _locate_point(index, target, a, b)
    else:
        found, local = _locate_words(index, target, a, b)
    if found is None:
        return Verdict(Status.NOT_FOUND, 0.0, "nothing in the transcript says this")
    verdict = _judge(index, target, found, local, (a, b))
    moved = index.span(found.a, found.b, round(found.score, 1))
    inside = span.first_word <= moved.first_word and moved.end_word <= span.end_word
    if verdict.status == Status.NOT_FOUND:
        return verdict
    said_at = span.start if kind == "point" and local else moved.start
    suggested_span = None if inside or (kind == "point" and local) else moved
    if not local:
        verdict = _with(
            verdict,
            reason=f"{verdict.reason}; said at {_clock(moved.start)}, outside the pinned span",
        )
    if stated_time is not None and abs(stated_time - said_at) > TIME_TOLERANCE:
        status = Status.CONTRADICTED if verdict.status == Status.CONTRADICTED else Status.MIS_TIMED
        reason = f"said at {_clock(said_at)}, not {_clock(stated_time)}"
        if status == Status.CONTRADICTED:
            reason = f"{verdict.reason}; {reason}"
        elif verdict.status != Status.VERBATIM:
            # The editor still reads why the words are not verbatim.
            reason = f"{reason}; {verdict.reason}"
        return Verdict(status, verdict.score, reason, suggested_span, said_at)
    return Verdict(verdict.status, verdict.score, verdict.reason, suggested_span)


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


def _locate_point(
    index: _Transcript, target: _Statement, a: int, b: int
) -> tuple[_Found | None, bool]:
    """Where a point is supported: by its pinned span (read with a little context) if that
    says enough of it, else by the best stretch of the whole transcript."""
    lo, hi = max(0, a - _CONTEXT_TOKENS), min(len(index.tokens), b + _CONTEXT_TOKENS)
    score = _covered(index, target, lo, hi)
    exact = _find_exact(index, target.pieces, lo, hi)
    if exact is not None:
        return exact, True
    if score >= POINT_SUPPORT:
        return _Found(a, max(b, a + 1), score), True
    found = _search(index, target, 1)
    if found and found[0].score > score + 5:
        return found[0], False
    return _Found(a, max(b, a + 1), score), True


def _judge(
    index: _Transcript, target: _Statement, found: _Found, local: bool, pinned: tuple[int, int]
) -> Verdict:
    """The verdict on the place where the statement was found (without its time)."""
    score = round(found.score, 1)
    if found.verbatim:
        return Verdict(
            Status.VERBATIM,
            100.0,
            f"said word for word at {_clock(index.words[index.first_word[found.a]].start)}",
        )
    size = len(index.tokens)
    if target.kind == "point":
        core = pinned if local else (found.a, found.b)
        lo, hi = max(0, core[0] - _CONTEXT_TOKENS), min(size, core[1] + _CONTEXT_TOKENS)
        floor, near = POINT_SUPPORT, POINT_SUPPORT
    else:
        # A negation said just before the words found still applies to them.
        core = (max(0, found.a - 3), min(size, found.b + 1))
        lo, hi = found.a, found.b
        floor = QUOTE_CONFLICT
        near = QUOTE_NEAR if target.kind == "quote" else CHAPTER_NEAR
    if score < floor:
        return Verdict(
            Status.NOT_FOUND,
            score,
            f"nothing in the transcript says this (best match {score:.0f}/100)",
        )
    conflict = _conflict(index, core, (lo, hi), target)
    if conflict:
        return Verdict(Status.CONTRADICTED, score, conflict)
    if score < near:
        return Verdict(
            Status.NOT_FOUND,
            score,
            f"nothing in the transcript says this (best match {score:.0f}/100)",
        )
    said = index.said(found.a, found.b)
    if target.kind == "point":
        missing = sorted(target.content - set(index.stems[lo:hi]))
        unsaid = ", ".join(_word_for(s, target.tokens, target.stems) for s in missing[:5])
        note = f"; not said: {unsaid}" if missing else ""
        return Verdict(
            Status.PARAPHRASE,
            score,
            f"a paraphrase ({score:.0f}/100) for an editor to approve{note}",
        )
    return Verdict(
        Status.PARAPHRASE,
        score,
        f"close but not word for word ({score:.0f}/100); the transcript says: {_shorten(said)}",
    )


def _shorten(text: str, size: int = 200) -> str:
    return text if len(text) <= size else text[: size - 1].rsplit(" ", 1)[0] + "\u2026"


def _clock(seconds: float) -> str:
    return format_duration(int(seconds))
