"""Load the demo content (summaries/demo/data.py) into the database, idempotently."""

import datetime
from collections import Counter

import reversion
from django.db import models, transaction

from summaries.editing import derived
from summaries.models import (
    Appearance,
    Caveat,
    Channel,
    Chapter,
    KeyPoint,
    Organisation,
    Person,
    Summary,
    Takeaway,
    Topic,
    Video,
)
from summaries.pagecache.generation import content_changed

from . import data as demo_data
from . import receipts as demo_receipts
from . import transcripts as demo_transcripts
from .thumbnails import store_demo_thumbnails

REVISION_COMMENT = "Loaded the demo content"


class _Loader:
    """Upserts rows and counts what it created, updated and deleted."""

    def __init__(self):
        self.created = Counter()
        self.updated = Counter()
        self.deleted = Counter()
        self._new = set()  # (model, pk) of the objects created by this run

    def upsert(self, model, lookup: dict, values: dict) -> tuple[models.Model, bool]:
        """Like update_or_create, but an object whose values already match is not saved.

        update_or_create saves every object it finds, which would bump updated_at (and the
        summary's lock version) and record a revision on every run.
        Returns (object, whether it was created or changed).
        """
        obj = model.objects.filter(**lookup).first()
        created = obj is None
        if created:
            obj = model(**lookup, **values)
            self.created[model.__name__] += 1
        else:
            changed = False
            for name, value in values.items():
                field = model._meta.get_field(name)
                current = getattr(obj, field.attname)
                wanted = value.pk if isinstance(value, models.Model) else value
                if current != wanted:
                    setattr(obj, name, value)
                    changed = True
            if not changed:
                return obj, False
            self.updated[model.__name__] += 1
        obj.full_clean()
        obj.save()
        if created:
            self._new.add((model, obj.pk))
        return obj, True

    def delete(self, queryset) -> bool:
        deleted, per_model = queryset.delete()
        for label, count in per_model.items():
            self.deleted[label.rsplit(".", 1)[-1]] += count
        return bool(deleted)

    def set_topics(self, video: Video, topics: list[Topic]) -> bool:
        wanted = {topic.pk for topic in topics}
        if set(video.topics.values_list("pk", flat=True)) == wanted:
            return False
        video.topics.set(topics)
        if (Video, video.pk) not in self._new:
            self.updated["Video topics"] += 1
        return True

    def report(self) -> dict:
        return {
            "created": dict(self.created),
            "updated": dict(self.updated),
            "deleted": dict(self.deleted),
        }


def _publish_at(date: datetime.date) -> datetime.datetime:
    return datetime.datetime.combine(date, demo_data.PUBLISH_TIME)


def _load_video(
    loader: _Loader, data: dict, channel, people, organisations, topics
) -> tuple[Video, bool]:
    """The video with its appearances and topics; whether any of them changed."""
    fields = {k: v for k, v in data.items() if k not in ("slug", "appearances", "topics")}
    video, changed = loader.upsert(Video, {"slug": data["slug"]}, {**fields, "channel": channel})
    wanted_people = []
    for position, (person_slug, organisation_slug) in enumerate(data["appearances"], start=1):
        person = people[person_slug]
        wanted_people.append(person.pk)
        _, appearance_changed = loader.upsert(
            Appearance,
            {"video": video, "person": person},
            {"organisation": organisations[organisation_slug], "position": position},
        )
        changed |= appearance_changed
    changed |= loader.delete(video.appearances.exclude(person__in=wanted_people))
    changed |= loader.set_topics(video, [topics[slug] for slug in data["topics"]])
    return video, changed


def _load_summary(loader: _Loader, video: Video, data: dict) -> tuple[Summary, bool]:
    """The summary of a video with its ordered parts; items past the data's end are deleted.
    Returns the summary and whether it or any part changed."""
    publish_at = _publish_at(video.published_on)
    summary, changed = loader.upsert(
        Summary,
        {"video": video},
        {
            "tldr": data["tldr"],
            "status": Summary.Status.PUBLISHED,
            "publish_at": publish_at,
            "first_published_at": publish_at,
        },
    )

    def items(model, rows: list[dict]) -> dict[int, models.Model]:
        nonlocal changed
        saved = {}
        for position, values in enumerate(rows, start=1):
            saved[position], item_changed = loader.upsert(
                model, {"summary": summary, "position": position}, values
            )
            changed |= item_changed
        changed |= loader.delete(model.objects.filter(summary=summary, position__gt=len(rows)))
        return saved

    items(KeyPoint, data.get("key_points", []))
    takeaways = items(Takeaway, [{"text": text} for text in data.get("takeaways", [])])
    chapters = items(Chapter, data.get("chapters", []))
    items(
        Caveat,
        [
            {
                "chapter": chapters.get(caveat.get("chapter")),
                "takeaway": takeaways.get(caveat.get("takeaway")),
                "claim": caveat["claim"],
                "text": caveat["text"],
            }
            for caveat in data.get("caveats", [])
        ],
    )
    return summary, changed


def store_thumbnails() -> int:
    """Drawn thumbnails for the demo's videos that have none (summaries/demo/thumbnails.py);
    how many were stored. Also for a demo loaded before thumbnails existed."""
    slugs = [demo_data.MAIN_VIDEO["slug"], *(row["slug"] for row in demo_data.MORE_VIDEOS)]
    return store_demo_thumbnails(Video.objects.filter(slug__in=slugs).select_related("channel"))


def demo_is_loaded() -> bool:
    return Summary.objects.filter(video__slug=demo_data.MAIN_VIDEO["slug"]).exists()


def load_demo() -> dict:
    """Create or update the demo channel, its seven videos and their published summaries.

    Idempotent: rows are matched on slugs (and on summary + position for ordered parts), and
    an object whose values already match is not saved, so a second run writes nothing, keeps
    every updated_at and records no revision. Everything it writes is validated with
    full_clean(). History, each revision commented "Loaded the demo content": one per
    summary that changed, holding that summary with its parts and its video (with the
    video's appearances), as an editor's save does, so that restoring it in the admin
    touches no other summary or video; and one holding the catalogue rows that changed
    (channel, organisations, people, topics). Citations and their sources are rebuilt from
    the Markdown links (derived.sync_citations). The main video gets its transcript, live,
    and its summary's statements pinned to it and verified (summaries/demo/receipts.py),
    unless they already are.
    Returns {"created"|"updated"|"deleted": {model name: count}}; all empty when nothing
    changed.
    """
    loader = _Loader()
    with transaction.atomic():
        catalogue = _load_catalogue(loader)
        # Oldest first: cards with the same date are listed newest id first, so creating
        # them in this order keeps the page's order.
        for data in reversed(demo_data.MORE_VIDEOS):
            _load_entry(loader, data, {"tldr": data["blurb"]}, catalogue)
        _load_entry(
            loader,
            demo_data.MAIN_VIDEO,
            demo_data.MAIN_SUMMARY,
            catalogue,
            demo_transcripts.auto_caption_vtt(),
        )
        if any(loader.report().values()):
            content_changed()
        # Drawn, not fetched: the demo's YouTube ids are made up (the worker then has
        # nothing to fetch for them). Storing one makes cached pages stale by itself.
        drawn = store_thumbnails()
        if drawn:
            loader.created["Thumbnail"] += drawn
    return loader.report()


def _load_catalogue(loader: _Loader) -> dict:
    """The channel, organisations, people and topics, by kind and slug; those that changed
    are recorded in one revision of their own."""
    # Managed manually: only what is added below is recorded, never a row saved on the way.
    with reversion.create_revision(manage_manually=True):
        reversion.set_comment(REVISION_COMMENT)
        catalogue = {}
        for kind, model, rows in (
            ("channels", Channel, [demo_data.CHANNEL]),
            ("organisations", Organisation, demo_data.ORGANISATIONS),
            ("people", Person, demo_data.PEOPLE),
            ("topics", Topic, demo_data.TOPICS),
        ):
            catalogue[kind] = {}
            for row in rows:
                obj, changed = loader.upsert(model, {"slug": row["slug"]}, _without_slug(row))
                catalogue[kind][row["slug"]] = obj
                if changed:
                    reversion.add_to_revision(obj)
    return catalogue


def _load_entry(
    loader: _Loader,
    video_data: dict,
    summary_data: dict,
    catalogue: dict,
    transcript: bytes | None = None,
):
    """One video and its summary, recorded (when anything changed) in a revision of their
    own: a revision shared by several summaries would, restored on one, bring back every
    other one as it was, publication included. With `transcript`, the summary's receipts
    too (summaries/demo/receipts.py): the transcript is imported in a revision of its own,
    the pins are recorded with the summary."""
    video, video_changed = _load_video(
        loader,
        video_data,
        catalogue["channels"][demo_data.CHANNEL["slug"]],
        catalogue["people"],
        catalogue["organisations"],
        catalogue["topics"],
    )
    summary, summary_changed = _load_summary(loader, video, summary_data)
    pinning = False
    if transcript is not None and not demo_receipts.receipts_hold(summary, transcript, loader):
        demo_receipts.start_pinning(summary, transcript, loader)
        pinning = True
    # Managed manually: only what is added here is recorded (the pins' services add the
    # summary and its parts as they pin them).
    with reversion.create_revision(manage_manually=True):
        if pinning:
            demo_receipts.pin_and_publish(summary, loader)
            summary_changed = True
        before = set(summary.citations.values_list("pk", flat=True))
        citations = derived.sync_citations(summary=summary)
        derived.update_search_document(summary=summary)
        new = sum(1 for citation in citations if citation.pk not in before)
        gone = len(before - {citation.pk for citation in citations})
        if new:
            loader.created["Citation"] += new
        if gone:
            loader.deleted["Citation"] += gone
        if video_changed or summary_changed:
            # Added last, so that the revision holds the rows as saved. The summary follows
            # its parts and the video its appearances: restoring the revision brings back
            # the whole summary and its video card.
            reversion.add_to_revision(summary)
            reversion.add_to_revision(video)
        reversion.set_comment(REVISION_COMMENT)
    return summary


def _without_slug(row: dict) -> dict:
    return {k: v for k, v in row.items() if k != "slug"}
