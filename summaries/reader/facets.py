"""A list page's filter choices (a channel's, a person's or a topic's), stored per owner.

`choices(lookup, owner)` is what VideoListView offers: the topics, people and languages of
the owner's live videos, and their number. Computing them reads every live video of the
owner, so they are kept in ListFacets and computed again only when something they depend
on changed:

- the receivers below forget the choices of every owner a save touches (the video's
  channel, its people, its topics), in the saving transaction: a summary saved or deleted,
  a video's channel or language, its topics, an appearance, a person's or topic's name;
- a scheduled publication changes the choices with no save: a stored row is valid until the
  owner's next one (`valid_until`).

Forgetting moves the row's `version` on; choices computed by a reader are stored only if
the version is still the one read before computing, so choices computed from data that
changed meanwhile are never kept. Writes that bypass save() (bulk_create, update()) must
call `forget_all()`.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection, connections
from django.db.models import Min
from django.db.models.signals import m2m_changed, post_save, pre_delete, pre_save
from django.dispatch import receiver
from django.utils import timezone

from summaries.background import queue_after_commit
from summaries.models import (
    LANGUAGE_CHOICES,
    Appearance,
    Channel,
    ListFacets,
    Person,
    Summary,
    Topic,
    Video,
)

from .compiled import CompiledQuery

# The Video lookup naming a list's owner -> the kind of owner.
KINDS = {
    "channel": ListFacets.Kind.CHANNEL,
    "people": ListFacets.Kind.PERSON,
    "topics": ListFacets.Kind.TOPIC,
}
LOOKUPS = {kind: lookup for lookup, kind in KINDS.items()}
OWNER_MODELS = {
    ListFacets.Kind.CHANNEL: Channel,
    ListFacets.Kind.PERSON: Person,
    ListFacets.Kind.TOPIC: Topic,
}
_LANGUAGE_NAMES = dict(LANGUAGE_CHOICES)


def _stored_query(kind: str) -> CompiledQuery:
    return CompiledQuery(
        ListFacets,
        lambda owner_id: ListFacets.objects.filter(kind=kind, owner_id=owner_id).values_list(
            "version", "choices", "valid_until"
        ),
        ids=("owner_id",),
    )


_STORED = {lookup: _stored_query(kind) for lookup, kind in KINDS.items()}


def choices(lookup: str, owner, now=None) -> dict:
    """The owner's filter choices: "topic" and "person" as (slug, name) pairs in name order,
    "language" as (code, name) pairs in LANGUAGE_CHOICES order, and "total", the number of
    its live videos. Stored ones when still valid (one query); else computed and stored."""
    return _shaped(_choices(lookup, owner, now or timezone.now())[0])


def _choices(lookup: str, owner, now) -> tuple[dict, bool]:
    """(the choices as stored, whether they were computed now)."""
    rows = _STORED[lookup].run(owner_id=owner.pk)
    version, stored, valid_until = rows[0] if rows else (None, None, None)
    if stored is not None and (valid_until is None or valid_until > now):
        return stored, False
    found = compute(lookup, owner, now)
    _store(KINDS[lookup], owner.pk, version, found, _next_change(lookup, owner, now), now)
    return found, True


def _shaped(stored: dict) -> dict:
    return {
        "topic": [tuple(pair) for pair in stored["topic"]],
        "person": [tuple(pair) for pair in stored["person"]],
        "language": [(code, _LANGUAGE_NAMES.get(code, code)) for code in stored["language"]],
        "total": stored["total"],
    }


def compute(lookup: str, owner, now=None) -> dict:
    """The choices as stored: topics and people as [slug, name], language codes in
    LANGUAGE_CHOICES order, and the total.

    One query: the owner's live videos are found once (a WITH, which PostgreSQL and SQLite
    compute once when it is read several times), then their languages, topics and people.
    """
    live = (
        Video.objects.published(now).filter(**{lookup: owner}).order_by().values("pk", "language")
    )
    live_sql, params = live.query.sql_with_params()
    quote = connections[live.db].ops.quote_name
    topics, people = quote(Topic._meta.db_table), quote(Person._meta.db_table)
    video_topics = quote(Video.topics.through._meta.db_table)
    appearances = quote(Appearance._meta.db_table)
    # Joins through people or topics could repeat a video: counted once each.
    sql = f"""
        WITH live (id, language) AS ({live_sql})
        SELECT 'language', language, '', COUNT(DISTINCT id) FROM live GROUP BY language
        UNION ALL
        SELECT 'topic', slug, name, 0 FROM {topics} WHERE id IN (
            SELECT topic_id FROM {video_topics} WHERE video_id IN (SELECT id FROM live))
        UNION ALL
        SELECT 'person', slug, name, 0 FROM {people} WHERE id IN (
            SELECT person_id FROM {appearances} WHERE video_id IN (SELECT id FROM live))
        ORDER BY 1, 3, 2
    """  # noqa: S608 - table names from models, values are parameters
    found = {"topic": [], "person": [], "language": {}}
    with connections[live.db].cursor() as cursor:
        cursor.execute(sql, params)
        for kind, value, label, videos in cursor.fetchall():
            if kind == "language":
                found["language"][value] = videos
            else:
                found[kind].append([value, label])
    per_language = found["language"]
    return {
        "topic": found["topic"],
        "person": found["person"],
        "language": [code for code, _ in LANGUAGE_CHOICES if code in per_language],
        "total": sum(per_language.values()),
    }


def _next_change(lookup: str, owner, now):
    """When the owner's next scheduled video goes live (None: none is scheduled)."""
    scheduled = Summary.objects.scheduled(now).filter(**{f"video__{lookup}": owner})
    return scheduled.aggregate(first=Min("publish_at"))["first"]


def _store(kind: str, owner_id: int, version, found: dict, valid_until, now) -> None:
    if version is None:
        # No row yet; a save that forgets this owner meanwhile inserts one first, and
        # then this one is not written.
        ListFacets.objects.bulk_create(
            [
                ListFacets(
                    kind=kind,
                    owner_id=owner_id,
                    choices=found,
                    valid_until=valid_until,
                    computed_at=now,
                )
            ],
            ignore_conflicts=True,
        )
        return
    ListFacets.objects.filter(kind=kind, owner_id=owner_id, version=version).update(
        choices=found, valid_until=valid_until, computed_at=now
    )


# --- Forgetting -------------------------------------------------------------------------


def forget_videos(
    video_ids: Iterable[int], *, people: Iterable[int] = (), topics: Iterable[int] = ()
) -> None:
    """Forget the choices of every owner of these videos (their channels, people and
    topics, as the database holds them now) and of these people and topics: one query."""
    video_ids = list(video_ids)
    marks = ", ".join(["%s"] * len(video_ids))
    _forget(f"IN ({marks})" if video_ids else None, video_ids, people=people, topics=topics)


def _forget_videos_of(*, person=None, topic=None) -> None:
    """Forget the choices of the owners of every video this person appears in or this
    topic is on, and of the person or topic itself (a rename, a deletion)."""
    if person is not None:
        links, column, owners = Appearance, "person_id", {"people": [person.pk]}
    else:
        links, column, owners = Video.topics.through, "topic_id", {"topics": [topic.pk]}
    quote = connection.ops.quote_name
    table = quote(links._meta.db_table)
    videos = f"IN (SELECT video_id FROM {table} WHERE {quote(column)} = %s)"  # noqa: S608
    _forget(videos, [(person or topic).pk], **owners)


def _forget(videos: str | None, params: list, *, people=(), topics=()) -> None:
    """`videos`: an SQL condition on a video id ("IN (…)") with its `params`."""
    people, topics = list(people), list(topics)
    if videos is None and not (people or topics):
        return
    quote = connection.ops.quote_name
    table = quote(ListFacets._meta.db_table)
    owners, values = [], []
    if videos is not None:
        video_table = quote(Video._meta.db_table)
        appearances = quote(Appearance._meta.db_table)
        video_topics = quote(Video.topics.through._meta.db_table)
        # Table names from models; `videos` is a condition built here; values are parameters.
        owners += [
            f"SELECT 'channel' AS kind, channel_id AS owner_id FROM {video_table} "  # noqa: S608
            f"WHERE id {videos}",
            f"SELECT 'person', person_id FROM {appearances} WHERE video_id {videos}",  # noqa: S608
            f"SELECT 'topic', topic_id FROM {video_topics} WHERE video_id {videos}",  # noqa: S608
        ]
        values += params * 3
    for kind, ids in (("person", people), ("topic", topics)):
        for owner_id in ids:
            owners.append("SELECT %s AS kind, %s AS owner_id")
            values += [kind, owner_id]
    union = " UNION ".join(owners)
    # "WHERE true": SQLite reads ON CONFLICT after a bare SELECT as a join's ON.
    sql = f"""
        INSERT INTO {table} (kind, owner_id, version)
        SELECT kind, owner_id, 1 FROM ({union}) AS owners WHERE true
        ON CONFLICT (kind, owner_id) DO UPDATE
        SET version = {table}.version + 1, choices = NULL
        RETURNING kind, owner_id
    """  # noqa: S608 - table names from models, values are parameters
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        forgotten = [[kind, owner_id] for kind, owner_id in cursor.fetchall()]
    if forgotten:
        # Computed again by a worker once the save commits, so that readers find them
        # stored; a reader who comes first computes them itself.
        queue_after_commit("summaries.tasks.refresh_list_facets", forgotten)


def refresh(owners: Iterable[tuple[str, int]], now=None) -> int:
    """Compute and store the choices of these (kind, owner id) where none are stored, as
    the first reader would; owners deleted meanwhile lose their row. Returns how many
    were computed (idempotent: stored ones are kept)."""
    computed = 0
    for kind, owner_id in owners:
        lookup = LOOKUPS[kind]
        owner = OWNER_MODELS[kind].objects.filter(pk=owner_id).first()
        if owner is None:
            ListFacets.objects.filter(kind=kind, owner_id=owner_id).delete()
            continue
        computed += _choices(lookup, owner, now or timezone.now())[1]
    return computed


def forget_all() -> None:
    """After writes that send no signals (bulk_create, update()), with no reader about:
    every owner's choices."""
    ListFacets.objects.all().delete()


def _touches(update_fields, names: set[str]) -> bool:
    return update_fields is None or bool(names & set(update_fields))


@receiver(post_save, sender=Summary, dispatch_uid="facets-summary-saved")
@receiver(pre_delete, sender=Summary, dispatch_uid="facets-summary-deleted")
def _summary_changed(sender, instance, **kwargs):
    # A working copy has no video: it changes nothing readers see until it is merged.
    if instance.video_id:
        forget_videos([instance.video_id])


@receiver(pre_save, sender=Video, dispatch_uid="facets-video-saving")
def _video_moving(sender, instance, raw=False, update_fields=None, **kwargs):
    """A video moved to another channel or language: its old owners forget first."""
    instance._facets_moved = False
    if instance.pk is None or not _touches(update_fields, {"channel", "language"}):
        return
    before = Video.objects.filter(pk=instance.pk).values_list("channel_id", "language").first()
    if before is not None and before != (instance.channel_id, instance.language):
        forget_videos([instance.pk])
        instance._facets_moved = True


@receiver(post_save, sender=Video, dispatch_uid="facets-video-saved")
def _video_moved(sender, instance, **kwargs):
    if getattr(instance, "_facets_moved", False):
        forget_videos([instance.pk])


@receiver(pre_delete, sender=Video, dispatch_uid="facets-video-deleted")
def _video_deleted(sender, instance, **kwargs):
    forget_videos([instance.pk])


@receiver(m2m_changed, sender=Video.topics.through, dispatch_uid="facets-video-topics")
def _topics_changed(sender, instance, action, reverse, pk_set, **kwargs):
    if action not in ("pre_clear", "post_add", "post_remove"):
        return
    if reverse and pk_set is None:  # topic.videos.clear()
        _forget_videos_of(topic=instance)
    elif reverse:  # topic.videos.add(...): pk_set holds videos
        forget_videos(pk_set, topics=[instance.pk])
    else:
        forget_videos([instance.pk], topics=pk_set or ())


@receiver(pre_save, sender=Appearance, dispatch_uid="facets-appearance-saving")
def _appearance_changing(sender, instance, **kwargs):
    """An appearance changed person or video: the old ones forget."""
    if instance.pk is None:
        return
    before = Appearance.objects.filter(pk=instance.pk).values_list("video_id", "person_id").first()
    if before is not None and before != (instance.video_id, instance.person_id):
        forget_videos([before[0]], people=[before[1]])


@receiver(post_save, sender=Appearance, dispatch_uid="facets-appearance-saved")
@receiver(pre_delete, sender=Appearance, dispatch_uid="facets-appearance-deleted")
def _appearance_changed(sender, instance, **kwargs):
    forget_videos([instance.video_id], people=[instance.person_id])


@receiver(post_save, sender=Person, dispatch_uid="facets-person-saved")
def _person_renamed(sender, instance, created=False, update_fields=None, **kwargs):
    if not created and _touches(update_fields, {"name", "slug"}):
        _forget_videos_of(person=instance)


@receiver(post_save, sender=Topic, dispatch_uid="facets-topic-saved")
def _topic_renamed(sender, instance, created=False, update_fields=None, **kwargs):
    if not created and _touches(update_fields, {"name", "slug"}):
        _forget_videos_of(topic=instance)


@receiver(pre_delete, sender=Topic, dispatch_uid="facets-topic-deleted")
def _topic_deleted(sender, instance, **kwargs):
    # Before its videos' links to it are deleted (they send no signal).
    _forget_videos_of(topic=instance)
