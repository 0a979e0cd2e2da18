"""What editors and reviewers do with receipts: import a transcript, pin a statement to
the words said (accept, move or reject a suggestion), approve a paraphrase, override a
refused pin with a note. Each checks its user's permission (`gate`) and records a revision;
pins and the publish gate themselves are in `receipts`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import reversion
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from summaries.models import Summary, Transcript, Video, segments_digest
from summaries.text import pins as pin_text
from summaries.text.transcripts import TranscriptError, parse_transcript

from . import copies, gate
from .items import Part
from .receipts import (
    label,
    parts_of,
    pin_data,
    refresh_pins,
    statement_of,
    transcript_for,
    user_or_none,
)


@dataclass(frozen=True)
class Imported:
    transcript: Transcript
    warnings: tuple[str, ...]
    summary: Summary | None  # the draft or working copy whose pins were refreshed


@transaction.atomic
def import_transcript(
    *,
    video: Video,
    data: bytes,
    user: gate.Actor,
    filename: str = "",
    language: str | None = None,
) -> Imported:
    """Attach a transcript file to `video`, as the one waiting for review.

    Parses the file (ValidationError naming the line or cue when it cannot be read; the
    `code` "too_large" when it is over TRANSCRIPT_MAX_BYTES), replaces the video's
    transcript waiting for review in that language and records a revision of it. If the
    video's summary is published, the change goes to its working copy (made if needed) so
    that a reviewer publishes it; the pins of the draft or copy are verified again.
    """
    gate.require(user, gate.CHANGE, "change summaries")
    parsed = _parse(data, filename, video.duration_seconds)
    segments = [segment.as_json() for segment in parsed.segments]
    with reversion.create_revision(manage_manually=True):
        transcript, _ = Transcript.objects.update_or_create(
            video=video,
            language=language or video.language,
            state=Transcript.State.DRAFT,
            defaults={
                "format": parsed.format,
                "encoding": parsed.encoding,
                "original_name": filename[-255:],
                "original": data,
                "segments": segments,
                "word_count": sum(len(s.text.split()) for s in parsed.segments),
                "ends_at": max((s.end for s in parsed.segments), default=0.0),
                "warnings": list(parsed.warnings),
                "digest": segments_digest(segments),
                "updated_by": user_or_none(user),
            },
        )
        reversion.add_to_revision(transcript)
        if user_or_none(user) is not None:
            reversion.setuser_or_none(user)
        reversion.set_comment(f"Imported transcript {filename}".strip())
    target = _summary_waiting_for(video, user)
    if target is not None:
        refresh_pins(summary=target)
    return Imported(transcript, parsed.warnings, target)


def _parse(data: bytes, filename: str, duration: int | None) -> Any:
    limit = settings.TRANSCRIPT_MAX_BYTES
    try:
        return parse_transcript(
            data, filename=filename, duration=float(duration or 0) or None, max_bytes=limit
        )
    except TranscriptError as error:
        code = "too_large" if len(data) > limit else "invalid"
        raise ValidationError(str(error), code=code) from error


def _summary_waiting_for(video: Video, user: gate.Actor) -> Summary | None:
    summary = Summary.objects.filter(video=video).first()
    if summary is None:
        return None
    target, _, _ = copies.edit_target(summary=summary, user=user)
    return target


def suggestions(*, summary: Summary, part: Part, limit: int = 3) -> list[pin_text.Span]:
    """The best-matching spans of the transcript for what `part` says."""
    transcript = transcript_for(summary)
    if transcript is None or not transcript.words():
        return []
    statement = statement_of(part)
    return pin_text.suggest(statement.text, transcript.words(), kind=statement.kind, limit=limit)


def _editable(summary: Summary, part: Part) -> None:
    if part.summary_id != summary.pk:
        raise ValidationError("That part belongs to another summary.")
    if copies.needs_working_copy(summary):
        raise ValidationError("A published summary is changed only through its changes.")


@transaction.atomic
def set_pin(
    *, summary: Summary, part: Part, first: int | None, end: int | None, user: gate.Actor
) -> dict[str, Any] | None:
    """Pin `part` to words `first`..`end` of the transcript (accept or move a suggestion),
    or remove its pin (`first` None: reject). Returns the pin as verified."""
    gate.require(user, gate.CHANGE, "change summaries")
    _editable(summary, part)
    if first is None or end is None:
        pin = None
    else:
        transcript = transcript_for(summary)
        if transcript is None:
            raise ValidationError("This video has no transcript to pin to.")
        words = transcript.words()
        if not 0 <= first < end <= len(words):
            raise ValidationError(f"Words {first}–{end} are not in the transcript.")
        span = pin_text.span_of(words, first, end)
        statement = statement_of(part)
        verdict = pin_text.verify(
            statement.text, words, span, kind=statement.kind, stated_time=statement.stated_time
        )
        pin = pin_data(span, verdict, statement, transcript)
    _save_pin(summary, part, pin, user, "Pinned" if pin else "Removed the pin of")
    return pin


@transaction.atomic
def approve_pin(*, summary: Summary, part: Part, user: gate.Actor) -> dict[str, Any]:
    """An editor accepts a paraphrase as saying what the transcript says."""
    gate.require(user, gate.CHANGE, "change summaries")
    _editable(summary, part)
    pin = _current_pin(part)
    if pin["status"] != pin_text.Status.PARAPHRASE.value:
        raise ValidationError("Only a paraphrase is approved; this pin is " + pin["status"] + ".")
    pin = {**pin, "approved": _by(user)}
    _save_pin(summary, part, pin, user, "Approved the paraphrase of")
    return pin


@transaction.atomic
def override_pin(*, summary: Summary, part: Part, note: str, user: gate.Actor) -> dict[str, Any]:
    """A reviewer lets a pin that is not found or contradicted through, with a note that
    History shows."""
    gate.require(user, gate.PUBLISH, "override pins")
    _editable(summary, part)
    note = note.strip()
    if not note:
        raise ValidationError({"note": "Say why this statement may be published as it is."})
    pin = {**_current_pin(part), "override": {**_by(user), "note": note}}
    _save_pin(summary, part, pin, user, f"Overrode the pin ({note}) of")
    return pin


def _current_pin(part: Part) -> dict[str, Any]:
    if part.pin is None:
        raise ValidationError("This statement is not pinned.")
    return dict(part.pin)


def _by(user: gate.Actor) -> dict[str, Any]:
    person = user_or_none(user)
    name = person.get_username() if person is not None else "system"
    return {"by": name, "at": timezone.now().isoformat()}


def _save_pin(
    summary: Summary, part: Part, pin: dict[str, Any] | None, user: gate.Actor, doing: str
) -> None:
    type(part).objects.filter(pk=part.pk).update(pin=pin)
    part.pin = pin
    with reversion.create_revision(manage_manually=True):
        reversion.add_to_revision(summary)
        for item in parts_of(summary):
            reversion.add_to_revision(item)
        if user_or_none(user) is not None:
            reversion.setuser_or_none(user)
        reversion.set_comment(f"{doing} “{label(part)}”")
