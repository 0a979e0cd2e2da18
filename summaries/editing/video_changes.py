"""A published summary's video changes as part of its unpublished changes.

What readers see of a video (its title, blurb, channel, length, topics, people…) is part
of what its summary publishes, so an edit to the video of a published summary is kept on
the summary's working copy (`Summary.video_changes`) and applied to the video when the
changes are published. Values are stored as JSON: ids for the channel, topics, people and
organisations, ISO dates.
"""

from datetime import date
from typing import Any, TypeAlias, TypeVar

from django.db.models import Model, QuerySet

from summaries import thumbnails
from summaries.models import Appearance, Organisation, Person, Summary, Topic, Video

# Pending changes as stored in Summary.video_changes: field name -> JSON value, with
# "people" ([[person id, organisation id or None], …]) and "topics" ([ids]).
Changes: TypeAlias = dict[str, Any]
# A video's people as an editor gives them: {"person": Person, "organisation": …} each.
People: TypeAlias = list[dict[str, Any]]
M = TypeVar("M", bound=Model)

# The video's own fields an editor changes (its slug, its address on this site, never does
# through a summary; platform fields are derived from the source URL).
FIELDS = (
    "title",
    "channel_id",
    "blurb",
    "source_url",
    "thumbnail_url",
    "duration_seconds",
    "language",
    "published_on",
)


def duration_of(summary: Summary) -> int | None:
    """How long the summary's video is, as its unpublished changes would make it."""
    video = summary.summarised_video
    if video is None:
        return None
    duration: int | None = summary.video_changes.get("duration_seconds", video.duration_seconds)
    return duration


def _stored(value: object) -> object:
    return value.isoformat() if isinstance(value, date) else value


def _loaded(name: str, value: Any) -> Any:
    return date.fromisoformat(value) if name == "published_on" and value else value


def people_rows(video: Video) -> list[list[int | None]]:
    """[[person id, organisation id or None], …] in the order the video lists them."""
    return [[a.person_id, a.organisation_id] for a in video.appearances.order_by("position", "id")]


def topic_ids(video: Video) -> list[int]:
    return sorted(video.topics.values_list("pk", flat=True))


def changes_between(
    live: Video, edited: Video, *, people: People | None, topics: list[Topic] | None
) -> Changes:
    """What `edited` (an unsaved Video, the live one with an editor's values set) and the
    given people and topics change in `live` as stored: only the values that differ."""
    stored = Video.objects.get(pk=live.pk)
    changes: Changes = {
        name: _stored(getattr(edited, name))
        for name in FIELDS
        if getattr(edited, name) != getattr(stored, name)
    }
    if people is not None:
        rows = [[p["person"].pk, getattr(p.get("organisation"), "pk", None)] for p in people]
        if rows != people_rows(stored):
            changes["people"] = rows
    if topics is not None:
        ids = sorted(topic.pk for topic in topics)
        if ids != topic_ids(stored):
            changes["topics"] = ids
    return changes


def merged(
    pending: Changes, changes: Changes, *, people_given: bool, topics_given: bool
) -> Changes:
    """The pending changes after a new edit: its field values replace all earlier ones (they
    were computed from the pending video), people and topics only when the edit gave them."""
    result = dict(changes)
    if not people_given and "people" in pending:
        result["people"] = pending["people"]
    if not topics_given and "topics" in pending:
        result["topics"] = pending["topics"]
    return result


def pending_video(video: Video, changes: Changes) -> Video:
    """An unsaved copy of `video` as the changes would make it, for forms, previews and the
    API's view of the unpublished changes; its topics and people are the pending ones."""
    edited = Video.objects.select_related("channel").get(pk=video.pk)
    for name in FIELDS:
        if name in changes:
            setattr(edited, name, _loaded(name, changes[name]))
    if "channel_id" in changes:
        edited.channel = type(edited.channel).objects.get(pk=changes["channel_id"])
    cache: dict[str, QuerySet[Any]] = {}
    if "topics" in changes:
        cache["topics"] = _cached(Topic.objects.filter(pk__in=changes["topics"]))
    if "people" in changes:
        cache["appearances"] = _cached(Appearance.objects.none(), _appearances(edited, changes))
    edited._prefetched_objects_cache = cache  # type: ignore[attr-defined]  # Django's, not in the stubs
    return edited


def _appearances(video: Video, changes: Changes) -> list[Appearance]:
    people = Person.objects.in_bulk([row[0] for row in changes["people"]])
    organisations = Organisation.objects.in_bulk([row[1] for row in changes["people"] if row[1]])
    return [
        Appearance(
            video=video,
            person=people[person_id],
            organisation=organisations.get(organisation_id),
            position=position,
        )
        for position, (person_id, organisation_id) in enumerate(changes["people"], 1)
        if person_id in people
    ]


def _cached(queryset: QuerySet[M], rows: list[M] | None = None) -> QuerySet[M]:
    """A queryset that answers from `rows` (or its own rows, read now) without a query, as a
    prefetched relation does."""
    queryset._result_cache = list(queryset) if rows is None else rows
    queryset._prefetch_done = True  # type: ignore[attr-defined]  # Django's, not in the stubs
    return queryset


def apply(video: Video, changes: Changes) -> Video:
    """Write pending changes onto the video (when they are published or taken back)."""
    if not changes:
        return video
    for name in FIELDS:
        if name in changes:
            setattr(video, name, _loaded(name, changes[name]))
    video.save()
    thumbnails.queue_thumbnail(video=video)
    if "people" in changes:
        video.appearances.all().delete()
        people = set(
            Person.objects.filter(pk__in=[r[0] for r in changes["people"]]).values_list(
                "pk", flat=True
            )
        )
        organisations = set(
            Organisation.objects.filter(
                pk__in=[r[1] for r in changes["people"] if r[1]]
            ).values_list("pk", flat=True)
        )
        Appearance.objects.bulk_create(
            Appearance(
                video=video,
                person_id=person_id,
                organisation_id=organisation_id if organisation_id in organisations else None,
                position=position,
            )
            for position, (person_id, organisation_id) in enumerate(changes["people"], 1)
            if person_id in people
        )
    if "topics" in changes:
        video.topics.set(Topic.objects.filter(pk__in=changes["topics"]))
    return video
