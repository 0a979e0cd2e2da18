"""Saving a whole summary in one transaction: content, parts, derived data and a revision.

Input arrives shaped and capped by summaries.api.inputs; the rules that need the database
or the whole summary live here: duplicate videos, item ids, time order and the video's
end, caveat targets, and the address policy for cited links.
"""

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import reversion
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models, transaction

from summaries import checking, thumbnails
from summaries.models import (
    Appearance,
    Caveat,
    Chapter,
    KeyPoint,
    Summary,
    Takeaway,
    Topic,
    Video,
)
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.generation import content_changed
from summaries.text.line_endings import normalised_text
from summaries.text.remembered import remembering

from . import copies, gate, receipts, video_changes
from .derived import lock_citations, refresh_derived_data
from .items import PART_MODELS, Part, PartModel, make_room_for_reorder, renumber
from .revisions import Action, record_action
from .rules import duplicate_video_problem, link_problems, time_after_end
from .video_changes import People

# Validated input (summaries.api.inputs), keyed as the API's payload.
Payload: TypeAlias = dict[str, Any]
# Every part of each kind given, in reading order (see save_summary).
Parts: TypeAlias = Mapping[PartModel, Sequence[Part]]

# --- Whole summaries --------------------------------------------------------------------

# (payload key, model, Markdown fields, time field, label)
ITEM_KINDS: list[tuple[str, PartModel, tuple[str, ...], str | None, str]] = [
    ("key_points", KeyPoint, ("body",), "time", "key point"),
    ("takeaways", Takeaway, ("text",), "time", "takeaway"),
    ("chapters", Chapter, ("body",), "start_time", "chapter"),
    ("caveats", Caveat, ("text",), None, "caveat"),
]
VIDEO_DEFAULTS = {"language": "en", "thumbnail_url": "", "blurb": ""}


class _Errors:
    """Validation messages keyed by the path of the input they are about."""

    def __init__(self) -> None:
        self.messages: defaultdict[str, list[str]] = defaultdict(list)

    def add(self, path: str, message: str | list[str]) -> None:
        self.messages[path].extend(message if isinstance(message, list) else [message])

    def add_model_errors(
        self, prefix: str, error: ValidationError, renames: dict[str, str] | None = None
    ) -> None:
        for name, messages in error.message_dict.items():
            name = (renames or {}).get(name, name)
            if name == "__all__":
                self.add(prefix or "non_field_errors", messages)
            else:
                self.add(f"{prefix}.{name}" if prefix else name, messages)

    def raise_if_any(self) -> None:
        if self.messages:
            raise ValidationError(dict(self.messages))


def _check_permission(user: User | AnonymousUser, codename: str) -> None:
    if not gate.may(user, f"summaries.{codename}"):
        raise PermissionDenied(f"You need the {codename} permission for this change.")


def _prepare_video(video: Video, data: Payload, *, full: bool, errors: _Errors) -> None:
    """Apply the payload's video fields to `video` (unsaved) and validate it."""
    values = {**VIDEO_DEFAULTS, **data} if full else dict(data)
    for name in ("title", "channel", "source_url", "language", "published_on", "thumbnail_url"):
        if name in values:
            setattr(video, name, values[name])
    if "blurb" in values:
        video.blurb = values["blurb"]
    if "duration" in values:
        video.duration_seconds = values["duration"]
    try:
        video.full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        errors.add_model_errors("video", exc, renames={"duration_seconds": "duration"})
    problem = duplicate_video_problem(video.source_url, exclude_pk=video.pk)
    if problem:
        errors.add("video.source_url", problem)
    seen = set()
    for index, appearance in enumerate(values.get("people", [])):
        person = appearance["person"]
        if person.pk in seen:
            errors.add(f"video.people[{index}].person", f"{person} is listed twice.")
        seen.add(person.pk)


def _existing_items(summary: Summary | None) -> dict[str, list[Part]]:
    if summary is None or summary.pk is None:
        return {key: [] for key, *_ in ITEM_KINDS}
    existing: dict[str, list[Part]] = {
        key: list(model.objects.filter(summary=summary).order_by("position", "id"))
        for key, model, *_ in ITEM_KINDS
    }
    return existing


def _check_items(
    data: Payload, existing: dict[str, list[Part]], duration: int | None, errors: _Errors
) -> None:
    """Item ids, links, times (before the video's end) and caveat targets."""
    for key, _model, markdown_fields, _time_field, label in ITEM_KINDS:
        if key not in data:
            continue
        known = {item.pk for item in existing[key]}
        seen = set()
        for index, item in enumerate(data[key]):
            item_id = item.get("id")
            if item_id is not None and (item_id not in known or item_id in seen):
                why = "is listed twice" if item_id in seen else "is not in this summary"
                errors.add(f"{key}[{index}].id", f"The {label} with id {item_id} {why}.")
            seen.add(item_id)
            for name in markdown_fields:
                for problem in link_problems(item[name]):
                    errors.add(f"{key}[{index}].{name}", problem)

    for key, *_, time_field, label in ITEM_KINDS:
        if time_field is None:
            continue
        given = key in data
        items = (
            data[key] if given else [{time_field: getattr(i, time_field)} for i in existing[key]]
        )
        for index, item in enumerate(items):
            late = time_after_end(item.get(time_field), duration)
            if late:
                path = f"{key}[{index}].{time_field}" if given else "video.duration"
                errors.add(path, f"{label.capitalize()} {index + 1}: {late}")

    if "caveats" in data:
        for index, caveat in enumerate(data["caveats"]):
            targeted = [name for name, *_ in CAVEAT_TARGETS if caveat.get(name)]
            if len(targeted) > 1:
                errors.add(
                    f"caveats[{index}]",
                    "A caveat qualifies one chapter, key point or takeaway, not several.",
                )
            for name, key, label in CAVEAT_TARGETS:
                position = caveat.get(name)
                if position and position > len(data.get(key, existing[key])):
                    errors.add(f"caveats[{index}].{name}", f"There is no {label} {position}.")
    else:
        # Replacing parts would silently delete the caveats attached to them.
        for name, key, label in CAVEAT_TARGETS:
            field = f"{name}_id"
            if key not in data:
                continue
            kept = {item.get("id") for item in data[key]}
            if any(
                getattr(c, field) and getattr(c, field) not in kept for c in existing["caveats"]
            ):
                errors.add(
                    "caveats",
                    f"Some caveats are attached to {label}s this request removes; "
                    "send the caveats too.",
                )


# What a caveat may qualify: (its field and input key, the parts' payload key, label).
CAVEAT_TARGETS = (
    ("chapter", "chapters", "chapter"),
    ("key_point", "key_points", "key point"),
    ("takeaway", "takeaways", "takeaway"),
)


# What an item left out of a payload's item gets (a sent item replaces the whole row).
ITEM_DEFAULTS: dict[PartModel, dict[str, Any]] = {
    KeyPoint: {"time": None},
    Takeaway: {"time": None},
    Chapter: {"start_time": None, "synopsis": ""},
    Caveat: {"claim": ""},
}


def _build_items(
    key: str,
    model: PartModel,
    items: list[dict[str, Any]],
    summary: Summary,
    existing: dict[str, list[Part]],
    targets: dict[str, Sequence[Part]],
) -> list[Part]:
    """Unsaved model objects for the payload's items of one kind, numbered 1..n.

    An item with an id updates that row; a caveat's chapter, key point and takeaway are
    positions in `targets` (this request's parts, or the summary's when not sent).
    """
    by_id: dict[int | None, Part] = {item.pk: item for item in existing[key]}
    objects: list[Part] = []
    for position, item in enumerate(items, start=1):
        obj = by_id.get(item.get("id")) or model(summary=summary)
        for name, value in {**ITEM_DEFAULTS[model], **item}.items():
            if name != "id" and name not in CAVEAT_FIELDS:
                setattr(obj, name, value)
        if model is Caveat:
            for name, target_key, _label in CAVEAT_TARGETS:
                target = item.get(name)  # a position among the targets, 1-based
                setattr(obj, name, targets[target_key][target - 1] if target else None)
        obj.position = position
        objects.append(obj)
    return objects


def _clean_items(key: str, objects: list[Part], errors: _Errors) -> None:
    for index, obj in enumerate(objects):
        try:
            obj.full_clean(
                exclude=["summary", *CAVEAT_FIELDS, "position"],
                validate_unique=False,
                validate_constraints=False,
            )
        except ValidationError as exc:
            errors.add_model_errors(f"{key}[{index}]", exc)


CAVEAT_FIELDS = tuple(name for name, *_ in CAVEAT_TARGETS)


def _save_parts(model: PartModel, objects: Sequence[Part], summary: Summary) -> None:
    """Replace the summary's parts of one kind by `objects`, numbered 1..n in that order.

    When every kept part is already at its new place, parts whose stored row equals them
    are not written again (a save of a long summary usually changes one or two parts).
    """
    kept = {obj.pk for obj in objects if obj.pk}
    stored: dict[int, Mapping[str, Any]] = {
        row["id"]: row for row in model.objects.filter(summary=summary).values()
    }
    in_place = all(
        obj.pk in stored and stored[obj.pk]["position"] == position
        for position, obj in enumerate(objects, start=1)
        if obj.pk
    )
    if not in_place:
        make_room_for_reorder(model=model, summary=summary)
    model.objects.filter(summary=summary).exclude(pk__in=kept).delete()
    fields = [field.attname for field in model._meta.concrete_fields]
    for position, obj in enumerate(objects, start=1):
        obj.summary = summary
        obj.position = position
        row = stored.get(obj.pk) if in_place else None
        if row is not None and all(getattr(obj, name) == row[name] for name in fields):
            continue  # stored as it is
        obj.save()
    renumber(model=model, summary=summary)


def _normalise_texts(summary: Summary, parts: Parts, video: Video | None) -> None:
    """Every text editors write on the summary, its parts and its video, as it is stored
    (text.line_endings): a browser's CRLF line breaks and whitespace after the last word
    are no edit, so they never reach the database, a revision or a comparison."""
    edited: list[models.Model] = [summary, *(p for objects in parts.values() for p in objects)]
    for obj in [*edited, video] if video is not None else edited:
        for field in type(obj)._meta.concrete_fields:
            if not field.editable or field.choices:
                continue
            if isinstance(field, models.CharField | models.TextField):
                value = getattr(obj, field.attname)
                if isinstance(value, str):
                    setattr(obj, field.attname, normalised_text(value))


def _keep_caveats_of_deleted_targets(parts: Parts, summary: Summary) -> None:
    """A kept caveat whose chapter, key point or takeaway this save deletes stays, on the
    summary.

    Kept caveats are detached in the database first, so that deleting the part they qualify
    does not delete them in cascade; each is attached again as it is saved.
    """
    caveats = parts.get(Caveat)
    if caveats is None:
        return
    for model, field in ((Chapter, "chapter"), (KeyPoint, "key_point"), (Takeaway, "takeaway")):
        if model not in parts:
            continue
        kept = {obj.pk for obj in parts[model] if obj.pk}
        for caveat in caveats:
            target_id = getattr(caveat, f"{field}_id")
            if target_id is not None and target_id not in kept and caveat.pk is not None:
                setattr(caveat, field, None)
    Caveat.objects.filter(pk__in=[c.pk for c in caveats if c.pk]).update(
        chapter=None, key_point=None, takeaway=None
    )


def _save_video(video: Video, people: People | None, topics: list[Topic] | None) -> None:
    video.save()
    # A new video, or a changed thumbnail or source URL: its thumbnail is fetched after commit.
    thumbnails.queue_thumbnail(video=video)
    if people is not None:
        video.appearances.all().delete()
        Appearance.objects.bulk_create(
            Appearance(
                video=video,
                person=appearance["person"],
                organisation=appearance.get("organisation"),
                position=position,
            )
            for position, appearance in enumerate(people, 1)
        )
    if topics is not None:
        video.topics.set(topics)


@transaction.atomic
def save_summary(
    *,
    summary: Summary,
    parts: Parts,
    user: gate.Actor,
    comment: str = "",
    action: Action | None = None,
    video: Video | None = None,
    people: People | None = None,
    topics: list[Topic] | None = None,
) -> Summary:
    """Save a whole summary as an editor changed it: the one write path of the admin and
    the API. Input is validated by the caller with the rules of `editing.rules`.

    `summary` is a draft, a summary in review or a working copy: a published summary is
    changed only through its working copy (`copies.edit_target` says which to write to),
    and saving one here raises PermissionDenied, as does a `user` who may not change (or
    add) summaries.

    `parts` maps a part model (KeyPoint, Takeaway, Chapter, Caveat) to every part of that
    kind the summary has after the save, in reading order (unsaved or changed objects);
    parts of that kind not in the list are deleted, and kinds left out are unchanged.
    `video`, when given, is the summary's video with the editor's values set (unsaved),
    with its `people` ({"person", "organisation"} each) and `topics` when those are given:
    saved first for a draft; for a working copy, kept as its `video_changes`, written to
    the video when the changes are published. `comment` and `action` say in history what
    the revision did (`revisions.record_action`; an ordinary save has no action).

    Every text of the summary, its parts and the video is stored normalised first
    (`text.line_endings.normalised_text`: LF line breaks, no whitespace at the end), so a
    browser's CRLF is no edit.

    Side effects, in one transaction: the summary and its parts saved (positions 1..n,
    Markdown rendered), citations and search text rebuilt, checks of new or due sources
    queued for after the commit (and the video's thumbnail fetch, when its address
    changed), every cached page made stale (not for a working copy, which readers never
    see), and one revision holding the summary with its parts (and the video) by `user`,
    with `comment`. A working copy scheduled to go live is no longer scheduled: what goes
    live is what a reviewer saw. Raises EditConflict when someone saved the summary after
    it was read.
    """
    gate.require(
        user,
        gate.CHANGE if summary.pk else gate.ADD,
        "change summaries" if summary.pk else "add summaries",
    )
    if summary.pk and copies.needs_working_copy(summary):
        raise PermissionDenied(
            "A published summary is changed only through its unpublished changes."
        )
    _normalise_texts(summary, parts, video)
    # Rendering, citations and the search text each read every text: converted once.
    with reversion.create_revision(manage_manually=True), remembering():
        if video is not None:
            if summary.working_copy_of is not None:
                live = summary.working_copy_of.summarised_video
                _keep_video_changes(summary, live, video, people, topics)
            else:
                _save_video(video, people, topics)
                summary.video = video
        if summary.is_working_copy and summary.publish_at is not None:
            summary.publish_at, summary.scheduled_version = None, None
        summary.updated_by = user if user is not None and user.is_authenticated else None
        adding = summary.pk is None
        summary.save()
        if not adding:  # before any part is written: a deleted part deletes its citations
            lock_citations(summary_ids=[summary.pk])
        _keep_caveats_of_deleted_targets(parts, summary)
        for model in PART_MODELS:
            if model in parts:
                _save_parts(model, parts[model], summary)
        receipts.refresh_pins(summary=summary)
        # Checks of new or due sources go to the workers once this transaction commits:
        # new sources are inserted claimed for it, the others claimed after.
        refresh_derived_data(summary=summary, claim_new_sources=True)
        checking.queue_checks_for_summary(summary=summary)
        if not summary.is_working_copy:  # readers never see a copy
            content_changed(purge=cache_tags.of_summary_change(summary))
        # Added last, so that the revision holds the parts as saved (with final positions).
        reversion.add_to_revision(summary)
        if video is not None and not summary.is_working_copy:
            reversion.add_to_revision(video)
        if user is not None and user.is_authenticated:
            reversion.set_user(user)
        if comment:
            reversion.set_comment(comment)
        if action is not None:
            record_action(action)
    return summary


def _keep_video_changes(
    copy: Summary,
    live: Video,
    video: Video,
    people: People | None,
    topics: list[Topic] | None,
) -> None:
    """Record the video as edited on the working copy (the `live` video is not touched)."""
    changes = video_changes.changes_between(live, video, people=people, topics=topics)
    copy.video_changes = video_changes.merged(
        copy.video_changes,
        changes,
        people_given=people is not None,
        topics_given=topics is not None,
    )


def _write(
    *,
    summary: Summary,
    video: Video,
    data: Payload,
    user: User | AnonymousUser,
    full: bool,
    comment: str,
) -> Summary:
    """Validate everything, then save the summary through save_summary."""
    errors = _Errors()
    video_data = data.get("video")
    if video_data is not None:
        _prepare_video(video, video_data, full=full, errors=errors)
    if "tldr" in data:
        summary.tldr = data["tldr"]
    try:
        summary.full_clean(exclude=["video"], validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        errors.add_model_errors("", exc)

    items = {key: data.get(key, []) for key, *_ in ITEM_KINDS} if full else data
    existing = _existing_items(summary)
    _check_items(items, existing, video.duration_seconds, errors)
    errors.raise_if_any()

    # Caveats refer to chapters and takeaways by position: this request's, or the summary's.
    objects: dict[PartModel, list[Part]] = {}
    targets: dict[str, Sequence[Part]] = {}
    for key, model, *_ in ITEM_KINDS:
        if key in items:
            objects[model] = _build_items(key, model, items[key], summary, existing, targets)
            _clean_items(key, objects[model], errors)
        targets[key] = objects.get(model, existing[key])
    errors.raise_if_any()

    people, topics = None, None  # None: not changed
    if video_data is not None:
        if "people" in video_data or full:
            people = video_data.get("people", [])
        if "topics" in video_data or full:
            topics = video_data.get("topics", [])
    return save_summary(
        summary=summary,
        parts=objects,
        user=user,
        comment=comment,
        video=video if video_data is not None else None,
        people=people,
        topics=topics,
    )


@transaction.atomic
def create_summary(*, data: Payload, user: User | AnonymousUser) -> Summary:
    """Create a summary (a draft) with its video and parts from one API request.

    The video is created, or, when a video with the slug exists and has no summary yet,
    updated and used. Everything is validated before anything is written; on any error
    nothing is saved (ValidationError keyed by input path). Records one revision (user,
    comment) holding the summary with its parts and the video; rebuilds citations and the
    search text. Raises PermissionDenied when the user may not add or change videos.
    """
    video_data = data["video"]
    video = Video.objects.filter(slug=video_data["slug"]).first()
    if video is None:
        _check_permission(user, "add_video")
        video = Video(slug=video_data["slug"])
    else:
        _check_permission(user, "change_video")
        if Summary.objects.filter(video=video).exists():
            raise ValidationError(
                {"video.slug": "This video already has a summary; update it with PUT or PATCH."}
            )
    summary = Summary(video=video, created_by=user if user.is_authenticated else None)
    return _write(
        summary=summary,
        video=video,
        data=data,
        user=user,
        full=True,
        comment="Created through the API.",
    )


@transaction.atomic
def update_summary(
    *, summary: Summary, data: Payload, user: User | AnonymousUser, partial: bool
) -> Summary:
    """Replace a summary's content (PUT) or the parts the request names (PATCH).

    Lists replace the summary's items of that kind; an item sent with its `id` keeps its
    row (and its citations' edited key phrases). `summary` may be a working copy (the
    caller resolves a published summary to its copy: copies.start_working_copy).
    Validation and atomicity as create_summary. Raises EditConflict when someone saved
    the summary after it was read (the caller locked the row and compared versions before).
    """
    summary._prefetched_objects_cache = {}  # type: ignore[attr-defined]  # Django's, not in the stubs
    video = summary.summarised_video
    if summary.is_working_copy:  # the video as the changes already make it
        video = video_changes.pending_video(video, summary.video_changes)
    video_data = data.get("video")
    if video_data is not None:
        if "slug" in video_data and video_data["slug"] != video.slug:
            raise ValidationError({"video.slug": "A summary's video slug cannot change."})
        _check_permission(user, "change_video")
    changed = ", ".join(data) or "nothing"
    return _write(
        summary=summary,
        video=video,
        data=data,
        user=user,
        full=not partial,
        comment=f"Changed through the API ({changed}).",
    )


@transaction.atomic
def edit_video(
    *,
    summary: Summary,
    video: Video,
    people: People | None,
    topics: list[Topic] | None,
    user: User | AnonymousUser,
    comment: str = "",
) -> Summary:
    """An editor's change to the video of a published summary (the video's own page): kept
    with the summary's unpublished changes (made for it when it has none), like an edit
    of the video through the summary. `video` is the video with the editor's values set,
    unsaved; `people` and `topics` are None when not changed. Returns what was written to:
    the working copy, or the summary itself when the change changed nothing. Raises
    PermissionDenied when `user` may not change videos and summaries.
    """
    _check_permission(user, "change_video")
    with transaction.atomic():  # a copy made for the edit goes with it when it changes nothing
        target, _ids, made = copies.edit_target(summary=summary, user=user)
        save_summary(
            summary=target,
            parts={},
            user=user,
            comment=comment or "Changed the video",
            video=video,
            people=people,
            topics=topics,
        )
        if copies.drop_if_unchanged(copy=target, made=made):
            return summary
    return target
