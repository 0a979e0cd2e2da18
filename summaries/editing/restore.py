"""Restoring an old revision of a summary: an edit like any other.

The revision's 30-second text and parts are written as new content of the summary through
`save.save_summary`, to whatever an edit of the summary writes to (`copies.edit_target`):
a draft takes them itself; a published summary gets them as unpublished changes, which
readers do not see until a reviewer publishes them. Nothing else a revision may hold
(another summary, a video, people) is touched, and publication never changes.
"""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from reversion.models import Version

from summaries.models import Chapter, KeyPoint, Summary, Takeaway

from . import copies, gate, revisions, save
from .items import PART_MODELS, Part, PartModel

# Set by save_summary (positions, rendered HTML) or by the summary restored to.
NOT_RESTORED = {"id", "summary", "position"}
# Not edited in forms, but content: the save verifies them again against the transcript as it
# is now, and keeps an approval or override only where statement, transcript and verdict are
# those it was given for.
RESTORED_PINS = {"pin", "quote_pins"}
TARGETS: dict[str, PartModel] = {
    "chapter_id": Chapter,
    "key_point_id": KeyPoint,
    "takeaway_id": Takeaway,
}


def history_versions(summary: Summary) -> QuerySet[Any]:
    """Every version of the summary's history, newest first: its own revisions and those of
    its unpublished changes (which join its own when they are published or discarded)."""
    ids = [str(summary.pk)]
    copy = copies.working_copy_of(summary)
    if copy is not None:
        ids.append(str(copy.pk))
    versions: QuerySet[Any] = (
        Version.objects.get_for_model(Summary)
        .filter(object_id__in=ids)
        .select_related("revision", "revision__user", "revision__action")
        .order_by("-revision__date_created", "-pk")
    )
    return versions


def describe(version: Version) -> str:
    """ "the version alice saved on 2026-12-05 10:02:03" """
    saved = timezone.localtime(version.revision.date_created)
    if version.revision.user is None:  # saved by a script or a since deleted account
        return f"the version saved on {saved:%Y-%m-%d %H:%M:%S}"
    return f"the version {version.revision.user.get_username()} saved on {saved:%Y-%m-%d %H:%M:%S}"


@transaction.atomic
def restore_revision(
    *, summary: Summary, version: Version, user: gate.Actor
) -> tuple[Summary, bool]:
    """Write the content `version` (a version of `summary` or of its changes) held.

    Returns (what was written to, whether a working copy was made for it); a restore
    after which the changes say what the live summary says leaves no copy (one that
    existed is dropped, its revisions joining the summary's history:
    copies.drop_if_unchanged). Raises ValidationError when the stored content is no
    longer valid (naming the part), PermissionDenied when `user` may not change summaries,
    reversion's RevertError when the version cannot be read.
    """
    stored = version.field_dict
    parts = _stored_parts(version)
    with transaction.atomic():  # a copy made for the restore goes with it when unchanged
        target, _ids, made = copies.edit_target(summary=summary, user=user)
        target.tldr = stored.get("tldr", target.tldr)
        _check(target, parts)
        save.save_summary(
            summary=target,
            parts=parts,
            user=user,
            comment=f"Restored the content of {describe(version)}",
            action=revisions.Action.RESTORED,
        )
        if copies.drop_if_unchanged(copy=target, made=made):
            return summary, False
    return target, made


def _stored_parts(version: Version) -> dict[PartModel, list[Part]]:
    """Unsaved parts as the revision stored them, in order; caveats point at the chapters
    and takeaways built here (new rows: the stored ones may be gone or belong elsewhere)."""
    stored = revisions.Snapshot(version).parts
    built: dict[tuple[PartModel, int], Part] = {}
    parts: dict[PartModel, list[Part]] = {}
    for model in PART_MODELS:
        objects = []
        rows = sorted(stored[model].values(), key=lambda v: (v.get("position") or 0, v["id"]))
        for values in rows:
            obj = _built(model, values, built)
            built[(model, values["id"])] = obj
            objects.append(obj)
        parts[model] = objects
    return parts


def _built(
    model: PartModel, values: revisions.Values, built: dict[tuple[PartModel, int], Part]
) -> Part:
    obj = model()
    for field in model._meta.concrete_fields:
        editable = field.editable or field.name in RESTORED_PINS
        if field.name in NOT_RESTORED or not editable or field.attname not in values:
            continue
        if field.attname in TARGETS:
            target = built.get((TARGETS[field.attname], values[field.attname]))
            setattr(obj, field.name, target)  # a target the revision lacks: none
        else:
            setattr(obj, field.attname, values[field.attname])
    return obj


def _check(summary: Summary, parts: dict[PartModel, list[Part]]) -> None:
    """The stored content must still be valid content (rules may have tightened since)."""
    problems = []
    try:
        summary.full_clean(exclude=["video"], validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        problems += error.messages
    for model, objects in parts.items():
        for index, obj in enumerate(objects, 1):
            try:
                obj.full_clean(
                    exclude=["summary", "chapter", "key_point", "takeaway", "position"],
                    validate_unique=False,
                    validate_constraints=False,
                )
            except ValidationError as error:
                label = str(model._meta.verbose_name).capitalize()
                problems += [f"{label} {index}: {message}" for message in error.messages]
    if problems:
        raise ValidationError(["This version can no longer be restored as it is.", *problems])
