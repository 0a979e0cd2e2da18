"""Receipts: a video's transcript, and each statement of its summary pinned to the words said.

A pin lives on the part it supports (`KeyPoint.pin`, `Takeaway.pin`, `Caveat.pin`,
`Chapter.pin` for the chapter's start, `Chapter.quote_pins` for its quotations), so working
copies, publishing, revisions and restores carry pins with their parts. A pin is a dict:

    first, end        the words (indices into the transcript's timed words; end exclusive)
    start, stop       when they are said, in seconds
    said              the words themselves (at most SAID_WORDS of them), so that a page
                      listing pins shows them without reading the transcript
    status            verbatim | paraphrase | not_found | contradicted | mis_timed
    score, reason     how close, and why, in an editor's words
    suggested_time    where the words are said, when a stated time is off
    suggested         [first, end] where the words were found instead, if elsewhere
    transcript        digest of the transcript verified against
    statement         digest of the statement verified
    stated_time       the time the part states (seconds, or None) when it was verified
    approved          {"by", "at"}: an editor accepted a paraphrase
    override          {"by", "at", "note"}: a reviewer let a refused pin through
    earlier_approvals approvals and overrides given on another ground (an earlier
                      transcript), each with its transcript, statement and status: given
                      back when the pin is on that ground again
    proposal          where a new transcript says the pin's words (or else the statement)
                      when it no longer says them where the pin points: first, end, start,
                      stop, said and the verdict there, for an editor to accept or reject
    quote, speaker    (quote pins) the quotation's text, and who says it if the body names them

Statuses are recomputed whenever the statement or the transcript changes (`refresh_pins`,
on every save and before every publication), on the span an editor accepted: a new
transcript never moves a pin, it proposes where to (`verified`). Editors import
transcripts and set, approve or override pins through `pinning`; an approval or an
override holds only for the statement, transcript and status it was given for.
Publishing is refused (`publication_problems`) until every pin is verbatim or a
paraphrase a named editor approved (a key point's, a takeaway's, a caveat's, a chapter
start's or a quotation's alike); a pin not found, contradicted or mis-timed, or a
paraphrase nobody approved, is let through only by a named reviewer's override with a
note. When the video has a transcript, a statement with no pin is refused too: nothing
unverified goes live. Nothing is approved or overridden by "system".
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import F, Q

from summaries.models import Caveat, Chapter, KeyPoint, Summary, Takeaway, Transcript, Video
from summaries.text import pins as pin_text
from summaries.text.durations import format_duration
from summaries.text.transcripts import Word

from .items import Part, PartModel

PINNED_MODELS = (KeyPoint, Takeaway, Chapter, Caveat)
# The words of a chapter's body that stand for its start.
CHAPTER_OPENING_WORDS = 25
# The words of a pin it keeps as text (`said`).
SAID_WORDS = 40
# What an editor accepted when pinning: kept by every re-check.
SPAN_KEYS = ("first", "end", "start", "stop", "said")
# A proposal's verdict, beside its span.
PROPOSAL_KEYS = ("status", "score", "reason", "suggested_time", "transcript")
# Words said again within this many seconds of where they were are in the same place.
SAME_TIME_SECONDS = 1.0
# What an approval or override is given for.
GROUND_KEYS = ("transcript", "statement", "status")
# Approvals and overrides kept for other grounds (earlier transcripts), the latest.
EARLIER_APPROVALS = 8
_MARKUP = re.compile(r"\[([^\]]*)\]\([^)]*\)|[*_`>#]")
# What a message calls each kind of part.
_KIND_NAMES = {KeyPoint: "Key point", Takeaway: "Takeaway", Chapter: "Chapter", Caveat: "Caveat"}


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


def quote_statement(text: str) -> Statement:
    return Statement(text, "quote", None)


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
    waiting for review if there is one, as it goes live with them.

    One query; the segments are read only when the words are needed (`words_of`)."""
    if summary.is_working_copy:
        same_video = Q(video__summary__pk=summary.working_copy_of_id)
    elif summary.video_id is not None:
        same_video = Q(video_id=summary.video_id)
    else:
        return None
    language = summary.video_changes.get("language")
    same_language = Q(language=language) if language else Q(language=F("video__language"))
    found = {
        t.state: t for t in Transcript.objects.filter(same_video, same_language).without_text()
    }
    if summary.status == Summary.Status.PUBLISHED and not summary.is_working_copy:
        return found.get(Transcript.State.LIVE)
    return found.get(Transcript.State.DRAFT) or found.get(Transcript.State.LIVE)


# The words of the last few transcripts read, by digest: a save verifies against the same
# objects again, which is what the text layer's index of a transcript is kept for.
_WORDS: OrderedDict[str, list[Word]] = OrderedDict()
_WORDS_KEPT = 4
_WORDS_LOCK = threading.Lock()


def words_of(transcript: Transcript) -> list[Word]:
    """The transcript's timed words, read from its segments once per digest."""
    with _WORDS_LOCK:
        words = _WORDS.get(transcript.digest)
        if words is not None:
            _WORDS.move_to_end(transcript.digest)
    if words is None:
        words = transcript.words()
        with _WORDS_LOCK:
            _WORDS[transcript.digest] = words
            while len(_WORDS) > _WORDS_KEPT:
                _WORDS.popitem(last=False)
    return words


def publish_transcripts(*, video: Video) -> None:
    """Make the video's transcripts waiting for review the ones readers see (called by
    the publishing services, in their transaction)."""
    drafts = list(
        Transcript.objects.filter(video=video, state=Transcript.State.DRAFT).only("language")
    )
    for draft in drafts:
        Transcript.objects.filter(
            video=video, language=draft.language, state=Transcript.State.LIVE
        ).delete()
        draft.state = Transcript.State.LIVE
        draft.save(update_fields=["state", "updated_at"])


def discard_transcripts(*, video: Video) -> int:
    """Drop the video's transcripts waiting for review (their changes were discarded; the
    revisions of each import stay in history). Returns how many were dropped."""
    deleted, _ = Transcript.objects.filter(video=video, state=Transcript.State.DRAFT).delete()
    return deleted


# --- Pins ------------------------------------------------------------------------------


def parts_of(summary: Summary) -> Iterator[Part]:
    for model in PINNED_MODELS:
        yield from model.objects.filter(summary=summary).order_by("position")


def refresh_pins(*, summary: Summary) -> int:
    """Verify again every pin of `summary` whose statement, stated time or transcript
    changed since it was verified; quotations of chapter bodies are pinned where they are
    found (added, kept or dropped with the quotations). Returns how many parts changed.

    Without a transcript, nothing is verified and pins keep their last verdicts. The
    transcript's words are read only when a pin needs verifying."""
    transcript = transcript_for(summary)
    if transcript is None:
        return 0
    changed: dict[PartModel, list[Part]] = defaultdict(list)
    for part in parts_of(summary):
        fields = _refreshed(part, transcript)
        for name, value in fields.items():
            setattr(part, name, value)
        if fields:
            changed[type(part)].append(part)
    for model, parts in changed.items():
        # One UPDATE a kind: a new transcript changes every pin of a long summary.
        manager: Any = model.objects  # parts of that model only
        manager.bulk_update(parts, ["pin", "quote_pins"] if model is Chapter else ["pin"])
    return sum(len(parts) for parts in changed.values())


def _refreshed(part: Part, transcript: Transcript) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    pin = part.pin
    if pin is not None:
        statement = statement_of(part)
        if not is_fresh(pin, statement, transcript):
            fields["pin"] = verified(statement, pin, transcript)
    if isinstance(part, Chapter):
        quotes = _quote_pins(part, transcript)
        if quotes != part.quote_pins:
            fields["quote_pins"] = quotes
    return fields


def is_fresh(pin: dict[str, Any], statement: Statement, transcript: Transcript) -> bool:
    """Whether `pin` was verified for this statement, said at this time, on this
    transcript (verifying it again would give the same verdict)."""
    return (
        pin.get("transcript") == transcript.digest
        and pin.get("statement") == _digest(statement.text)
        and "stated_time" in pin
        and pin["stated_time"] == statement.stated_time
    )


def verified(statement: Statement, pin: dict[str, Any], transcript: Transcript) -> dict[str, Any]:
    """`pin` verified again where it points, on `transcript`.

    Its span (first, end, start, stop, said) is the one an editor accepted and is kept as
    it is: a re-check never moves a pin. Where the transcript no longer says those words
    there (cut short, edited, shifted), the verdict is the one these words get now (not
    found when the transcript ends before them) and `proposal` holds where the words, or
    else the statement, are found now, for an editor to accept or reject. An approval or
    override holds for the statement, transcript and verdict it was given for (`_grounds`):
    a transcript imported again with the same words gets the pin's verdict and approval
    back."""
    words = words_of(transcript)
    first, end = int(pin["first"]), int(pin["end"])
    if 0 <= first < end <= len(words):
        span = pin_text.span_of(words, first, end)
        verdict = pin_text.verify(
            statement.text, words, span, kind=statement.kind, stated_time=statement.stated_time
        )
        same = _same_words(pin, transcript, span)
    else:
        span = pin_text.Span(0, 0, 0.0, 0.0, 0.0)
        verdict = pin_text.Verdict(pin_text.Status.NOT_FOUND, 0.0, _beyond(words, pin))
        same = False
    checked = pin_data(span, verdict, statement, transcript, previous=pin)
    checked.update({key: pin[key] for key in SPAN_KEYS if key in pin})
    checked["proposal"] = None if same else _proposal(statement, pin, transcript)
    return checked


def _same_words(pin: dict[str, Any], transcript: Transcript, span: pin_text.Span) -> bool:
    """Whether `span` of `transcript` says what the pin's words said, within a second of
    when they were said."""
    if "said" not in pin:
        return True
    return (
        _said(transcript, span) == pin["said"]
        and abs(span.start - float(pin.get("start") or 0.0)) <= SAME_TIME_SECONDS
        and abs(span.end - float(pin.get("stop") or 0.0)) <= SAME_TIME_SECONDS
    )


def _beyond(words: list[Word], pin: dict[str, Any]) -> str:
    if not words:
        return "the transcript is empty"
    ends = format_duration(int(words[-1].end))
    said = format_duration(int(float(pin.get("start") or 0.0)))
    return f"the transcript ends at {ends}, before the words pinned (said at {said})"


def _proposal(
    statement: Statement, pin: dict[str, Any], transcript: Transcript
) -> dict[str, Any] | None:
    """Where the pin's words are said in `transcript` now, else where the statement is
    best found, with its verdict there; None when that is where the pin is, or nowhere."""
    words = words_of(transcript)
    span = _found_again(pin, transcript) or next(
        iter(
            pin_text.suggest(statement.text, words, kind=statement.kind, limit=1) if words else []
        ),
        None,
    )
    if span is None or (span.first_word, span.end_word) == (pin.get("first"), pin.get("end")):
        return None
    verdict = pin_text.verify(
        statement.text, words, span, kind=statement.kind, stated_time=statement.stated_time
    )
    found = pin_data(span, verdict, statement, transcript)
    return {key: found[key] for key in (*SPAN_KEYS, *PROPOSAL_KEYS)}


def _found_again(pin: dict[str, Any], transcript: Transcript) -> pin_text.Span | None:
    """The span of `transcript` saying the pin's words (as `said` keeps them), the one
    nearest where they were said; None when they are said nowhere."""
    said = str(pin.get("said") or "").removesuffix(" …").split()
    length = int(pin.get("end", 0)) - int(pin.get("first", 0))
    if not said or length < len(said):
        return None
    words = words_of(transcript)
    texts = [word.text for word in words]
    starts = [
        at
        for at in _positions(transcript).get(said[0], ())
        if texts[at : at + len(said)] == said and at + length <= len(words)
    ]
    if not starts:
        return None
    was = float(pin.get("start") or 0.0)
    at = min(starts, key=lambda first: abs(words[first].start - was))
    return pin_text.span_of(words, at, at + length)


# Where each word is said in the last few transcripts read, by digest.
_POSITIONS: OrderedDict[str, dict[str, list[int]]] = OrderedDict()


def _positions(transcript: Transcript) -> dict[str, list[int]]:
    with _WORDS_LOCK:
        positions = _POSITIONS.get(transcript.digest)
    if positions is None:
        positions = defaultdict(list)
        for at, word in enumerate(words_of(transcript)):
            positions[word.text].append(at)
        with _WORDS_LOCK:
            _POSITIONS[transcript.digest] = positions
            while len(_POSITIONS) > _WORDS_KEPT:
                _POSITIONS.popitem(last=False)
    return positions


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
        "said": _said(transcript, span),
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
        "stated_time": statement.stated_time,
        "approved": None,
        "override": None,
        "proposal": None,
        "earlier_approvals": [],
    }
    if previous:
        _grounds(previous, pin)
    return pin


def _said(transcript: Transcript, span: pin_text.Span) -> str:
    words = words_of(transcript)[span.first_word : span.end_word]
    text = " ".join(word.text for word in words[:SAID_WORDS])
    return text + " …" if len(words) > SAID_WORDS else text


def _same_ground(previous: dict[str, Any], pin: dict[str, Any]) -> bool:
    """Whether an approval or override given for `previous` still holds for `pin`."""
    return all(previous.get(key) == pin[key] for key in GROUND_KEYS)


def _grounds(previous: dict[str, Any], pin: dict[str, Any]) -> None:
    """Give `pin` the approval or override given for its statement, transcript and
    verdict, if one was (on the pin before, or earlier: `earlier_approvals`); keep the
    others, a few, for when the pin is on their ground again."""
    given = [*previous.get("earlier_approvals", ())]
    if previous.get("approved") or previous.get("override"):
        given.append(
            {
                **{key: previous.get(key) for key in GROUND_KEYS},
                "approved": previous.get("approved"),
                "override": previous.get("override"),
            }
        )
    held = next((ground for ground in reversed(given) if _same_ground(ground, pin)), None)
    if held is not None:
        pin["approved"], pin["override"] = held.get("approved"), held.get("override")
    others = [ground for ground in given if not _same_ground(ground, pin)]
    pin["earlier_approvals"] = others[-EARLIER_APPROVALS:]


def _quote_pins(chapter: Chapter, transcript: Transcript) -> list[dict[str, Any]]:
    """The pins of the chapter body's quotations, in order: a quotation pinned before keeps
    its pin (verified again if the transcript changed), a new or edited one is pinned
    where it is best found."""
    kept = {pin.get("quote"): pin for pin in chapter.quote_pins}
    result = []
    for quote in pin_text.extract_quotes(chapter.body):
        statement = quote_statement(quote.text)
        previous = kept.get(quote.text)
        if previous is not None and is_fresh(previous, statement, transcript):
            pin = previous
        elif previous is not None:
            pin = verified(statement, previous, transcript)
        else:
            pin = first_pin(statement, transcript)
        result.append({**pin, "quote": quote.text, "speaker": quote.speaker})
    return result


def first_pin(statement: Statement, transcript: Transcript) -> dict[str, Any]:
    """A pin at the best match of `statement`, or a not-found one at the start."""
    words = words_of(transcript)
    spans = pin_text.suggest(statement.text, words, kind=statement.kind, limit=1) if words else []
    if not spans:
        span = pin_text.span_of(words, 0, 1) if words else pin_text.Span(0, 0, 0.0, 0.0, 0.0)
        verdict = pin_text.Verdict(
            pin_text.Status.NOT_FOUND, 0.0, "nothing in the transcript says this"
        )
        return pin_data(span, verdict, statement, transcript)
    span = spans[0]
    verdict = pin_text.verify(
        statement.text, words, span, kind=statement.kind, stated_time=statement.stated_time
    )
    return pin_data(span, verdict, statement, transcript)


def label(part: Part) -> str:
    """A part as a history comment or a message names it."""
    text = " ".join(str(part).split())
    return text if len(text) <= 60 else text[:59] + "…"


def user_or_none(user: Any) -> Any:
    """The signed-in user of a service call, or None for the system or an anonymous one."""
    return user if user is not None and user.is_authenticated else None


# --- The publish gate ------------------------------------------------------------------


# What the API calls the list each kind of part is in, and a part of each kind.
_FIELDS = {KeyPoint: "key_points", Takeaway: "takeaways", Chapter: "chapters", Caveat: "caveats"}
_KINDS = {KeyPoint: "key_point", Takeaway: "takeaway", Chapter: "chapter", Caveat: "caveat"}
# The name nothing but a person may approve or override under.
_NOBODY = {"", "system"}


@dataclass(frozen=True)
class Problem:
    """One statement that keeps its summary from being published: the part, which of its
    quotations (None: the part's own statement) and why, in an editor's words."""

    part: Part
    quote: int | None
    message: str

    @property
    def kind(self) -> str:
        """ "key_point", "takeaway", "chapter" or "caveat"."""
        return _KINDS[type(self.part)]

    @property
    def field(self) -> str:
        """The summary's list the part is in ("key_points")."""
        return _FIELDS[type(self.part)]

    @property
    def part_id(self) -> int:
        return int(self.part.pk)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.part_id, "quote": self.quote, "message": self.message}

    def __str__(self) -> str:
        return self.message


class PublicationRefused(ValidationError):
    """The publish gate's refusal: a ValidationError naming, under each list of parts
    ("key_points", "chapters"…), the statements that keep the summary from being
    published; `problems` has them as values, for a face to link each to its statement."""

    def __init__(self, problems: list[Problem]) -> None:
        by_field: dict[str, list[str]] = defaultdict(list)
        for problem in problems:
            by_field[problem.field].append(problem.message)
        super().__init__(dict(by_field))
        self.problems = problems

    def __reduce__(self) -> tuple[type[PublicationRefused], tuple[list[Problem]]]:
        # Copied or pickled from its problems, as it is made.
        return (type(self), (self.problems,))


def publication_problems(summary: Summary) -> list[Problem]:
    """Why the pins of `summary`, as stored, keep it from being published (empty when they
    do not): one problem per statement, naming it, when it is said and why.

    Each pin is verbatim, a paraphrase a named editor approved, or overridden by a named
    reviewer with a note (`blocks`). When the summary's video has a transcript
    (`transcript_for`), nothing unverified goes live: every key point, takeaway, caveat,
    chapter start and quotation without a pin is a problem too. Without a transcript
    there is nothing to pin to, and only the pins there are count."""
    pinnable = transcript_for(summary) is not None
    problems = []
    for part in parts_of(summary):
        if part.pin is not None and blocks(part.pin):
            problems.append(Problem(part, None, _problem(part, part.pin)))
        elif part.pin is None and pinnable:
            problems.append(Problem(part, None, _unpinned(part)))
        if isinstance(part, Chapter):
            problems += _quote_problems(part, pinnable)
    return problems


def _quote_problems(chapter: Chapter, pinnable: bool) -> list[Problem]:
    """The problems of a chapter's quotations: each pin that blocks, and (`pinnable`) each
    quotation of its body with no pin, numbered as the body has them."""
    problems = [
        Problem(chapter, index, _problem(chapter, pin))
        for index, pin in enumerate(chapter.quote_pins)
        if blocks(pin)
    ]
    if pinnable:
        pinned = {pin.get("quote") for pin in chapter.quote_pins}
        for index, quote in enumerate(pin_text.extract_quotes(chapter.body)):
            if quote.text not in pinned:
                problems.append(Problem(chapter, index, _unpinned(chapter, quote.text)))
    return problems


def blocks(pin: dict[str, Any]) -> bool:
    """Whether `pin` keeps its summary from being published: anything but a verbatim pin
    or a paraphrase a named editor approved (`is_verified`), unless a named reviewer
    overrode it with a note."""
    return not is_verified(pin) and not is_overridden(pin)


def is_verified(pin: dict[str, Any]) -> bool:
    """Whether `pin` shows its statement said: verbatim, or a paraphrase a named editor
    approved. The gate publishes these (`blocks`) and the reader shows when they are said
    (`summaries.reader.receipts.said_at`); an approval by "system" or by nobody is none."""
    status = pin_text.Status(pin["status"])
    if status == pin_text.Status.VERBATIM:
        return True
    return status == pin_text.Status.PARAPHRASE and is_approved(pin)


def is_approved(pin: dict[str, Any]) -> bool:
    """Whether a named editor approved the pin (never "system", never nobody)."""
    approved = pin.get("approved")
    return isinstance(approved, dict) and _named(approved.get("by"))


def is_overridden(pin: dict[str, Any]) -> bool:
    """Whether a named reviewer overrode the pin, with a note."""
    override = pin.get("override")
    return (
        isinstance(override, dict)
        and _named(override.get("by"))
        and bool(str(override.get("note") or "").strip())
    )


def _named(by: Any) -> bool:
    return isinstance(by, str) and by.strip().lower() not in _NOBODY


def _problem(part: Part, pin: dict[str, Any]) -> str:
    if "quote" in pin:
        what = f"The quotation “{pin['quote']}” in chapter “{label(part)}”"
    else:
        what = f"{_KIND_NAMES[type(part)]} “{label(part)}”"
    when = _time_of(part, pin)
    where = f" (at {format_duration(int(when))})" if when is not None else ""
    status = pin_text.Status(pin["status"])
    reason = str(pin.get("reason") or "").rstrip(".")
    if status == pin_text.Status.PARAPHRASE:
        said = "is not word for word and no editor approved it as a paraphrase"
    elif status == pin_text.Status.NOT_FOUND:
        said = "is not in the transcript"
    elif status == pin_text.Status.MIS_TIMED:
        said = "is not said when the summary says"
    else:
        said = "is contradicted by the transcript"
    return f"{what}{where} {said}" + (f": {reason}." if reason else ".")


def _unpinned(part: Part, quote: str | None = None) -> str:
    if quote is not None:
        what = f"The quotation “{quote}” in chapter “{label(part)}”"
        stated = _seconds(part.start_time) if isinstance(part, Chapter) else None
    else:
        what = f"{_KIND_NAMES[type(part)]} “{label(part)}”"
        stated = statement_of(part).stated_time
    where = f" (at {format_duration(int(stated))})" if stated is not None else ""
    return f"{what}{where} is not pinned to the transcript yet: pin it to the words that say it."


def _time_of(part: Part, pin: dict[str, Any]) -> float | None:
    """When the statement says it is said, else where its words are pinned (a quotation
    nowhere to be found: its chapter's start)."""
    if "quote" not in pin:
        stated = statement_of(part).stated_time
        if stated is not None:
            return stated
    if pin.get("status") != pin_text.Status.NOT_FOUND.value and pin.get("start") is not None:
        return float(pin["start"])
    if isinstance(part, Chapter) and part.start_time is not None:
        return float(part.start_time)
    return None


def check_publishable(summary: Summary) -> None:
    """Verify the pins of `summary` against its transcript as it is now, then raise
    PublicationRefused (a ValidationError) naming each statement that keeps it from being
    published (`publication_problems`)."""
    refresh_pins(summary=summary)
    problems = publication_problems(summary)
    if problems:
        raise PublicationRefused(problems)
