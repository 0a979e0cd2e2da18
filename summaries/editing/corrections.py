"""Updates and corrections: what kind of change went live, and what readers are told.

When the changes of a published summary go live (copies.publish_changes, now or when
their scheduled time comes), the reviewer says what kind they are: a typo fix (recorded
for editors, never shown), an update (an optional public note) or a correction (a public
note saying what was wrong and what is right). Each is recorded as a Correction with what
changed word by word, taken from the review's comparison of the live summary with its
changes (revisions.compare_live_and_changes) just before they replace it. A correction is
never deleted; withdrawing one is recorded on it, with its reason, and shown.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from summaries.models import Correction, Summary
from summaries.models.corrections import NOTE_CHARS
from summaries.pagecache.generation import content_changed
from summaries.webhooks import events as webhook_events

from . import gate
from .revisions import RevisionComparison, Segment, compare_live_and_changes

Kind = Correction.Kind
# Published changes are an update unless the reviewer says otherwise (API clients written
# before kinds existed, schedules made before then).
DEFAULT_KIND = Kind.UPDATE
# An unchanged run longer than this is cut to its ends around "…" in what readers are
# shown: the changed words with a little of their context, not the whole chapter.
CONTEXT_CHARS = 80


def checked_change(*, kind: str | None, note: str | None) -> tuple[str, str]:
    """The kind and note of changes about to go live, as they will be recorded.

    No kind is an update. Raises ValidationError naming `change_kind` for an unknown
    kind, `note` for a correction without a note or a note too long.
    """
    kind = kind or DEFAULT_KIND
    if kind not in Kind.values:
        choices = ", ".join(Kind.values)
        raise ValidationError(
            {"change_kind": f"Unknown kind of change {kind!r}: choose {choices}."}
        )
    note = (note or "").strip()
    if len(note) > NOTE_CHARS:
        raise ValidationError({"note": f"Keep the note under {NOTE_CHARS} characters."})
    if kind == Kind.CORRECTION and not note:
        raise ValidationError(
            {"note": "A correction needs a public note: say what was wrong and what is right."}
        )
    return kind, note


def scheduled_change(copy: Summary) -> tuple[str, str]:
    """The kind and note a reviewer gave when scheduling the changes `copy` holds."""
    stored = copy.scheduled_change or {}
    return stored.get("kind") or DEFAULT_KIND, stored.get("note") or ""


def record_change(
    *,
    live: Summary,
    kind: str,
    note: str,
    user: gate.Actor,
    now: datetime,
    comparison: RevisionComparison | None,
) -> Correction:
    """Record changes that went live on `live` (their kind and note already checked),
    with what changed (`comparison`, the live summary against its changes, taken before
    they replaced it). An update or a correction of a live summary is told to webhooks
    (`summary.corrected`, with its kind); a typo fix is not."""
    correction = Correction.objects.create(
        summary=live,
        kind=kind,
        note=note,
        published_at=now,
        published_by=user if user is not None and user.is_authenticated else None,
        changes=changes_data(comparison),
    )
    if kind != Kind.TYPO:
        webhook_events.summary_corrected(live, correction, now=now)
    return correction


def changes_before_publishing(live: Summary) -> RevisionComparison | None:
    """What the unpublished changes of `live` change, for record_change: call it before
    they replace the live parts."""
    return compare_live_and_changes(live)


def changes_data(comparison: RevisionComparison | None) -> list[dict[str, Any]]:
    """What changed, as stored and shown to readers: one item per changed field, in the
    summary's order ({"label", "old", "new"}, each side a list of [text, changed] runs).

    Parts added or removed have an empty side; parts that only moved are left out.
    """
    if comparison is None:
        return []
    items = [_item(change.label, change) for change in comparison.changed_fields]
    for kind in comparison.parts:
        for part in kind.parts:
            for change in part.changed_fields:
                items.append(_item(f"{part.label} — {change.label.lower()}", change))
    return items


def _item(label: str, change: Any) -> dict[str, Any]:
    return {
        "label": label,
        "old": _runs(change.old_segments),
        "new": _runs(change.new_segments),
    }


def _runs(segments: tuple[Segment, ...]) -> list[list[Any]]:
    last = len(segments) - 1
    return [
        [segment.text if segment.changed else _context(segment.text, i, last), segment.changed]
        for i, segment in enumerate(segments)
    ]


def _context(text: str, index: int, last: int) -> str:
    """An unchanged run cut to the words next to the changed ones."""
    if len(text) <= 2 * CONTEXT_CHARS:
        return text
    head = "" if index == 0 else text[:CONTEXT_CHARS].rsplit(" ", 1)[0]
    tail = "" if index == last else text[-CONTEXT_CHARS:].split(" ", 1)[-1]
    return f"{head} … {tail}".strip()


@transaction.atomic
def withdraw_correction(*, correction: Correction, user: gate.Actor, note: str) -> Correction:
    """Withdraw a published update or correction, saying why.

    Nothing is deleted: the note stays, marked withdrawn with when, by whom and why, and
    readers see that. Makes cached pages stale; a correction's withdrawal is told to
    webhooks. Raises PermissionDenied unless `user` may publish, ValidationError when it
    is a typo fix, already withdrawn, or `note` is empty.
    """
    gate.require(user, gate.PUBLISH, "withdraw corrections")
    # Only the correction's row: the summary's is locked by publishing, in its own order.
    correction = (
        Correction.objects.select_for_update(of=("self",))
        .select_related("summary")
        .get(pk=correction.pk)
    )
    if correction.kind == Kind.TYPO:
        raise ValidationError("A typo fix is not shown to readers: there is nothing to withdraw.")
    if correction.is_withdrawn:
        raise ValidationError("This was withdrawn already.")
    note = (note or "").strip()
    if not note:
        raise ValidationError({"note": "Say why it is withdrawn: readers are shown the reason."})
    if len(note) > NOTE_CHARS:
        raise ValidationError({"note": f"Keep the reason under {NOTE_CHARS} characters."})
    now = timezone.now()
    correction.withdrawn_at = now
    correction.withdrawn_by = user if user is not None and user.is_authenticated else None
    correction.withdrawal_note = note
    correction.save(update_fields=["withdrawn_at", "withdrawn_by", "withdrawal_note"])
    content_changed()
    if correction.kind != Kind.TYPO:
        webhook_events.summary_corrected(correction.summary, correction, now=now)
    return correction


def public_corrections(summary: Summary) -> list[Correction]:
    """The updates and corrections readers are shown on a summary, newest first."""
    return list(Correction.objects.public().filter(summary=summary))
