"""Receipts: a video's transcript, and each statement of its summary pinned to the words said.

A pin lives on the part it supports (`KeyPoint.pin`, `Takeaway.pin`, `Caveat.pin`,
`Chapter.pin` for the chapter's start, `Chapter.quote_pins` for its quotations), so working
copies, publishing, revisions and restores carry pins with their parts. A pin is a dict:

    first, end        the words (indices into the transcript's timed words; end exclusive)
    start, stop       when they are said, in seconds
    status            verbatim | paraphrase | not_found | contradicted | mis_timed
    score, reason     how close, and why, in an editor's words
    suggested_time    where the words are said, when a stated time is off
    suggested         [first, end] where the words were found instead, if elsewhere
    transcript        digest of the transcript verified against
    statement         digest of the statement verified
    approved          {"by", "at"}: an editor accepted a paraphrase
    override          {"by", "at", "note"}: a reviewer let a refused pin through
    quote             (quote pins) the quotation's text

Statuses are recomputed whenever the statement or the transcript changes (`refresh_pins`);
editors import transcripts and set, approve or override pins through `pinning`;
an approval or an override holds only for the statement and transcript it was given for.
Publishing is refused while a pin is not found or contradicted (a quotation: also while it
is a paraphrase nobody approved), unless a reviewer overrode it with a note
(`publication_problems`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError

from summaries.models import Caveat, Chapter, KeyPoint, Summary, Takeaway, Transcript, Video
from summaries.text import pins as pin_text
from summaries.text.durations import format_duration
from summaries.text.transcripts import Word

from .items import Part

PINNED_MODELS = (KeyPoint, Takeaway, Chapter, Caveat)
BLOCKING = {pin_text.Status.NOT_FOUND, pin_text.Status.CONTRADICTED}
# The words of a chapter's body that stand for its start.
CHAPTER_OPENING_WORDS = 25
_MARKUP = re.compile(r"\[([^\]]*)\]\([^)]*\)|[*_`>#]")


# --- Statements ------------------------------------------------------------------------


@dataclass(frozen=True)
class Statement:
    text: str
    kind: pin_text.Kind
    stated_time: float | None


def statement_of(part: Part) -> Statement:
    """What a part claims was said, and when."""
    if isinstance(part, KeyPoint):
        return Statement(_plain(part.body), "point", _seconds(part.time))
    if isinstance(part, Takeaway):
        return Statement(_plain(part.text), "point", _seconds(part.time))
    if isinstance(part, Caveat):
        return Statement(_plain(part.text), "point", None)
    opening = " ".join(_plain(part.body).split()[:CHAPTER_OPENING_WORDS])
    return Statement(opening, "chapter", _seconds(part.start_time))


def _plain(markdown: str) -> str:
    return " ".join(_MARKUP.sub(lambda m: m.group(1) or "", markdown).split())


def _seconds(value: int | None) -> float | None:
    return float(value) if value is not None else None


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --- Transcripts -----------------------------------------------------------------------


def transcript_for(summary: Summary) -> Transcript | None:
    """The transcript a summary's pins are verified against: for a live (or scheduled)
    summary the published one; for a draft, a summary in review or a working copy the one
    waiting for review if there is one, as it goes live with them."""
    video = summary.summarised_video
    if video is None:
        return None
    language = summary.video_changes.get("language", video.language)
    found = {t.state: t for t in Transcript.objects.filter(video=video, language=language)}
    if summary.status == Summary.Status.PUBLISHED and not summary.is_working_copy:
        return found.get(Transcript.State.LIVE)
    return found.get(Transcript.State.DRAFT) or found.get(Transcript.State.LIVE)


def publish_transcripts(*, video: Video) -> None:
    """Make the video's transcripts waiting for review the ones readers see (called by
    the publishing services, in their transaction)."""
    drafts = list(Transcript.objects.filter(video=video, state=Transcript.State.DRAFT))
    for draft in drafts:
        Transcript.objects.filter(
            video=video, language=draft.language, state=Transcript.State.LIVE
        ).delete()
        draft.state = Transcript.State.LIVE
        draft.save(update_fields=["state", "updated_at"])


# --- Pins ------------------------------------------------------------------------------


def parts_of(summary: Summary) -> Iterator[Part]:
    for model in PINNED_MODELS:
        yield from model.objects.filter(summary=summary).order_by("position")


def refresh_pins(*, summary: Summary) -> int:
    """Verify every pin of `summary` again against its transcript; quotations of chapter
    bodies are pinned where they are found. Returns how many parts changed."""
    transcript = transcript_for(summary)
    if transcript is None:
        return 0  # nothing to verify against: pins keep their last verdicts
    changed = 0
    for part in parts_of(summary):
        fields = _refreshed(part, transcript)
        if fields:
            type(part).objects.filter(pk=part.pk).update(**fields)
            changed += 1
    return changed


def _refreshed(part: Part, transcript: Transcript | None) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    pin = part.pin
    if pin is not None and transcript is not None:
        new = _verified(statement_of(part), pin, transcript)
        if new != pin:
            fields["pin"] = new
    if isinstance(part, Chapter):
        quotes = _quote_pins(part, transcript)
        if quotes != part.quote_pins:
            fields["quote_pins"] = quotes
    return fields


def _verified(statement: Statement, pin: dict[str, Any], transcript: Transcript) -> dict[str, Any]:
    words = transcript.words()
    if not words:
        return {
            **pin,
            "status": pin_text.Status.NOT_FOUND.value,
            "reason": "The transcript is empty.",
        }
    span = pin_text.span_of(words, int(pin["first"]), int(pin["end"]))
    verdict = pin_text.verify(
        statement.text, words, span, kind=statement.kind, stated_time=statement.stated_time
    )
    return pin_data(span, verdict, statement, transcript, previous=pin)


def pin_data(
    span: pin_text.Span,
    verdict: pin_text.Verdict,
    statement: Statement,
    transcript: Transcript,
    previous: dict[str, Any] | None = None,
) -> dict[str, Any]:
    pin: dict[str, Any] = {
        "first": span.first_word,
        "end": span.end_word,
        "start": span.start,
        "stop": span.end,
        "status": verdict.status.value,
        "score": round(verdict.score, 1),
        "reason": verdict.reason,
        "suggested_time": verdict.suggested_time,
        "suggested": (
            [verdict.suggested_span.first_word, verdict.suggested_span.end_word]
            if verdict.suggested_span is not None
            else None
        ),
        "transcript": transcript.digest,
        "statement": _digest(statement.text),
        "approved": None,
        "override": None,
    }
    if previous and _same_ground(previous, pin):
        pin["approved"] = previous.get("approved")
        pin["override"] = previous.get("override")
    return pin


def _same_ground(previous: dict[str, Any], pin: dict[str, Any]) -> bool:
    """Whether an approval or override given for `previous` still holds for `pin`."""
    return all(previous.get(key) == pin[key] for key in ("transcript", "statement", "status"))


def _quote_pins(chapter: Chapter, transcript: Transcript | None) -> list[dict[str, Any]]:
    if transcript is None:
        return []
    words = transcript.words()
    kept = {pin.get("quote"): pin for pin in chapter.quote_pins}
    result = []
    for quote in pin_text.extract_quotes(chapter.body):
        statement = Statement(quote.text, "quote", None)
        previous = kept.get(quote.text)
        if previous is not None:
            pin = _verified(statement, previous, transcript)
        else:
            pin = _first_pin(statement, words, transcript)
        result.append({**pin, "quote": quote.text, "speaker": quote.speaker})
    return result


def _first_pin(statement: Statement, words: list[Word], transcript: Transcript) -> dict[str, Any]:
    """A pin at the best match of `statement`, or a not-found one at the start."""
    spans = pin_text.suggest(statement.text, words, kind=statement.kind, limit=1) if words else []
    if not spans:
        span = pin_text.span_of(words, 0, 1) if words else pin_text.Span(0, 0, 0.0, 0.0, 0.0)
        verdict = pin_text.Verdict(
            pin_text.Status.NOT_FOUND, 0.0, "Nothing in the transcript says this."
        )
        return pin_data(span, verdict, statement, transcript)
    span = spans[0]
    verdict = pin_text.verify(
        statement.text, words, span, kind=statement.kind, stated_time=statement.stated_time
    )
    return pin_data(span, verdict, statement, transcript)


def label(part: Part) -> str:
    """A part as a history comment or a message names it."""
    text = str(part)
    return text if len(text) <= 60 else text[:59] + "…"


def user_or_none(user: Any) -> Any:
    """The signed-in user of a service call, or None for the system or an anonymous one."""
    return user if user is not None and user.is_authenticated else None


# --- The publish gate ------------------------------------------------------------------


def publication_problems(summary: Summary) -> list[str]:
    """Why the pins of `summary` keep it from being published (empty when they do not)."""
    problems = []
    for part in parts_of(summary):
        if part.pin is not None and _blocks(part.pin, quote=False):
            problems.append(_problem(part, part.pin))
        if isinstance(part, Chapter):
            for pin in part.quote_pins:
                if _blocks(pin, quote=True):
                    problems.append(_problem(part, pin))
    return problems


def _blocks(pin: dict[str, Any], *, quote: bool) -> bool:
    if pin.get("override"):
        return False
    status = pin_text.Status(pin["status"])
    if status in BLOCKING:
        return True
    return quote and status == pin_text.Status.PARAPHRASE and not pin.get("approved")


def _problem(part: Part, pin: dict[str, Any]) -> str:
    what = f"the quotation “{pin['quote']}”" if "quote" in pin else f"“{label(part)}”"
    status = pin_text.Status(pin["status"])
    where = f" ({format_duration(int(pin['start']))})" if pin.get("start") is not None else ""
    if status == pin_text.Status.PARAPHRASE:
        return f"{what}{where} is not what was said and nobody approved it as a paraphrase."
    said = "is not in the transcript" if status == pin_text.Status.NOT_FOUND else "is contradicted"
    return f"{what}{where} {said}: {pin.get('reason', '')}".rstrip(": ")


def check_publishable(summary: Summary) -> None:
    problems = publication_problems(summary)
    if problems:
        raise ValidationError(["The transcript does not support these statements:", *problems])
