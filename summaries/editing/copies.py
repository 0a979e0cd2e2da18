"""Working copies: edits to a published summary that readers do not see until published.

A working copy is a Summary row of its own (with its own parts and citations) that points
at the live summary (`working_copy_of`) instead of a video. Readers, feeds, search,
sitemaps, related lists, the page cache and anonymous API clients only ever read live
summaries, so the copy is invisible to them. Its citations are real: the sources it cites
are checked before it is published. Publishing the changes moves the copy's parts and
citations onto the live summary in one transaction; discarding them deletes the copy.
"""

from datetime import datetime
from typing import Any, TypeAlias

import reversion
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import models, transaction
from django.db.models import F
from django.utils import timezone
from reversion.models import Version

from summaries import checking, notifications
from summaries.models import (
    Caveat,
    Chapter,
    Citation,
    KeyPoint,
    Summary,
    Takeaway,
    Transcript,
)
from summaries.pagecache import tags as cache_tags
from summaries.text.line_endings import normalised_text
from summaries.webhooks import events as webhook_events

from . import citation_rows, corrections, events, gate, publishable, receipts, video_changes
from .derived import lock_citations, refresh_derived_data
from .derived import set_key_phrase as _set_key_phrase
from .items import PART_MODELS, Part, PartModel, make_room_for_reorder
from .revisions import Action, record_action

# (model, id of a live part or citation) -> id of its copy, or of a copy's part -> live id.
IdMap: TypeAlias = dict[tuple[type[models.Model], int], int]
# The parts a caveat or a citation may point at.
TARGETS: tuple[tuple[str, PartModel], ...] = (
    ("chapter", Chapter),
    ("key_point", KeyPoint),
    ("takeaway", Takeaway),
)


def needs_working_copy(summary: Summary) -> bool:
    """Whether edits to `summary` go to a working copy: it is published (live or
    scheduled), so readers see, or are about to see, what it says now."""
    return not summary.is_working_copy and summary.status == Summary.Status.PUBLISHED


def working_copy_of(summary: Summary) -> Summary | None:
    return Summary.objects.filter(working_copy_of=summary).first()


@transaction.atomic
def edit_target(*, summary: Summary, user: gate.Actor) -> tuple[Summary, IdMap, bool]:
    """What an edit of `summary` writes to: the one rule every face follows.

    A draft or a summary in review is edited itself; a published one (live or scheduled)
    only through its working copy, made from it when it has none. Returns (target, ids,
    made): `ids` maps live rows to their copies' (start_working_copy) and `made` says
    whether the copy was made now (an edit that changes nothing drops it again:
    `drop_if_unchanged`). Raises PermissionDenied when `user` may not change summaries.
    """
    gate.require(user, gate.CHANGE, "change summaries")
    if summary.is_working_copy or not needs_working_copy(summary):
        return summary, {}, False
    existing = working_copy_of(summary)
    if existing is not None:
        return existing, {}, False
    copy, ids = start_working_copy(summary=summary, user=user)
    return copy, ids, True


@transaction.atomic
def set_key_phrase(
    *, summary: Summary, citation_id: int, phrase: str, user: gate.Actor
) -> tuple[Summary, bool]:
    """Set a citation's key phrase as an edit of `summary`: on a published summary, on the
    same citation in its working copy (`citation_id` may name the live citation or the
    copy's). Returns (what was edited, whether a copy was made now). Raises
    Citation.DoesNotExist when the summary cites nothing with that id.
    """
    target, ids, made = edit_target(summary=summary, user=user)
    citation = _citation_in(target, summary, citation_id, ids)
    _set_key_phrase(citation=citation, phrase=phrase, user=user)
    return target, made


def _citation_in(target: Summary, summary: Summary, citation_id: int, ids: IdMap) -> Citation:
    citations = Citation.objects.select_related("source", "chapter", "key_point", "takeaway")
    mapped = ids.get((Citation, citation_id), citation_id)
    found = citations.filter(summary=target, pk=mapped).first()
    if found is not None or target.pk == summary.pk:
        return found or citations.get(summary=target, pk=mapped)
    live = Citation.objects.get(summary=summary, pk=citation_id)
    # The copy existed already: the same link with the same text in the copy.
    twin = (
        citations.filter(summary=target, source_id=live.source_id, link_text=live.link_text)
        .order_by("position")
        .first()
    )
    if twin is None:
        raise Citation.DoesNotExist(f"The unpublished changes no longer cite {live.url}.")
    return twin


def same_as_live(copy: Summary) -> bool:
    """Whether a working copy says exactly what its live summary says (nothing to review),
    as both are stored now."""
    copy = Summary.objects.select_related("working_copy_of").get(pk=copy.pk)
    live = copy.working_copy_of
    if live is None or copy.video_changes:
        return False
    if normalised_text(copy.tldr) != normalised_text(live.tldr):
        return False
    return all(_content(model, copy) == _content(model, live) for model in (*PART_MODELS, Citation))


# What a part's content is, for comparing a copy with its summary: the fields editors set,
# with a caveat's or citation's targets by their position in the summary.
_NOT_CONTENT = {"id", "summary", "chapter", "key_point", "takeaway"}


def _content(model: PartModel | type[Citation], summary: Summary) -> list[tuple[Any, ...]]:
    names = [
        f.attname
        for f in model._meta.concrete_fields
        if f.name not in _NOT_CONTENT and f.editable and not f.name.endswith("_html")
    ]
    targets = [
        f"{name}__position"
        for name, _model in TARGETS
        if any(f.name == name for f in model._meta.fields)
    ]
    rows = (
        model.objects.filter(summary=summary)
        .order_by("position", "id")
        .values_list(*names, *targets)
    )
    # Text saved before it was stored normalised may differ from its copy by a CRLF alone.
    return [tuple(normalised_text(v) if isinstance(v, str) else v for v in row) for row in rows]


def drop_if_unchanged(*, copy: Summary, made: bool) -> bool:
    """Drop a working copy that, after an edit, says what its live summary says: there
    is nothing to review or publish. Returns whether it did. Call inside the edit's own
    transaction (a savepoint).

    A copy made by this edit (`made`) goes with the edit: its transaction is rolled back,
    so its queued work goes too. A copy that existed before (an edit undoing the changes,
    a restore of the live version) is deleted, its revisions, this edit's too, joining the
    summary's history; it is kept while a transcript imported with the changes waits for
    review, which is a change of its own.
    """
    if not copy.is_working_copy or not same_as_live(copy):
        return False
    if made:
        transaction.set_rollback(True)
        return True
    live = copy.working_copy_of
    if (
        live is None
        or Transcript.objects.filter(
            video=live.summarised_video, state=Transcript.State.DRAFT
        ).exists()
    ):
        return False
    lock_citations(summary_ids=[copy.pk])  # deleted with the copy
    _join_history(copy=copy, live=live)
    copy.delete()
    return True


@transaction.atomic
def start_working_copy(*, summary: Summary, user: gate.Actor = None) -> tuple[Summary, IdMap]:
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
    ids: IdMap = {}
    for model in PART_MODELS:
        for part in model.objects.filter(summary=summary).order_by("position"):
            _duplicate(part, copy, ids)
    for citation in Citation.objects.filter(summary=summary).order_by("position", "id"):
        _duplicate(citation, copy, ids)
    citation_pairs = {
        live_id: copy_id for (kind, live_id), copy_id in ids.items() if kind is Citation
    }
    citation_rows.copy_evidence(citation_pairs)
    copy.part_origins = {
        model._meta.model_name: {
            str(copy_id): live_id for (kind, live_id), copy_id in ids.items() if kind is model
        }
        for model in (*PART_MODELS, Citation)
    }
    Summary.objects.filter(pk=copy.pk).update(part_origins=copy.part_origins)
    return copy, ids


def _duplicate(row: Part | Citation, copy: Summary, ids: IdMap) -> int:
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
    """Make the live summary's parts and citations the copy's.

    A copy's part made from a live part (`part_origins`) is written onto that live part,
    which keeps its id, so history knows it as the same part; new parts move over, and
    live parts the copy no longer has are deleted. Citations likewise: each is written onto
    the live citation it was made from, or that cites the same link (citation_rows.merge),
    which keeps its evidence and archived copy; new ones move over.
    """
    lock_citations(summary_ids=[copy.pk, live.pk])
    # Kept caveats get their targets from the copy; none is deleted with a chapter.
    Caveat.objects.filter(summary=live).update(chapter=None, takeaway=None)
    final: IdMap = {}  # (model, copy part id) -> id of the part on the live summary
    for model in PART_MODELS:
        merged = _merged_parts(model, copy, live)
        final.update({(model, copy_id): live_id for copy_id, live_id in merged.items()})
        _retarget(copy, model, final)
        make_room_for_reorder(model=model, summary=live)
        model.objects.filter(summary=live).exclude(pk__in=merged.values()).delete()
        names = _content_fields(model)
        for copy_id, live_id in merged.items():
            values = model.objects.filter(pk=copy_id).values(*names).get()
            model.objects.filter(pk=live_id).update(**values)
        model.objects.filter(pk__in=list(merged)).delete()
        model.objects.filter(summary=copy).update(summary=live)
    citation_rows.merge(
        copy=copy, live=live, origins=copy.part_origins.get(Citation._meta.model_name, {})
    )
    live.tldr = copy.tldr


def _merged_parts(model: PartModel, copy: Summary, live: Summary) -> dict[int, int]:
    """{copy part id: live part id} for the copy's parts made from a live part it still has."""
    origins = copy.part_origins.get(model._meta.model_name, {})
    live_ids = set(model.objects.filter(summary=live).values_list("pk", flat=True))
    merged: dict[int, int] = {}
    for copy_id in model.objects.filter(summary=copy).values_list("pk", flat=True):
        origin = origins.get(str(copy_id))
        if origin in live_ids and origin not in merged.values():
            merged[copy_id] = origin
    return merged


def _retarget(copy: Summary, model: PartModel, final: IdMap) -> None:
    """Point the copy's caveats and citations that refer to parts of `model` merged onto
    live parts at those live parts (before the copy's rows are deleted)."""
    for name, target_model in TARGETS:
        if target_model is not model:
            continue
        for dependant in (Caveat, Citation):
            if not any(f.name == name for f in dependant._meta.fields):
                continue
            rows = dependant.objects.filter(summary=copy, **{f"{name}__isnull": False})
            for pk, target in rows.values_list("pk", f"{name}_id"):
                if (model, target) in final:
                    dependant.objects.filter(pk=pk).update(**{f"{name}_id": final[(model, target)]})


def _content_fields(model: PartModel) -> list[str]:
    """Every column of a part but its id and summary (what a copy's part says)."""
    return [f.attname for f in model._meta.concrete_fields if f.name not in ("id", "summary")]


@transaction.atomic
def publish_changes(
    *,
    summary: Summary,
    user: gate.Actor = None,
    at: datetime | None = None,
    change_kind: str | None = None,
    note: str = "",
) -> Summary:
    """Make the working copy of a published summary live, now or at `at`.

    Now: in one transaction the copy's parts and citations replace the live ones (the
    citations keep their confirmations), its video changes are written to the video, the
    copy is deleted, its revisions join the summary's history and the summary's revision
    is recorded ("Published changes"), and only then are cached pages made stale, the
    search text and related lists refreshed and due checks queued. With a future `at` the
    copy is scheduled as it is now: `publish_due_changes` (celery beat) publishes it when
    due unless it was saved again meanwhile, with the same kind and note. `change_kind`
    (a typo fix, an update or a correction; an update when None) and `note` are recorded
    as a Correction when the changes go live (editing.corrections). Returns the live
    summary. Raises ValidationError when there are no changes, they cannot be read, or
    the kind or note is refused (nothing is published then), PermissionDenied when `user`
    may not publish.
    """
    gate.require(user, gate.PUBLISH, "publish changes")
    change = corrections.checked_change(kind=change_kind, note=note)
    live = _lock_live(summary.pk)
    copy = _lock_copy_of(live)
    if copy is None:
        raise ValidationError("There are no unpublished changes to publish.")
    publishable.check_publishable(copy)
    now = timezone.now()
    if at is not None and at > now:
        copy.publish_at = at
        copy.updated_by = user if user is not None and user.is_authenticated else None
        copy.scheduled_change = {"kind": change[0], "note": change[1]}
        copy.save(update_fields=["publish_at", "updated_by", "scheduled_change"])
        # What goes live is this version: a later save moves lock_version past it.
        Summary.objects.filter(pk=copy.pk).update(scheduled_version=F("lock_version"))
        copy.scheduled_version = copy.lock_version
        return live
    notifications.summary_published(summary=live, by=user, changes=copy, now=now)
    return _go_live(live=live, copy=copy, user=user, now=now, change=change)


# Publishing, discarding and taking back changes lock, in this order: the live summary,
# its working copy, then their citations (derived.lock_citations). A save of the changes
# locks the copy (the admin's form, the API's edit through the live summary) before its
# citations too, so that none of them waits for another while holding what it waits for.


def _lock_live(pk: int) -> Summary:
    """The live summary, its row locked until the transaction ends against other
    publishing and saves (FOR NO KEY UPDATE). Rows that point at it can still be written
    meanwhile: a worker recording checks of its sources may tell its editors of a source
    problem (a row pointing at the summary) while it holds citations this transaction
    is about to lock (derived.lock_citations)."""
    return Summary.objects.select_for_update(no_key=True).get(pk=pk)


def _lock_copy_of(live: Summary) -> Summary | None:
    """The working copy of `live`, its row locked until the transaction ends (FOR
    UPDATE: it is about to be deleted); None when it has none."""
    return Summary.objects.select_for_update().filter(working_copy_of=live).first()


def _go_live(
    *, live: Summary, copy: Summary, user: gate.Actor, now: datetime, change: tuple[str, str]
) -> Summary:
    pins_before = webhook_events.pins_before_change(live, now=now)
    comparison = corrections.changes_before_publishing(live)
    # Lists it leaves (a person or topic taken off the video) as well as those it joins.
    shown_before = cache_tags.of_summary_change(live)
    with reversion.create_revision(manage_manually=True):
        _move_onto(copy, live)
        receipts.publish_transcripts(video=live.summarised_video)
        video_changes.apply(live.summarised_video, copy.video_changes)
        live.updated_by = user if user is not None and user.is_authenticated else None
        live.save()
        _join_history(copy=copy, live=live)
        copy.delete()
        refresh_derived_data(summary=live, claim_new_sources=True)
        checking.queue_checks_for_summary(summary=live)
        reversion.add_to_revision(live)
        if user is not None and user.is_authenticated:
            reversion.set_user(user)
        reversion.set_comment("Published changes")
        record_action(Action.PUBLISHED)
    kind, note = change
    corrections.record_change(
        live=live, kind=kind, note=note, user=user, now=now, comparison=comparison
    )
    events.changes_published(live, shown_before=shown_before, pins_before=pins_before, now=now)
    return live


def _join_history(*, copy: Summary, live: Summary) -> None:
    """The copy's revisions (its editors' saves) become part of the summary's history."""
    Version.objects.filter(
        content_type=ContentType.objects.get_for_model(Summary), object_id=str(copy.pk)
    ).update(object_id=str(live.pk))


@transaction.atomic
def take_back_changes(*, summary: Summary) -> Summary | None:
    """Put a working copy's content onto its summary without publishing anything.

    For a summary that is going back to draft: its pending edits must not be lost.
    Returns the copy that was taken back, or None when there was none.
    """
    _lock_live(summary.pk)
    copy = _lock_copy_of(summary)
    if copy is None:
        return None
    _move_onto(copy, summary)
    video_changes.apply(summary.summarised_video, copy.video_changes)
    summary.save(update_fields=["tldr", "updated_at"])
    _join_history(copy=copy, live=summary)
    copy.delete()
    refresh_derived_data(summary=summary)
    return copy


@transaction.atomic
def discard_changes(*, summary: Summary, user: gate.Actor = None) -> bool:
    """Drop the working copy of a published summary (its parts and citations with it).

    The live summary is untouched. The dropped content is kept in the summary's history
    (a "Discarded changes" revision, by `user`), from where it can be restored. Returns
    whether there was a copy to drop. Raises PermissionDenied when `user` may not change
    summaries.
    """
    gate.require(user, gate.CHANGE, "discard changes")
    copy = _lock_copy_of(summary)
    if copy is None:
        return False
    lock_citations(summary_ids=[copy.pk])  # deleted with the copy
    with reversion.create_revision(manage_manually=True):
        reversion.add_to_revision(copy)
        if user is not None and user.is_authenticated:
            reversion.set_user(user)
        reversion.set_comment("Discarded changes")
        record_action(Action.DISCARDED)
    _join_history(copy=copy, live=summary)
    copy.delete()
    # A transcript imported with the changes goes with them (its revisions stay).
    receipts.discard_transcripts(video=summary.summarised_video)
    return True


def publish_due_changes(*, now: datetime | None = None) -> list[int]:
    """Publish every working copy whose scheduled time has come (celery beat).

    Only a copy as a reviewer scheduled it: one saved again since (edited, sent back), or
    that the publish gate refuses now, waits for a reviewer again. Returns the ids of the
    live summaries that changed. Idempotent: a copy is deleted when it is published, so a
    duplicate tick finds nothing.
    """
    now = now or timezone.now()
    due = Summary.objects.filter(
        working_copy_of__isnull=False, publish_at__lte=now, scheduled_version=F("lock_version")
    )
    published = []
    for copy in due.select_related("working_copy_of", "updated_by"):
        if _publish_scheduled(copy_id=copy.pk, now=now):
            published.append(copy.working_copy_of_id)
    return [pk for pk in published if pk is not None]  # all: `due` holds working copies


def _still_publishable(copy: Summary) -> bool:
    """The publish gate again at go-live (a transcript or pin may have changed since the
    reviewer scheduled the copy): a copy it refuses is taken off the schedule and waits
    for a reviewer."""
    try:
        publishable.check_publishable(copy)
    except ValidationError:
        Summary.objects.filter(pk=copy.pk).update(publish_at=None, scheduled_version=None)
        return False
    return True


@transaction.atomic
def _publish_scheduled(*, copy_id: int, now: datetime) -> bool:
    live_id = Summary.objects.filter(pk=copy_id).values_list("working_copy_of", flat=True).first()
    if live_id is None:  # published or discarded
        return False
    live = _lock_live(live_id)  # before the copy, as a reviewer's publishing does
    copy = (
        Summary.objects.select_for_update(of=("self",))
        .select_related("updated_by")
        .filter(
            pk=copy_id,
            working_copy_of=live,
            scheduled_version=F("lock_version"),
            publish_at__lte=now,
        )
        .first()
    )
    if copy is None:  # published, saved again or discarded meanwhile
        return False
    if not _still_publishable(copy):
        return False
    notifications.summary_went_live(summary=live, changes=copy, now=now)
    change = corrections.scheduled_change(copy)
    _go_live(live=live, copy=copy, user=copy.updated_by, now=now, change=change)
    return True
