"""Suggested chapters: where a video's transcript changes subject, offered as the chapters
of a summary that has none yet.

`chapter_suggestions` reads the transcript an edit of the summary is pinned against
(`receipts.transcript_for`: for a published summary, the one its unpublished changes go
live with, draft before live) and proposes where chapters could start, each with a title
made of words said often there and seldom elsewhere (`text.pins.suggest_chapters`). The
editor may change titles and times and drop some; `accept_chapter_suggestions` writes what
was kept through `save.save_summary`, so the usual rules hold: the gate, a published summary
changed only through its working copy, one revision, pins verified. Each chapter's body is
the words said from its start to the next chapter's (the transcript an editor then edits),
and its start is pinned to them.
"""

from __future__ import annotations

import math
import re
import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from summaries.models import Chapter, Summary, Transcript
from summaries.models.base import max_length
from summaries.text import pins as pin_text
from summaries.text.durations import format_duration
from summaries.text.markdown import MAX_SOURCE_CHARS
from summaries.text.transcripts import Word

from . import copies, gate, receipts, video_changes
from .save import save_summary

# Chapters start at least this many seconds apart, and at most this many are suggested.
MIN_LENGTH = 120.0
MAX_SUGGESTED = 20
# How many chapters an editor may keep at once (the API's cap on a summary's chapters).
MAX_CHOSEN = 200
TITLE_MAX = max_length(Chapter, "title")
# The words shown after a suggested start, so that an editor sees what is said there.
SAID_WORDS = 20
# A pause this long (seconds) between two words starts a new paragraph of a chapter body.
PARAGRAPH_PAUSE = 1.0
# Characters that Markdown would read as markup (links, emphasis, headings, HTML), escaped
# so that a body shows the words as said.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>#|~])")
# Where a field of the list of kept chapters is named in errors: "chapters[2].title".
FIELD = "chapters"


@dataclass(frozen=True)
class SuggestedChapter:
    start: int  # seconds into the video
    title: str
    said: str  # the first words said from there

    @property
    def time(self) -> str:
        return format_duration(self.start)


@dataclass(frozen=True)
class Accepted:
    summary: Summary  # what was written to: the summary, or its working copy
    chapters: list[Chapter]


# --- Suggesting -------------------------------------------------------------------------


def _edited(summary: Summary) -> tuple[Summary, Summary]:
    """(the summary whose chapters an edit of `summary` changes, the one whose transcript
    it is pinned against): a published summary's working copy, or for one without changes
    yet, the summary itself and a copy as it would be made (draft before live)."""
    if not copies.needs_working_copy(summary):
        return summary, summary
    copy = copies.working_copy_of(summary)
    if copy is not None:
        return copy, copy
    return summary, Summary(working_copy_of=summary)


def has_chapters(summary: Summary) -> bool:
    """Whether the summary, as an editor works on it, has chapters."""
    edited, _ = _edited(summary)
    return Chapter.objects.filter(summary=edited).exists()


def chapter_suggestions(summary: Summary) -> list[SuggestedChapter]:
    """Where chapters of `summary` could start, in time order, each with a title and the
    first words said there. Empty when the summary (its working copy, for a published one)
    has chapters already or its video has no transcript to read them from."""
    edited, pinned = _edited(summary)
    if Chapter.objects.filter(summary=edited).exists():
        return []
    transcript = receipts.transcript_for(pinned)
    if transcript is None:
        return []
    return list(_suggested(transcript))


# The suggestions of the last few transcripts read, by digest: the summary page shows them
# on every load until chapters are added, and a long transcript takes a fraction of a second.
_SUGGESTED: OrderedDict[str, tuple[SuggestedChapter, ...]] = OrderedDict()
_SUGGESTED_KEPT = 8
_SUGGESTED_LOCK = threading.Lock()


def _suggested(transcript: Transcript) -> tuple[SuggestedChapter, ...]:
    with _SUGGESTED_LOCK:
        found = _SUGGESTED.get(transcript.digest)
        if found is not None:
            _SUGGESTED.move_to_end(transcript.digest)
            return found
    words = receipts.words_of(transcript)
    segments = transcript.segment_list()
    found = tuple(
        _suggestion(suggested, words)
        for suggested in pin_text.suggest_chapters(
            segments, min_length=MIN_LENGTH, max_chapters=MAX_SUGGESTED
        )
    )
    with _SUGGESTED_LOCK:
        _SUGGESTED[transcript.digest] = found
        while len(_SUGGESTED) > _SUGGESTED_KEPT:
            _SUGGESTED.popitem(last=False)
    return found


def _suggestion(suggested: pin_text.ChapterSuggestion, words: list[Word]) -> SuggestedChapter:
    start = int(suggested.start)
    title = " ".join(suggested.title.split())[:TITLE_MAX] or f"From {format_duration(start)}"
    first = _first_word(words, start)
    said = words[first : first + SAID_WORDS]
    text = " ".join(word.text for word in said)
    if first + SAID_WORDS < len(words):
        text += " …"
    return SuggestedChapter(start=start, title=title, said=text)


def _first_word(words: list[Word], start: float) -> int:
    """The index of the first word said at or after `start` seconds."""
    return bisect_left(words, start, key=lambda word: word.start)


# --- Accepting --------------------------------------------------------------------------


@transaction.atomic
def accept_chapter_suggestions(
    *, summary: Summary, user: gate.Actor, chosen: Sequence[tuple[Any, Any]]
) -> Accepted:
    """Add the chapters an editor kept, `chosen` as (start in seconds, title) pairs, to a
    summary that has none: each chapter's body is the words said from its start to the
    next chosen start, its start pinned to them.

    Written through `save_summary`: on a published summary to its working copy (made now if
    needed), which readers do not see until a reviewer publishes it; one revision ("Added
    3 suggested chapters"); pins and quotations verified; cached pages made stale for a
    draft. Raises PermissionDenied when `user` may not change summaries, and
    ValidationError, writing nothing, when the summary has chapters already (an accept sent
    twice adds them once), its video has no transcript, or a chosen chapter is wrong: keys
    `chapters[i].start` (not a time, outside the transcript or after the video's end, the
    same as another's, nothing said before the next) and `chapters[i].title` (empty, too
    long), `chapters` for the list as a whole.
    """
    gate.require(user, gate.CHANGE, "change summaries")
    # One accept at a time: the second finds the first one's chapters and adds none.
    original = Summary.objects.select_for_update(no_key=True).get(
        pk=summary.working_copy_of_id or summary.pk
    )
    edited, pinned = _edited(original)
    if Chapter.objects.filter(summary=edited).exists():
        raise ValidationError(
            {FIELD: "This summary has chapters already: edit them on its page instead."}
        )
    transcript = receipts.transcript_for(pinned)
    if transcript is None:
        raise ValidationError({FIELD: "This video has no transcript to take chapters from."})
    chapters = _chapters(chosen, transcript, video_changes.duration_of(edited))
    target, _ids, _made = copies.edit_target(summary=original, user=user)
    if target.pk != original.pk:
        target = Summary.objects.select_for_update().get(pk=target.pk)
    else:
        target = original
    count = len(chapters)
    save_summary(
        summary=target,
        parts={Chapter: chapters},
        user=user,
        comment=f"Added {count} suggested chapter{'s' if count != 1 else ''}",
    )
    return Accepted(summary=target, chapters=chapters)


def _chapters(
    chosen: Sequence[tuple[Any, Any]], transcript: Transcript, duration: int | None
) -> list[Chapter]:
    """Unsaved chapters for the chosen (start, title) pairs, in time order, with their
    bodies and pins; ValidationError naming each wrong field (by its place in `chosen`)."""
    errors: dict[str, list[str]] = {}
    if not chosen:
        raise ValidationError({FIELD: "Keep at least one chapter."})
    if len(chosen) > MAX_CHOSEN:
        raise ValidationError({FIELD: f"Keep at most {MAX_CHOSEN} chapters."})
    words = receipts.words_of(transcript)
    if not words:
        raise ValidationError({FIELD: "The transcript has no words to take chapters from."})
    starts: dict[int, int] = {}  # start -> index in `chosen`
    titles: dict[int, str] = {}
    for index, (start, title) in enumerate(chosen):
        seconds = _start_problem(start, words, duration, starts, errors, index)
        if seconds is not None:
            starts[seconds] = index
        text = _title(title, errors, index)
        if text is not None:
            titles[index] = text
    ordered = sorted(starts)
    chapters = []
    for number, seconds in enumerate(ordered):
        index = starts[seconds]
        following = ordered[number + 1] if number + 1 < len(ordered) else None
        chapter = _chapter(seconds, following, titles.get(index, "?"), words, transcript)
        if chapter is None:
            _add(errors, index, "start", _nothing_said(seconds, following))
            continue
        chapter.position = number + 1
        _clean(chapter, errors, index)
        chapters.append(chapter)
    if errors:
        raise ValidationError(errors)
    return chapters


def _start_problem(
    start: Any,
    words: list[Word],
    duration: int | None,
    taken: dict[int, int],
    errors: dict[str, list[str]],
    index: int,
) -> int | None:
    """The chapter's start in whole seconds, or None with its error recorded."""
    if isinstance(start, bool) or not isinstance(start, int | float) or not math.isfinite(start):
        _add(errors, index, "start", "Give the chapter's start in seconds.")
        return None
    seconds = int(start)
    first, last = int(words[0].start), words[-1].start
    if start < 0 or seconds < first or seconds > last:
        _add(
            errors,
            index,
            "start",
            f"{_clock(start)} is not in the transcript, which runs from "
            f"{format_duration(first)} to {format_duration(int(last))}.",
        )
        return None
    if duration and seconds >= duration:
        _add(
            errors,
            index,
            "start",
            f"{format_duration(seconds)} is after the video ends ({format_duration(duration)}).",
        )
        return None
    if seconds in taken:
        _add(
            errors,
            index,
            "start",
            f"Chapter {taken[seconds] + 1} starts at {format_duration(seconds)} too: "
            "give each chapter its own time.",
        )
        return None
    return seconds


def _clock(start: float) -> str:
    return format_duration(int(start)) if start >= 0 else f"{start:g} seconds"


def _title(title: Any, errors: dict[str, list[str]], index: int) -> str | None:
    text = " ".join(title.split()) if isinstance(title, str) else ""
    if not text:
        _add(errors, index, "title", "Give the chapter a title.")
        return None
    if len(text) > TITLE_MAX:
        _add(
            errors,
            index,
            "title",
            f"A title is at most {TITLE_MAX} characters; this one has {len(text)}.",
        )
        return None
    return text


def _nothing_said(start: int, following: int | None) -> str:
    until = f"{format_duration(following)}" if following is not None else "the end"
    return (
        f"Nothing is said between {format_duration(start)} and {until}: move this "
        "chapter's start or leave it out."
    )


def _add(errors: dict[str, list[str]], index: int, name: str, message: str) -> None:
    errors.setdefault(f"{FIELD}[{index}].{name}", []).append(message)


def _chapter(
    start: int, following: int | None, title: str, words: list[Word], transcript: Transcript
) -> Chapter | None:
    """An unsaved chapter from `start` to `following` (seconds), its body the words said
    then and its start pinned to them; None when nothing is said then."""
    first = _first_word(words, start)
    end = _first_word(words, following) if following is not None else len(words)
    if first >= end:
        return None
    chapter = Chapter(title=title, start_time=start, body=body_of(words[first:end]))
    statement = receipts.statement_of(chapter)
    span = pin_text.span_of(words, first, min(end, first + len(statement.text.split())))
    verdict = pin_text.verify(
        statement.text, words, span, kind=statement.kind, stated_time=statement.stated_time
    )
    chapter.pin = receipts.pin_data(span, verdict, statement, transcript)
    return chapter


def body_of(words: Sequence[Word]) -> str:
    """The words as Markdown: a paragraph wherever the speaker pauses, markup characters
    escaped, cut at MAX_SOURCE_CHARS."""
    paragraphs: list[list[str]] = [[]]
    previous: Word | None = None
    for word in words:
        if previous is not None and word.start - previous.end >= PARAGRAPH_PAUSE:
            paragraphs.append([])
        paragraphs[-1].append(_MARKDOWN.sub(r"\\\1", word.text))
        previous = word
    body = "\n\n".join(" ".join(paragraph) for paragraph in paragraphs if paragraph)
    if len(body) > MAX_SOURCE_CHARS:
        body = body[: MAX_SOURCE_CHARS - 2].rsplit(None, 1)[0] + " …"
    return body


def _clean(chapter: Chapter, errors: dict[str, list[str]], index: int) -> None:
    """The model's own rules (visible text, lengths), named as the chosen chapter's."""
    try:
        chapter.full_clean(
            exclude=["summary", "position"], validate_unique=False, validate_constraints=False
        )
    except ValidationError as error:
        for name, messages in error.message_dict.items():
            # The body and the start time follow from the chosen start.
            shown = "title" if name == "title" else "start"
            for message in messages:
                _add(errors, index, shown, message)
