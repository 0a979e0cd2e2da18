"""Working copies: edits to a published summary that readers do not see until published.

A working copy is a Summary row of its own (with its own parts and citations) that points
at the live summary (`working_copy_of`) instead of a video. Readers, feeds, search,
sitemaps, related lists, the page cache and anonymous API clients only ever read live
summaries, so the copy is invisible to them. Its citations are real: the sources it cites
are checked before it is published. Publishing the changes moves the copy's parts and
citations onto the live summary in one transaction; discarding them deletes the copy.
"""

from datetime import datetime

import reversion
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from summaries import checking
from summaries.background import queue_after_commit
from summaries.models import Caveat, Chapter, Citation, KeyPoint, Summary, Takeaway
from summaries.pagecache.generation import content_changed
from summaries.webhooks import events as webhook_events

from .derived import refresh_derived_data

# Copied and moved in this order: caveats and citations point at the parts before them.
PART_MODELS = (KeyPoint, Takeaway, Chapter, Caveat)
# The parts a caveat or a citation may point at.
TARGETS = (("chapter", Chapter), ("key_point", KeyPoint), ("takeaway", Takeaway))


def needs_working_copy(summary: Summary) -> bool:
    """Whether edits to `summary` go to a working copy: it is published (live or
    scheduled), so readers see, or are about to see, what it says now."""
    return not summary.is_working_copy and summary.status == Summary.Status.PUBLISHED


def working_copy_of(summary: Summary) -> Summary | None:
    return Summary.objects.filter(working_copy_of=summary).first()


@transaction.atomic
def start_working_copy(*, summary: Summary, user=None) -> tuple[Summary, dict]:
    """The working copy of a published summary, made from it when it has none yet.

    Returns (copy, ids): `ids` maps (model, id of a live part or citation) to the id of its
    copy, and is empty when the copy already existed. The copy starts at the summary's lock
    version, so an edit based on the live version is not taken for a conflict.
    """
    existing = working_copy_of(summary)
    if existing is not None:
        return existing, {}
    copy = Summary.objects.create(
        working_copy_of=summary,
        tldr=summary.tldr,
        search_document=summary.search_document,
        created_by=user if user is not None and user.is_authenticated else None,
        updated_by=user if user is not None and user.is_authenticated else None,
        lock_version=summary.lock_version,
    )
    ids: dict = {}
    for model in PART_MODELS:
        for part in model.objects.filter(summary=summary).order_by("position"):
            ids[(model, part.pk)] = _duplicate(part, copy, ids)
    for citation in Citation.objects.filter(summary=summary).order_by("position", "id"):
        ids[(Citation, citation.pk)] = _duplicate(citation, copy, ids)
    return copy, ids


def _duplicate(row, copy: Summary, ids: dict) -> int:
    """Save a copy of a part or citation on `copy`, pointing at the copies of its targets."""
    original = row.pk
    row.pk = None
    row._state.adding = True
    row.summary = copy
    for name, model in TARGETS:
        target = getattr(row, f"{name}_id", None)
        if target is not None:
            setattr(row, f"{name}_id", ids[(model, target)])
    row.save()
    ids[(type(row), original)] = row.pk
    return row.pk


def _move_onto(copy: Summary, live: Summary) -> None:
    """Replace the live summary's parts and citations by the copy's (rows move, not copy)."""
    Citation.objects.filter(summary=live).delete()
    for model in reversed(PART_MODELS):
        model.objects.filter(summary=live).delete()
    for model in PART_MODELS:
        model.objects.filter(summary=copy).update(summary=live)
    Citation.objects.filter(summary=copy).update(summary=live)
    live.tldr = copy.tldr


def _check_publishable(summary: Summary) -> None:
    if not summary.tldr.strip():
        raise ValidationError({"tldr": "A summary needs its 30-second text before publishing."})


@transaction.atomic
def publish_changes(*, summary: Summary, user=None, at: datetime | None = None) -> Summary:
    """Make the working copy of a published summary live, now or at `at`.

    Now: in one transaction the copy's parts and citations replace the live ones (the
    citations keep their confirmations), the copy is deleted, the summary's revision is
    recorded ("Published changes"), and only then are cached pages made stale, the search
    text and related lists refreshed and due checks queued. With a future `at` the copy is
    only scheduled; `publish_due_changes` (celery beat) publishes it when due. Returns the
    live summary. Raises ValidationError when there are no changes or they cannot be read.
    """
    live = Summary.objects.select_for_update().get(pk=summary.pk)
    copy = working_copy_of(live)
    if copy is None:
        raise ValidationError("There are no unpublished changes to publish.")
    _check_publishable(copy)
    now = timezone.now()
    if at is not None and at > now:
        copy.publish_at = at
        copy.updated_by = user if user is not None and user.is_authenticated else None
        copy.save(update_fields=["publish_at", "updated_by"])
        return live
    with reversion.create_revision(manage_manually=True):
        _move_onto(copy, live)
        live.updated_by = user if user is not None and user.is_authenticated else None
        live.save()
        copy.delete()
        refresh_derived_data(summary=live)
        checking.queue_checks_for_summary(summary=live)
        reversion.add_to_revision(live)
        if user is not None and user.is_authenticated:
            reversion.set_user(user)
        reversion.set_comment("Published changes")
    content_changed()
    queue_after_commit("summaries.tasks.refresh_related_around", live.video_id)
    webhook_events.summary_updated(live, now=now)
    return live


@transaction.atomic
def take_back_changes(*, summary: Summary) -> Summary | None:
    """Put a working copy's content onto its summary without publishing anything.

    For a summary that is going back to draft: its pending edits must not be lost.
    Returns the copy that was taken back, or None when there was none.
    """
    copy = working_copy_of(summary)
    if copy is None:
        return None
    _move_onto(copy, summary)
    summary.save(update_fields=["tldr", "updated_at"])
    copy.delete()
    refresh_derived_data(summary=summary)
    return copy


@transaction.atomic
def discard_changes(*, summary: Summary, user=None) -> bool:
    """Drop the working copy of a published summary (its parts and citations with it).

    The live summary is untouched. Returns whether there was a copy to drop.
    """
    copy = working_copy_of(summary)
    if copy is None:
        return False
    copy.delete()
    return True


def publish_due_changes(*, now: datetime | None = None) -> list[int]:
    """Publish every working copy whose scheduled time has come (celery beat).

    Returns the ids of the live summaries that changed. Idempotent: a copy is deleted
    when it is published, so a duplicate tick finds nothing.
    """
    now = now or timezone.now()
    due = Summary.objects.filter(working_copy_of__isnull=False, publish_at__lte=now)
    published = []
    for copy in due.select_related("working_copy_of", "updated_by"):
        publish_changes(summary=copy.working_copy_of, user=copy.updated_by)
        published.append(copy.working_copy_of_id)
    return published
