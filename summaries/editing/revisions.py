"""Reading a summary's history: what each revision did, and what changed between two.

A summary's revision (django-reversion) holds the Summary row and its parts. Nothing here
writes or renders HTML: the admin's history and compare pages present what it returns.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeAlias

import reversion
from django.db import models
from django.utils import timezone
from reversion.models import Revision, Version

from summaries.models import (
    PinRevision,
    RevisionAction,
    Summary,
    Video,
)
from summaries.text.durations import format_duration
from summaries.text.line_endings import normalised_text

from .items import PART_MODELS, PartModel

# A row's field values by attname, as a revision stores them.
Values: TypeAlias = dict[str, Any]

# --- What a revision did ----------------------------------------------------------------

SAVED = "Saved"

Action = RevisionAction.Kind


def record_action(kind: RevisionAction.Kind) -> None:
    """Say what the revision being recorded does (it is an ordinary save without one). The
    first action given to a revision stands: a save within a publication stays "Published"."""
    reversion.add_meta(RevisionAction, kind=kind)


def action_label(revision: Revision) -> str:
    """What a revision did, in a word or two."""
    try:
        return str(revision.action.get_kind_display())
    except RevisionAction.DoesNotExist:
        return SAVED


# --- Text differences -------------------------------------------------------------------


@dataclass(frozen=True)
class Segment:
    """A run of text, marked when it is not in the other version."""

    text: str
    changed: bool = False


# Beyond this many words on each side of a changed passage, the passage is shown as
# replaced as a whole: a word diff costs up to the product of both lengths.
MAX_DIFF_WORDS = 5_000


def text_diff(old: str, new: str) -> tuple[tuple[Segment, ...], tuple[Segment, ...]]:
    """The old and the new text cut into segments, with the words that differ marked.

    Lines are matched first, then words within the lines that changed, so a long chapter
    with one edited paragraph costs little.
    """
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    old_out, new_out = [], []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        old_text, new_text = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        if tag == "equal":
            old_out.append(Segment(old_text))
            new_out.append(Segment(new_text))
        else:
            old_words, new_words = _word_diff(old_text, new_text)
            old_out.extend(old_words)
            new_out.extend(new_words)
    return _joined(old_out), _joined(new_out)


def _word_diff(old: str, new: str) -> tuple[list[Segment], list[Segment]]:
    old_words, new_words = _words(old), _words(new)
    if max(len(old_words), len(new_words)) > MAX_DIFF_WORDS:
        return [Segment(old, bool(old))], [Segment(new, bool(new))]
    old_out, new_out = [], []
    matcher = difflib.SequenceMatcher(None, old_words, new_words, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        changed = tag != "equal"
        old_out.append(Segment("".join(old_words[i1:i2]), changed))
        new_out.append(Segment("".join(new_words[j1:j2]), changed))
    return old_out, new_out


def _words(text: str) -> list[str]:
    """Words and the spaces between them, so that joining them gives the text back."""
    return [token for token in re.split(r"(\s+)", text) if token]


def _joined(segments: list[Segment]) -> tuple[Segment, ...]:
    """Neighbouring segments of the same kind as one; empty ones dropped."""
    joined: list[Segment] = []
    for segment in segments:
        if not segment.text:
            continue
        if joined and joined[-1].changed == segment.changed:
            joined[-1] = Segment(joined[-1].text + segment.text, segment.changed)
        else:
            joined.append(segment)
    return tuple(joined)


# --- Comparing two revisions ------------------------------------------------------------


@dataclass(frozen=True)
class FieldChange:
    """One field in both versions, as text; `old_segments`/`new_segments` mark the words
    that differ when the field changed."""

    name: str
    label: str
    old: str
    new: str
    old_segments: tuple[Segment, ...] = ()
    new_segments: tuple[Segment, ...] = ()

    @property
    def changed(self) -> bool:
        return self.old != self.new


@dataclass(frozen=True)
class PartChange:
    """One part (a chapter, a takeaway, …) across two revisions, known by its primary key.

    `old_position` is None for a part added, `new_position` None for a part removed.
    `moved` is set when the part changed place among the parts kept in both revisions.
    """

    pk: int
    label: str
    old_position: int | None
    new_position: int | None
    fields: tuple[FieldChange, ...]
    moved: bool = False

    @property
    def added(self) -> bool:
        return self.old_position is None

    @property
    def removed(self) -> bool:
        return self.new_position is None

    @property
    def changed_fields(self) -> tuple[FieldChange, ...]:
        return tuple(change for change in self.fields if change.changed)

    @property
    def unchanged(self) -> bool:
        return not (self.added or self.removed or self.moved or self.changed_fields)


@dataclass(frozen=True)
class PartsComparison:
    """Every part of one kind: in the new order, then the parts removed."""

    kind: str
    parts: tuple[PartChange, ...]

    @property
    def added(self) -> list[PartChange]:
        return [part for part in self.parts if part.added]

    @property
    def removed(self) -> list[PartChange]:
        return [part for part in self.parts if part.removed]

    @property
    def moved(self) -> list[PartChange]:
        return [part for part in self.parts if part.moved]

    @property
    def edited(self) -> list[PartChange]:
        """Parts in both revisions whose content changed."""
        return [p for p in self.parts if not (p.added or p.removed) and p.changed_fields]

    @property
    def unchanged(self) -> list[PartChange]:
        return [part for part in self.parts if part.unchanged]

    @property
    def changed(self) -> bool:
        return any(not part.unchanged for part in self.parts)


@dataclass(frozen=True)
class RevisionComparison:
    fields: tuple[FieldChange, ...]
    parts: tuple[PartsComparison, ...]

    @property
    def changed_fields(self) -> tuple[FieldChange, ...]:
        return tuple(change for change in self.fields if change.changed)

    @property
    def changed(self) -> bool:
        return bool(self.changed_fields) or any(kind.changed for kind in self.parts)


# Not shown: the summary a part belongs to, its position (shown as moves) and what is
# derived from what editors wrote (rendered HTML, search text).
HIDDEN_FIELDS = {"id", "summary", "position", "video"}
# Seconds into the video, shown as the admin shows them (12:30).
TIME_FIELDS = {"time", "start_time"}


def compare_revisions(older_version: Version, newer_version: Version) -> RevisionComparison:
    """What changed in a summary from one revision to another.

    Both are reversion Versions of the same Summary. Raises reversion's RevertError when
    a version's stored data cannot be read any more.
    """
    older, newer = Snapshot(older_version), Snapshot(newer_version)
    return RevisionComparison(
        fields=tuple(
            _field_change(field, older.summary, newer.summary, older, newer)
            for field in _shown_fields(Summary)
        ),
        parts=tuple(_compare_parts(model, older, newer) for model in PART_MODELS),
    )


class Snapshot:
    """A summary and its parts as one revision stored them (field values by attname)."""

    def __init__(self, version: Version) -> None:
        self.summary: Values = version.field_dict
        summary_id = self.summary["id"]
        # A working copy's parts are known by the live parts they were copied from.
        origins = self.summary.get("part_origins") or {}
        self.parts: dict[type[models.Model], dict[int, Values]] = {
            model: {} for model in PART_MODELS
        }
        models_by_type = {model._meta.model_name: model for model in PART_MODELS}
        for revision_id in _revisions_holding_parts(version.revision_id, summary_id):
            for part_version in Version.objects.filter(revision_id=revision_id).select_related(
                "content_type"
            ):
                model = models_by_type.get(part_version.content_type.model)
                if model is None or part_version.content_type.app_label != "summaries":
                    continue
                values = part_version.field_dict
                # One revision may hold several summaries (a bulk publish from the list).
                if values.get("summary_id") == summary_id:
                    values = _as_live(values, model, origins)
                    self.parts[model][values["id"]] = values

    def part_label(self, model: type[models.Model], pk: int) -> str | None:
        values = self.parts.get(model, {}).get(pk)
        return None if values is None else _part_label(model, values)


def _revisions_holding_parts(revision_id: int, summary_id: int) -> list[int]:
    """The revisions whose parts make up the summary's parts in `revision_id`, oldest first.

    A revision holds all of the summary's parts, unless it records a pin action
    (`PinRevision`): then only the parts whose pins it changed, the others being as its
    base revision and the pin revisions since recorded them, a later one overriding."""
    pins = PinRevision.objects.filter(revision_id=revision_id).first()
    if pins is None:
        return [revision_id]
    since = PinRevision.objects.filter(
        base_id=pins.base_id, summary_id=summary_id, revision_id__lte=revision_id
    ).order_by("revision_id")
    return [pins.base_id, *since.values_list("revision_id", flat=True)]


def _as_live(
    values: Values, model: type[models.Model], origins: dict[str, dict[str, int]]
) -> Values:
    """A working copy's part as the live part it was copied from (its id and targets)."""
    if not origins:
        return values
    values = dict(values)
    own = origins.get(model._meta.model_name or "", {})
    values["id"] = own.get(str(values["id"]), values["id"])
    for name, target in (
        ("chapter_id", "chapter"),
        ("key_point_id", "keypoint"),
        ("takeaway_id", "takeaway"),
    ):
        if values.get(name) is not None:
            values[name] = origins.get(target, {}).get(str(values[name]), values[name])
    return values


def _shown_fields(model: type[models.Model]) -> list[models.Field[Any, Any]]:
    return [
        field
        for field in model._meta.concrete_fields
        if field.editable and field.name not in HIDDEN_FIELDS
    ]


def _field_change(
    field: models.Field[Any, Any],
    old_values: Values | None,
    new_values: Values | None,
    older: Snapshot,
    newer: Snapshot,
) -> FieldChange:
    old = _display(field, old_values, older) if old_values is not None else ""
    new = _display(field, new_values, newer) if new_values is not None else ""
    old_segments, new_segments = text_diff(old, new) if old != new else ((), ())
    return FieldChange(
        name=field.name,
        label=str(field.verbose_name).capitalize(),
        old=old,
        new=new,
        old_segments=old_segments,
        new_segments=new_segments,
    )


def _display(field: models.Field[Any, Any], values: Values, snapshot: Snapshot) -> str:
    """A stored field value as an editor reads it."""
    value = values.get(field.attname)
    if value is None or value == "":
        return ""
    if field.choices:
        return str(dict(field.flatchoices).get(value, value))
    if field.is_relation and isinstance(field.related_model, type):
        return _related_label(field.related_model, value, snapshot)
    if field.name in TIME_FIELDS:
        return format_duration(value)
    if isinstance(value, datetime):
        return f"{timezone.localtime(value):%Y-%m-%d %H:%M:%S %Z}"
    if isinstance(value, str):
        # Text saved before it was stored normalised may hold a browser's CRLF: no edit.
        return normalised_text(value)
    return str(value)


def _related_label(model: type[models.Model], pk: int, snapshot: Snapshot) -> str:
    # A caveat's chapter as this revision had it; it may be gone from the database.
    label = snapshot.part_label(model, pk)
    if label is None:
        target = model._default_manager.filter(pk=pk).first()
        label = str(target) if target is not None else f"{model._meta.verbose_name} #{pk}"
    return label


def _part_label(model: type[models.Model], values: Values) -> str:
    name = values.get("title") or values.get("text") or ""
    name = " ".join(name.split())
    if len(name) > 80:
        name = name[:79] + "…"
    return f"{str(model._meta.verbose_name).capitalize()} {values.get('position')}: {name}"


def _compare_parts(model: PartModel, older: Snapshot, newer: Snapshot) -> PartsComparison:
    old_parts, new_parts = older.parts[model], newer.parts[model]
    old_order = sorted(old_parts, key=lambda pk: old_parts[pk].get("position") or 0)
    new_order = sorted(new_parts, key=lambda pk: new_parts[pk].get("position") or 0)
    moved = _moved(
        [pk for pk in old_order if pk in new_parts], [pk for pk in new_order if pk in old_parts]
    )
    fields = _shown_fields(model)
    removed = [pk for pk in old_order if pk not in new_parts]
    changes = []
    for pk in [*new_order, *removed]:
        old_values, new_values = old_parts.get(pk), new_parts.get(pk)
        changes.append(
            PartChange(
                pk=pk,
                label=_part_label(model, new_values or old_parts[pk]),
                old_position=old_values["position"] if old_values else None,
                new_position=new_values["position"] if new_values else None,
                fields=tuple(
                    _field_change(field, old_values, new_values, older, newer) for field in fields
                ),
                moved=pk in moved,
            )
        )
    return PartsComparison(kind=str(model._meta.verbose_name_plural), parts=tuple(changes))


def _moved(old_order: list[int], new_order: list[int]) -> set[int]:
    """The parts that changed place: those outside the longest run kept in order.

    Positions alone would call every part after a removed one "moved"; and when one
    chapter goes from last to first, only that one moved, not all the others.
    """
    matcher = difflib.SequenceMatcher(None, old_order, new_order, autojunk=False)
    kept = {
        pk
        for block in matcher.get_matching_blocks()
        for pk in old_order[block.a : block.a + block.size]
    }
    return set(new_order) - kept


# --- Comparing a live summary with its unpublished changes -------------------------------

# What the changes change of the summary itself: its workflow fields (a copy is in review
# or a draft, with no publish time of its own) and its video are not content.
LIVE_HIDDEN_FIELDS = {"status", "publish_at", "video"}


def compare_live_and_changes(summary: Summary) -> RevisionComparison | None:
    """What the unpublished changes (working copy) of a published summary change, as both
    are stored now: the same comparison as two revisions', the live summary older.

    The copy's parts are known by the live parts they were copied from
    (`Summary.part_origins`), so an edited part is shown edited, not removed and added;
    its pending video changes are shown as fields named "video.<name>". Returns None when
    the summary (or the copy given, for its live summary) has no unpublished changes.
    """
    if summary.working_copy_of is not None:
        summary = summary.working_copy_of
    copy = Summary.objects.filter(working_copy_of=summary).first()
    if copy is None:
        return None
    older, newer = _Rows(summary), _Rows(copy)
    fields = [
        _field_change(field, older.summary, newer.summary, older, newer)
        for field in _shown_fields(Summary)
        if field.name not in LIVE_HIDDEN_FIELDS
    ]
    fields += _video_changes(summary.summarised_video, copy.video_changes)
    return RevisionComparison(
        fields=tuple(fields),
        parts=tuple(_compare_parts(model, older, newer) for model in PART_MODELS),
    )


class _Rows(Snapshot):
    """A summary and its parts as stored now, in a revision's shape (values by attname)."""

    def __init__(self, summary: Summary) -> None:
        self.summary = {f.attname: getattr(summary, f.attname) for f in Summary._meta.fields}
        origins = summary.part_origins or {}
        self.parts = {
            model: {
                values["id"]: values
                for values in (
                    _as_live(dict(row), model, origins)
                    for row in model.objects.filter(summary=summary).values()
                )
            }
            for model in PART_MODELS
        }


def _video_changes(video: Video, changes: dict[str, Any]) -> list[FieldChange]:
    """The video's fields the changes set, as FieldChanges named "video.<field>"."""
    if not changes:
        return []
    from . import video_changes  # it imports the catalogue models this module does not need

    edited = video_changes.pending_video(video, changes)
    shown = []
    for name in (*video_changes.FIELDS, "people", "topics"):
        if name not in changes:
            continue
        old, new = _video_value(video, name), _video_value(edited, name)
        label = "channel" if name == "channel_id" else name.replace("_", " ")
        old_segments, new_segments = text_diff(old, new) if old != new else ((), ())
        shown.append(
            FieldChange(
                name=f"video.{name.removesuffix('_id')}",
                label=f"Video: {label}",
                old=old,
                new=new,
                old_segments=old_segments,
                new_segments=new_segments,
            )
        )
    return shown


def _video_value(video: Video, name: str) -> str:
    """A video's field as an editor reads it (a pending video's from its changes)."""
    if name == "topics":
        return ", ".join(sorted(topic.name for topic in video.topics.all()))
    if name == "people":
        return "; ".join(
            f"{a.person} ({a.organisation})" if a.organisation_id else str(a.person)
            for a in video.appearances.all()
        )
    if name == "channel_id":
        return str(video.channel)
    value = getattr(video, name)
    if value is None or value == "":
        return ""
    if name == "duration_seconds":
        return format_duration(value)
    if name == "language":
        return str(dict(type(video)._meta.get_field("language").flatchoices).get(value, value))
    return str(value)
