"""What editors and reviewers do with receipts: import a transcript, pin a statement to
the words said (accept, move or reject a suggestion), approve a paraphrase, override a
refused pin with a note. Each checks its user's permission (`gate`) and records a revision;
pins and the publish gate themselves are in `receipts`.

A quotation of a chapter body is addressed by `quote`, its index in the chapter's
`quote_pins`; without it a service acts on the part's own pin. Any change to the pins of
working changes scheduled to go live takes them off the schedule: what goes live is what a
reviewer saw.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import reversion
from django.conf import settings
from django.core import serializers
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from reversion import revisions
from reversion.models import Revision, Version

from summaries.models import (
    Chapter,
    PinRevision,
    RevisionAction,
    Summary,
    Transcript,
    Video,
    segments_digest,
)
from summaries.models.base import LANGUAGE_CODES
from summaries.text import pins as pin_text
from summaries.text.transcripts import (
    ParsedTranscript,
    TranscriptError,
    TranscriptTooLarge,
    TranscriptTooLong,
    parse_transcript,
)

from . import copies, gate
from .items import Part, PartModel
from .receipts import (
    blocks,
    first_pin,
    label,
    parts_of,
    pin_data,
    quote_statement,
    refresh_pins,
    statement_of,
    transcript_for,
    user_or_none,
    words_of,
)
from .revisions import Action, record_action


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
    `code` "too_large" when it is over TRANSCRIPT_MAX_BYTES or has more words than
    TRANSCRIPT_MAX_WORDS, its `__cause__` the parser's TranscriptTooLarge or
    TranscriptTooLong), replaces the video's
    transcript waiting for review in that language and records a revision of it (each
    import is a new revision). If the video's summary is published, the change goes to its
    working copy (made if needed) so that a reviewer publishes it; working changes
    scheduled to go live are taken off the schedule. The pins of the draft or copy are
    verified again. Raises PermissionDenied when `user` may not change summaries.
    """
    gate.require(user, gate.CHANGE, "change summaries")
    language = language or video.language
    if language not in LANGUAGE_CODES:
        raise ValidationError({"language": f"“{language}” is not a language code we know."})
    parsed = _parse(data, filename, video.duration_seconds)
    segments = [segment.as_json() for segment in parsed.segments]
    # Publishing locks the summary too: a transcript never changes between the gate's
    # verdict and the transcript it publishes.
    summary = Summary.objects.select_for_update().filter(video=video).first()
    with reversion.create_revision(manage_manually=True):
        transcript, _ = Transcript.objects.update_or_create(
            video=video,
            language=language,
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
        _set_user(user)
        reversion.set_comment(f"Imported the transcript {filename}".strip())
    target = _summary_waiting_for(summary, user)
    if target is not None:
        _unschedule(target)
        refresh_pins(summary=target)
    return Imported(transcript, tuple(parsed.warnings), target)


def _parse(data: bytes, filename: str, duration: int | None) -> ParsedTranscript:
    try:
        return parse_transcript(
            data,
            filename=filename,
            duration=float(duration or 0) or None,
            max_bytes=settings.TRANSCRIPT_MAX_BYTES,
            max_words=settings.TRANSCRIPT_MAX_WORDS,
        )
    except TranscriptError as error:
        too_large = isinstance(error, (TranscriptTooLarge, TranscriptTooLong))
        code = "too_large" if too_large else "invalid"
        # No params: the message quotes the file, and a "%" in it is text, not a
        # placeholder. The line number is the TranscriptError's (`__cause__.line`).
        message = f"This file cannot be imported as a transcript: {error.message}."
        raise ValidationError(message, code=code) from error


def _summary_waiting_for(summary: Summary | None, user: gate.Actor) -> Summary | None:
    """The draft, or the working copy of a published summary (made if needed), that
    goes live with a transcript imported for its video."""
    if summary is None:
        return None
    target, _, _ = copies.edit_target(summary=summary, user=user)
    return target


def _unschedule(summary: Summary) -> None:
    """Working changes scheduled to go live wait for a reviewer again."""
    if summary.is_working_copy and summary.publish_at is not None:
        Summary.objects.filter(pk=summary.pk).update(publish_at=None, scheduled_version=None)
        summary.publish_at, summary.scheduled_version = None, None


def suggestions(*, summary: Summary, part: Part, limit: int = 3) -> list[pin_text.Span]:
    """The best-matching spans of the transcript for what `part` says."""
    transcript = transcript_for(summary)
    if transcript is None:
        return []
    words = words_of(transcript)
    if not words:
        return []
    statement = statement_of(part)
    return pin_text.suggest(statement.text, words, kind=statement.kind, limit=limit)


def _editable(summary: Summary, part: Part) -> None:
    if part.summary_id != summary.pk:
        raise ValidationError("That part belongs to another summary.")
    if copies.needs_working_copy(summary):
        raise ValidationError("A published summary is changed only through its changes.")


@transaction.atomic
def set_pin(
    *,
    summary: Summary,
    part: Part,
    first: int | None,
    end: int | None,
    user: gate.Actor,
    quote: int | None = None,
) -> dict[str, Any] | None:
    """Pin `part` (or its quotation `quote`) to words `first`..`end` of the transcript
    (accept or move a suggestion), or remove the part's pin (`first` None: reject; a
    quotation is always pinned). Returns the pin as verified; an approval or override
    does not carry over to the new pin."""
    gate.require(user, gate.CHANGE, "change summaries")
    _editable(summary, part)
    if first is None or end is None:
        if quote is not None:
            raise ValidationError("A quotation is always checked against the transcript.")
        _save_pin(summary, part, None, user, Action.UNPINNED, "Removed the pin of", quote=None)
        return None
    pin = _pinned_at(summary, part, first, end, quote)
    _save_pin(summary, part, pin, user, Action.PINNED, "Pinned", quote=quote)
    return pin


def _pinned_at(
    summary: Summary, part: Part, first: int, end: int, quote: int | None
) -> dict[str, Any]:
    """The pin of `part` (or its quotation) on words `first`..`end`, verified there."""
    transcript = transcript_for(summary)
    if transcript is None:
        raise ValidationError("This video has no transcript to pin to.")
    words = words_of(transcript)
    if not 0 <= first < end <= len(words):
        raise ValidationError(f"Words {first}–{end} are not in the transcript.")
    if quote is None:
        statement = statement_of(part)
    else:
        statement = quote_statement(_quote_pin(part, quote)["quote"])
    span = pin_text.span_of(words, first, end)
    verdict = pin_text.verify(
        statement.text, words, span, kind=statement.kind, stated_time=statement.stated_time
    )
    return pin_data(span, verdict, statement, transcript)


@transaction.atomic
def accept_proposal(
    *, summary: Summary, part: Part, user: gate.Actor, quote: int | None = None
) -> dict[str, Any]:
    """Move a pin to the span a new transcript proposed for it (`receipts.verified`),
    verified there; as any pin an editor moves, it starts without approval."""
    gate.require(user, gate.CHANGE, "change summaries")
    _editable(summary, part)
    proposal = _proposal_of(summary, part, quote)
    pin = _pinned_at(summary, part, int(proposal["first"]), int(proposal["end"]), quote)
    _save_pin(summary, part, pin, user, Action.PINNED, "Accepted the proposed span of", quote=quote)
    return pin


@transaction.atomic
def reject_proposal(
    *, summary: Summary, part: Part, user: gate.Actor, quote: int | None = None
) -> dict[str, Any]:
    """Keep a pin on the words it points to, dropping the span a new transcript proposed
    (until another transcript comes)."""
    gate.require(user, gate.CHANGE, "change summaries")
    _editable(summary, part)
    _proposal_of(summary, part, quote)
    pin = {**_current_pin(part, quote), "proposal": None}
    _save_pin(summary, part, pin, user, Action.KEPT_PIN, "Kept the pinned span of", quote=quote)
    return pin


def _proposal_of(summary: Summary, part: Part, quote: int | None) -> dict[str, Any]:
    proposal = _current_pin(part, quote).get("proposal")
    if not proposal:
        raise ValidationError("No other span is proposed for this statement.")
    transcript = transcript_for(summary)
    if transcript is None or proposal.get("transcript") != transcript.digest:
        raise ValidationError("The transcript changed since this span was proposed.")
    return dict(proposal)


@transaction.atomic
def pin_all(*, summary: Summary, user: gate.Actor) -> int:
    """Accept every first suggestion: pin each statement not pinned yet where the
    transcript best says it (a statement nothing matches is pinned as not found at the
    transcript's start, for an editor to see). One revision records them all. Returns
    how many statements were pinned."""
    gate.require(user, gate.CHANGE, "change summaries")
    if copies.needs_working_copy(summary):
        raise ValidationError("A published summary is changed only through its changes.")
    transcript = transcript_for(summary)
    if transcript is None:
        raise ValidationError("This video has no transcript to pin to.")
    pinned: dict[PartModel, list[Part]] = defaultdict(list)
    for part in parts_of(summary):
        if part.pin is None:
            part.pin = first_pin(statement_of(part), transcript)
            pinned[type(part)].append(part)
    if not pinned:
        return 0
    for model, parts in pinned.items():
        manager: Any = model.objects  # parts of that model only
        manager.bulk_update(parts, ["pin"])
    _unschedule(summary)
    _move_edit_version(summary)
    count = sum(len(parts) for parts in pinned.values())
    every = [part for parts in pinned.values() for part in parts]
    comment = f"Pinned {count} statement{'s' if count != 1 else ''} where the transcript says them"
    record_pins(summary=summary, parts=every, user=user, action=Action.PINNED, comment=comment)
    return count


@transaction.atomic
def approve_pin(
    *, summary: Summary, part: Part, user: gate.Actor, quote: int | None = None
) -> dict[str, Any]:
    """An editor accepts a paraphrase as saying what the transcript says (for a quotation,
    lets it be published as it is written). Only a paraphrase is approved, and only by a
    named editor: PermissionDenied for the system (`user` None) or an anonymous user."""
    _require_person(user, "approve a paraphrase")
    gate.require(user, gate.CHANGE, "change summaries")
    _editable(summary, part)
    pin = _current_pin(part, quote)
    if pin["status"] != pin_text.Status.PARAPHRASE.value:
        raise ValidationError(
            "Only a paraphrase is approved; this pin is " + pin["status"].replace("_", " ") + "."
        )
    pin = {**pin, "approved": _by(user)}
    _save_pin(summary, part, pin, user, Action.APPROVED, "Approved the paraphrase of", quote=quote)
    return pin


@transaction.atomic
def override_pin(
    *, summary: Summary, part: Part, note: str, user: gate.Actor, quote: int | None = None
) -> dict[str, Any]:
    """A named reviewer lets a pin that keeps the summary from being published (not
    found, contradicted, mis-timed, a paraphrase nobody approved) through, with a note
    that History shows. Holds until the statement, the transcript or the verdict change.
    PermissionDenied for the system (`user` None) or an anonymous user."""
    _require_person(user, "override a pin")
    gate.require(user, gate.PUBLISH, "override pins")
    _editable(summary, part)
    note = " ".join((note or "").split())
    if not note:
        raise ValidationError({"note": "Say why this statement may be published as it is."})
    pin = _current_pin(part, quote)
    if not blocks({**pin, "override": None}):
        raise ValidationError(
            "Only a pin that keeps the summary from being published is overridden."
        )
    pin = {**pin, "override": {**_by(user), "note": note}}
    doing = f"Overrode the refused pin ({note}) of"
    _save_pin(summary, part, pin, user, Action.OVERRODE, doing, quote=quote)
    return pin


def _quote_pin(part: Part, quote: int) -> dict[str, Any]:
    pins = part.quote_pins if isinstance(part, Chapter) else []
    if not 0 <= quote < len(pins):
        raise ValidationError(f"This part has no quotation {quote}.")
    return dict(pins[quote])


def _current_pin(part: Part, quote: int | None) -> dict[str, Any]:
    if quote is not None:
        return _quote_pin(part, quote)
    if part.pin is None:
        raise ValidationError("This statement is not pinned.")
    return dict(part.pin)


def _require_person(user: gate.Actor, doing: str) -> None:
    """Only a signed-in person approves or overrides: the gate lets a pin through on
    someone's word, never on the system's."""
    if user_or_none(user) is None:
        raise PermissionDenied(f"Only a named editor may {doing}: sign in to do it.")


def _by(user: gate.Actor) -> dict[str, Any]:
    """Who did it and when (`user` a signed-in person: `_require_person`)."""
    person = user_or_none(user)
    if person is None:
        raise PermissionDenied("Only a named editor approves or overrides a pin.")
    return {"by": person.get_username(), "at": timezone.now().isoformat()}


def _set_user(user: gate.Actor) -> None:
    person = user_or_none(user)
    if person is not None:
        reversion.set_user(person)


def _move_edit_version(summary: Summary) -> None:
    """A pin is part of what editors wrote: its summary's lock_version moves on, so that a
    write based on what was read before (an API If-Match, the admin's change form) is
    refused as for any other edit."""
    Summary.objects.filter(pk=summary.pk).update(lock_version=F("lock_version") + 1)
    summary.refresh_from_db(fields=["lock_version"])


def _save_pin(
    summary: Summary,
    part: Part,
    pin: dict[str, Any] | None,
    user: gate.Actor,
    action: Action,
    doing: str,
    *,
    quote: int | None,
) -> None:
    """Store the pin, take the summary's changes off any schedule, move its edit version on
    and record a pin revision of the summary and this part, commented with what was done."""
    what = _store_pin(part, pin, quote)
    _unschedule(summary)
    _move_edit_version(summary)
    record_pins(summary=summary, parts=[part], user=user, action=action, comment=f"{doing} {what}")


def _store_pin(part: Part, pin: dict[str, Any] | None, quote: int | None) -> str:
    """Write the pin (one UPDATE of the part); returns what a comment calls it."""
    if quote is None or pin is None or not isinstance(part, Chapter):
        type(part).objects.filter(pk=part.pk).update(pin=pin)
        part.pin = pin
        return f"“{label(part)}”"
    quotes = list(part.quote_pins)
    quotes[quote] = {
        **pin,
        "quote": quotes[quote]["quote"],
        "speaker": quotes[quote].get("speaker", ""),
    }
    Chapter.objects.filter(pk=part.pk).update(quote_pins=quotes)
    part.quote_pins = quotes
    return f"the quotation “{quotes[quote]['quote']}” in “{label(part)}”"


# --- Pin revisions --------------------------------------------------------------------------


def record_pins(
    *, summary: Summary, parts: Sequence[Part], user: gate.Actor, action: Action, comment: str
) -> None:
    """One revision of an editor's action on pins: the summary (so that its History lists
    the `action`, by `user`, with `comment`) and `parts`, the parts whose pins it changed.

    The summary's other parts are those of its last revision holding all of them (the
    revision's `PinRevision.base`); when it has none yet (a working copy just made), this
    revision holds them all, as it does within a revision being recorded."""
    if reversion.is_active():
        # Within a revision being recorded (a load of content, say): the pins are recorded
        # with it, which holds the summary and all of its parts.
        reversion.add_to_revision(summary)  # its parts as they are, if not held yet
        for part in parts:  # these as they are now, even if held already
            reversion.add_to_revision(part)
        return  # the revision says what it does (its comment and action)
    base = _base_revision(summary)
    if base is None:
        with reversion.create_revision(manage_manually=True):
            reversion.add_to_revision(summary)  # with all of its parts
            _set_user(user)
            reversion.set_comment(comment)
            record_action(action)
        return
    revision = Revision.objects.create(
        date_created=timezone.now(), user=user_or_none(user), comment=comment
    )
    Version.objects.bulk_create([_version(row, revision) for row in [summary, *parts]])
    RevisionAction.objects.create(revision=revision, kind=action)
    PinRevision.objects.create(revision=revision, base=base, summary_id=summary.pk)


def _base_revision(summary: Summary) -> Revision | None:
    """The summary's last revision that holds it with all of its parts.

    A working copy's revisions join its summary's history when it is published or taken
    back: those hold another summary row, told apart by the row they stored."""
    versions = (
        Version.objects.get_for_model(Summary)
        .filter(object_id=str(summary.pk))
        .select_related("revision__pin_revision__base")
        .order_by("-pk")
    )
    for version in versions.iterator(chunk_size=20):
        if version.field_dict.get("id") != summary.pk:
            continue
        pins = getattr(version.revision, "pin_revision", None)
        return pins.base if pins is not None else version.revision
    return None


def _version(row: Any, revision: Revision) -> Version:
    """`row` as django-reversion would store it in `revision`, without the rows it follows
    (a summary's parts): the same serialisation, so that history reads it as any other."""
    options = revisions._get_options(type(row))
    return Version(
        revision=revision,
        content_type=revisions._get_content_type(type(row), "default"),
        object_id=str(row.pk),
        db="default",
        format=options.format,
        serialized_data=serializers.serialize(
            options.format,
            (row,),
            fields=options.fields,
            use_natural_foreign_keys=options.use_natural_foreign_keys,
        ),
        object_repr=str(row),
    )
