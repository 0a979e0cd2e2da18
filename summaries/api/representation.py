"""Summaries as the API's reads show them, built as plain dicts from values() rows.

The serializers (serializers.py) describe this representation for the schema and answer
writes. Reads build the same output here: each list (people, topics, each kind of part,
the citations with their sources) read with one query compiled once per process
(reader/compiled.py) as plain rows, and turned into dicts with the conversions DRF's fields
make (a time in ISO 8601 with `Z`, a date, an absolute URL). DRF's ModelSerializer built
its nested serializers' fields again on every request and read each value through its
field: two thirds of the time of a summary's detail with every cache off.
tests/test_api_representation.py compares the two over varied summaries.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from django.conf import settings
from django.db.models import Count, F, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from rest_framework.reverse import reverse

from summaries.archive.events import copy_values
from summaries.models import (
    Appearance,
    Caveat,
    Chapter,
    Citation,
    KeyPoint,
    Summary,
    Takeaway,
    Video,
)
from summaries.models.base import slug_url
from summaries.models.evidence import EVIDENCE_FIELDS, cited_evidence
from summaries.reader.absolute import site_url
from summaries.reader.compiled import CompiledQuery
from summaries.text.citations import suggest_key_phrase
from summaries.text.durations import format_duration

from .correction_serializers import (
    CorrectionSerializer,
    corrections_requested,
    corrections_shown_to,
)
from .links import api_url
from .permissions import can_see_unpublished
from .pin_serializers import pin_representation, pins_requested, quote_pin_representation
from .summary_serializers import EXPANDABLE

# --- Values as DRF's fields write them -----------------------------------------------------


def _datetime(value: datetime | None, zone) -> str | None:
    """As serializers.DateTimeField: in the current time zone, ISO 8601, UTC as `Z`."""
    if value is None:
        return None
    if timezone.is_naive(value):
        value = timezone.make_aware(value, zone)
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def _date(value: date | None) -> str | None:
    return None if value is None else value.isoformat()


_PLAIN_SLUG = re.compile(r"[-a-zA-Z0-9_]+\Z")
_SLUG_MARKER = "slug-marker-0"


class Links:
    """Absolute addresses as the serializers write them (ApiUrlField, PageUrlField), each
    view's address reversed once per request with a marker in the slug's place."""

    def __init__(self, request):
        self.request = request
        self._patterns: dict[str, list[str]] = {}

    def api(self, view_name: str, slug: str) -> str:
        """The API address on SITE_URL, keeping the request's ?format= (links.py)."""
        if not _PLAIN_SLUG.match(slug):
            return api_url(view_name, kwargs={"slug": slug}, request=self.request)
        parts = self._patterns.get(view_name)
        if parts is None:
            url = api_url(view_name, kwargs={"slug": _SLUG_MARKER}, request=self.request)
            parts = self._patterns[view_name] = url.split(_SLUG_MARKER)
        return slug.join(parts)

    def page(self, path: str) -> str:
        return site_url(path)


@dataclass
class Options:
    """What a request asks to be shown, besides the summary itself."""

    links: Links
    zone: object
    editor: bool  # may see unpublished work (has_working_copy is annotated)
    staff: bool  # sees review notes and reviewers
    pins: bool = False
    pin_context: dict = field(default_factory=dict)

    @classmethod
    def of(cls, request, *, pins: bool = False) -> Options:
        user = getattr(request, "user", None)
        editor = can_see_unpublished(user)
        return cls(
            links=Links(request),
            zone=timezone.get_current_timezone(),
            editor=editor,
            staff=bool(user is not None and user.is_staff),
            pins=pins,
            pin_context={"pin_editor": editor},
        )


# --- Rows ----------------------------------------------------------------------------------

# A video's columns: in a summary's row under "video__", in a video's own row as they are.
VIDEO_COLUMNS = (
    "slug",
    "title",
    "source_url",
    "platform",
    "platform_video_id",
    "duration_seconds",
    "language",
    "published_on",
    "thumbnail_url",
    "blurb",
    "created_at",
    "updated_at",
    "channel__slug",
    "channel__name",
    "channel__updated_at",
)
_VIDEO_KEYS = {
    prefix: {name: f"{prefix}{name}" for name in VIDEO_COLUMNS} for prefix in ("", "video__")
}


# Summary and video columns the representation shows (a values() row of the summary);
# staff also see the reviewer's name (STAFF_FIELDS).
SUMMARY_FIELDS = (
    "id",
    "status",
    "review_note",
    "publish_at",
    "first_published_at",
    "lock_version",
    "tldr",
    "created_at",
    "updated_at",
    "video_id",
    *(f"video__{name}" for name in VIDEO_COLUMNS),
)

STAFF_FIELDS = ("assigned_to__username",)

_PEOPLE_FIELDS = (
    "person__slug",
    "person__name",
    "person__updated_at",
    "organisation__slug",
    "organisation__name",
    "organisation__updated_at",
)
_TOPIC_FIELDS = ("topic__slug", "topic__name", "topic__updated_at")

# A citation's archived copy (summaries/archive), read in the citations' query.
_ARCHIVED_COPY_FIELDS = (
    "archived_copy__url",
    "archived_copy__captured_at",
    "archived_copy__verified_at",
    "archived_copy__shown",
    "archived_copy__matched_by",
)
_PART_FIELDS = {
    "key_points": (KeyPoint, ("id", "position", "title", "body", "body_html", "time", "pin")),
    "takeaways": (Takeaway, ("id", "position", "text", "text_html", "time", "pin")),
    "chapters": (
        Chapter,
        (
            "id",
            "position",
            "title",
            "start_time",
            "synopsis",
            "body",
            "body_html",
            "pin",
            "quote_pins",
        ),
    ),
    "caveats": (
        Caveat,
        (
            "id",
            "position",
            "chapter__position",
            "key_point__position",
            "takeaway__position",
            "claim",
            "text",
            "text_html",
            "pin",
        ),
    ),
    "citations": (
        Citation,
        (
            "id",
            "position",
            "url",
            "link_text",
            "claim",
            "key_phrase",
            "key_phrase_edited",
            "chapter__position",
            "key_point__position",
            "takeaway__position",
            "verdict",
            "verdict_excerpt",
            "verdict_checked_at",
            "confirmed_at",
            "source__url",
            "source__host",
            "source__state",
            "source__status_code",
            "source__final_url",
            "source__title",
            "source__content_type",
            "source__response_ms",
            "source__redirect_chain",
            "source__error_class",
            "source__last_checked_at",
            "source__updated_at",
            *_ARCHIVED_COPY_FIELDS,
            *EVIDENCE_FIELDS,
        ),
    ),
}
# Order within a summary, as the models' Meta.ordering (which the prefetches followed).
_PART_ORDER = {"citations": ("position", "id")}


def _rows(model):
    """The model's rows, with a citation's evidence read beside its fields."""
    if model is Citation:
        return model.objects.annotate(**cited_evidence())
    return model.objects


def _of_one(model, fields, order, key):
    return CompiledQuery(
        model,
        lambda **ids: _rows(model).filter(**{key: ids[key]}).order_by(*order).values(*fields),
        ids=(key,),
    )


def _of_many(model, fields, order, key):
    return CompiledQuery(
        model,
        lambda **ids: (
            _rows(model)
            .filter(**{f"{key}__in": ids[f"{key}s"]})
            .order_by(key, *order)
            .values(key, *fields)
        ),
        id_lists={f"{key}s": settings.API_MAX_PAGE_SIZE},
    )


def _queries(key, model, fields, order):
    return _of_one(model, fields, order, key), _of_many(model, fields, order, key)


_PEOPLE = _queries("video_id", Appearance, _PEOPLE_FIELDS, ("position", "id"))
_TOPICS = _queries("video_id", Video.topics.through, _TOPIC_FIELDS, ("topic__name",))
_PARTS = {
    name: _queries("summary_id", model, fields, _PART_ORDER.get(name, ("position",)))
    for name, (model, fields) in _PART_FIELDS.items()
}


def _live_summary(slug: str, now):
    return (
        Summary.objects.published(now)
        .filter(video__slug=slug)
        .annotate(publish_order=F("publish_at"))
        .values(*SUMMARY_FIELDS, "publish_order")
    )


# A live summary's row by its video's slug, as anonymous clients read it.
LIVE_SUMMARY = CompiledQuery(Summary, _live_summary, texts=("slug",), now=True)


def _grouped(rows: list[dict], key: str) -> dict[int, list[dict]]:
    groups: dict[int, list[dict]] = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups


# --- Building ------------------------------------------------------------------------------


def _ref(options: Options, view_name: str, slug: str, name: str) -> dict:
    return {"slug": slug, "name": name, "url": options.links.api(view_name, slug)}


def _people(rows: list[dict], options: Options) -> list[dict]:
    people = []
    for row in rows:
        organisation = None
        if row["organisation__slug"] is not None:
            organisation = _ref(
                options,
                "api:organisation-detail",
                row["organisation__slug"],
                row["organisation__name"],
            )
        person = _ref(options, "api:person-detail", row["person__slug"], row["person__name"])
        people.append({"person": person, "organisation": organisation})
    return people


def _topics(rows: list[dict], options: Options) -> list[dict]:
    return [
        _ref(options, "api:topic-detail", row["topic__slug"], row["topic__name"]) for row in rows
    ]


def _video(
    row: dict,
    people: list[dict],
    topics: list[dict],
    options: Options,
    *,
    card: bool,
    prefix: str = "video__",
):
    """VideoSerializer's output (VideoCardSerializer's with `card`), from the columns of
    `row` named VIDEO_COLUMNS after `prefix`."""
    key = _VIDEO_KEYS[prefix]
    links = options.links
    slug = row[key["slug"]]
    channel = _ref(
        options, "api:channel-detail", row[key["channel__slug"]], row[key["channel__name"]]
    )
    html_url = links.page(slug_url("summaries:summary-detail", slug))  # Video.get_absolute_url
    duration = row[key["duration_seconds"]]
    if card:
        return {
            "slug": slug,
            "title": row[key["title"]],
            "url": links.api("api:video-detail", slug),
            "html_url": html_url,
            "channel": channel,
            "duration_seconds": duration,
            "duration": format_duration(duration),
            "language": row[key["language"]],
            "published_on": _date(row[key["published_on"]]),
            "thumbnail_url": row[key["thumbnail_url"]],
            "people": people,
            "topics": topics,
        }
    return {
        "slug": slug,
        "title": row[key["title"]],
        "url": links.api("api:video-detail", slug),
        "html_url": html_url,
        "summary_url": links.api("api:summary-detail", slug),
        "channel": channel,
        "source_url": row[key["source_url"]],
        "platform": row[key["platform"]],
        "platform_video_id": row[key["platform_video_id"]],
        "duration_seconds": duration,
        "duration": format_duration(duration),
        "language": row[key["language"]],
        "published_on": _date(row[key["published_on"]]),
        "thumbnail_url": row[key["thumbnail_url"]],
        "blurb": row[key["blurb"]],
        "people": people,
        "topics": topics,
        "created_at": _datetime(row[key["created_at"]], options.zone),
        "updated_at": _datetime(row[key["updated_at"]], options.zone),
    }


def video_items(rows: list[dict], request) -> list[dict]:
    """Videos as VideoSerializer shows them, from rows of VIDEO_COLUMNS and "id": two
    queries (their people, their topics)."""
    if not rows:
        return []
    options = Options.of(request)
    video_ids = [row["id"] for row in rows]
    people = _grouped(_PEOPLE[1].run(video_ids=video_ids), "video_id")
    topics = _grouped(_TOPICS[1].run(video_ids=video_ids), "video_id")
    return [
        _video(
            row,
            _people(people.get(row["id"], []), options),
            _topics(topics.get(row["id"], []), options),
            options,
            card=False,
            prefix="",
        )
        for row in rows
    ]


def _pin(row: dict, options: Options) -> dict | None:
    pin = row["pin"]
    return None if pin is None else pin_representation(pin, context=options.pin_context)


def _key_point(row: dict, options: Options) -> dict:
    shown = {
        "id": row["id"],
        "position": row["position"],
        "title": row["title"],
        "body": row["body"],
        "body_html": row["body_html"],
        "time": row["time"],
    }
    if options.pins:
        shown["pin"] = _pin(row, options)
    return shown


def _takeaway(row: dict, options: Options) -> dict:
    shown = {
        "id": row["id"],
        "position": row["position"],
        "text": row["text"],
        "text_html": row["text_html"],
        "time": row["time"],
    }
    if options.pins:
        shown["pin"] = _pin(row, options)
    return shown


def _chapter(row: dict, options: Options) -> dict:
    shown = {
        "id": row["id"],
        "position": row["position"],
        "anchor": f"chapter-{row['position']}",  # Chapter.anchor
        "title": row["title"],
        "start_time": row["start_time"],
        "synopsis": row["synopsis"],
        "body": row["body"],
        "body_html": row["body_html"],
    }
    if options.pins:
        shown["pin"] = _pin(row, options)
        shown["quote_pins"] = [
            quote_pin_representation(index, pin, context=options.pin_context)
            for index, pin in enumerate(row["quote_pins"])
        ]
    return shown


def _caveat(row: dict, options: Options) -> dict:
    shown = {
        "id": row["id"],
        "position": row["position"],
        "chapter": row["chapter__position"],
        "key_point": row["key_point__position"],
        "takeaway": row["takeaway__position"],
        "claim": row["claim"],
        "text": row["text"],
        "text_html": row["text_html"],
    }
    if options.pins:
        shown["pin"] = _pin(row, options)
    return shown


def _citation(row: dict, options: Options) -> dict:
    zone = options.zone
    key_phrase = row["key_phrase"]
    return {
        "id": row["id"],
        "position": row["position"],
        "url": row["url"],
        "link_text": row["link_text"],
        "claim": row["claim"],
        "key_phrase": key_phrase,
        "key_phrase_edited": row["key_phrase_edited"],
        "suggested_key_phrase": "" if key_phrase else suggest_key_phrase(row["claim"]),
        "chapter": row["chapter__position"],
        "key_point": row["key_point__position"],
        "takeaway": row["takeaway__position"],
        "source": {
            "url": row["source__url"],
            "host": row["source__host"],
            "state": row["source__state"],
            "status_code": row["source__status_code"],
            "final_url": row["source__final_url"],
            "title": row["source__title"],
            "content_type": row["source__content_type"],
            "response_ms": row["source__response_ms"],
            "redirect_chain": row["source__redirect_chain"],
            "error_class": row["source__error_class"],
            "last_checked_at": _datetime(row["source__last_checked_at"], zone),
        },
        "verdict": row["verdict"],
        "verdict_excerpt": row["verdict_excerpt"],
        "verdict_checked_at": _datetime(row["verdict_checked_at"], zone),
        "confirmed_at": _datetime(row["confirmed_at"], zone),
        "archived_copy": copy_values(*(row[name] for name in _ARCHIVED_COPY_FIELDS)),
        "evidence": _evidence(row, zone),
    }


def _evidence(row: dict, zone) -> dict | None:
    """As CitationSerializer.get_evidence."""
    if not row["evidence_digest"]:
        return None
    return {
        "passage": row["evidence_passage"],
        "captured_at": _datetime(row["evidence_captured_at"], zone),
        "digest": row["evidence_digest"],
        "stored": row["evidence_state"] == "stored",
    }


_BUILDERS = {
    "key_points": _key_point,
    "takeaways": _takeaway,
    "chapters": _chapter,
    "caveats": _caveat,
    "citations": _citation,
}


def _summary(row: dict, video: dict, parts: dict[str, list[dict]], options: Options) -> dict:
    """SummarySerializer's output, with the parts in `parts` (built rows) in their places."""
    zone = options.zone
    unpublished = None
    if options.editor and row.get("has_working_copy"):
        unpublished = options.links.page(
            reverse("api:summary-working-copy", kwargs={"slug": row["video__slug"]})
        )
    shown = {
        "slug": row["video__slug"],
        "url": options.links.api("api:summary-detail", row["video__slug"]),
        "html_url": video["html_url"],
        "status": row["status"],
        "unpublished_changes": unpublished,
        "review_note": (row["review_note"] or None) if options.staff else None,
        "reviewer": row.get("assigned_to__username") if options.staff else None,
        "publish_at": _datetime(row["publish_at"], zone),
        "first_published_at": _datetime(row["first_published_at"], zone),
        "lock_version": row["lock_version"],
        "tldr": row["tldr"],
        "video": video,
    }
    shown.update(parts)
    shown["created_at"] = _datetime(row["created_at"], zone)
    shown["updated_at"] = _datetime(row["updated_at"], zone)
    return shown


@dataclass
class Detail:
    data: dict
    last_modified: datetime  # the latest change to anything the data shows


def summary_detail(row: dict, request, *, context: Mapping[str, Any]) -> Detail:
    """The detail of the summary read as `row` (SUMMARY_FIELDS, and has_working_copy for
    editors), as SummarySerializer shows it with `context`: eight queries in all."""
    options = Options.of(request, pins=pins_requested(context))
    people_rows = _PEOPLE[0].run(video_id=row["video_id"])
    topic_rows = _TOPICS[0].run(video_id=row["video_id"])
    video = _video(
        row, _people(people_rows, options), _topics(topic_rows, options), options, card=False
    )
    parts, source_stamps = {}, []
    for name, build in _BUILDERS.items():
        rows = _PARTS[name][0].run(summary_id=row["id"])
        parts[name] = [build(part, options) for part in rows]
        if name == "citations":
            source_stamps = [part["source__updated_at"] for part in rows]
    data = _summary(row, video, parts, options)
    if corrections_requested(context):
        corrections = corrections_shown_to(getattr(request, "user", None), row["id"])
        shown = CorrectionSerializer(corrections, many=True, context=context).data
        data = _before(data, "created_at", "corrections", shown)
    stamps = [
        row["updated_at"],
        row["video__updated_at"],
        row["video__channel__updated_at"],
        *(r["person__updated_at"] for r in people_rows),
        *(r["organisation__updated_at"] for r in people_rows if r["organisation__slug"]),
        *(r["topic__updated_at"] for r in topic_rows),
        *source_stamps,
    ]
    return Detail(data, max(stamps))


def _before(data: dict, key: str, new_key: str, value) -> dict:
    """`data` with `new_key` inserted just before `key`."""
    shown = {}
    for name, existing in data.items():
        if name == key:
            shown[new_key] = value
        shown[name] = existing
    return shown


# A list's row: the summary's columns, and how many parts of each kind it has.
COUNTS = {
    "key_points": "key_point_count",
    "takeaways": "takeaway_count",
    "chapters": "chapter_count",
    "caveats": "caveat_count",
    "citations": "citation_count",
}
LIST_FIELDS = (*SUMMARY_FIELDS, *COUNTS.values())
_COUNTED = {
    "key_point_count": KeyPoint,
    "takeaway_count": Takeaway,
    "chapter_count": Chapter,
    "caveat_count": Caveat,
    "citation_count": Citation,
}


def _count_of(model):
    rows = model.objects.filter(summary=OuterRef("pk")).order_by().values("summary")
    return Coalesce(Subquery(rows.annotate(n=Count("pk")).values("n")), 0)


def part_counts() -> dict:
    """Annotations of a summary's row: how many parts of each kind it has (COUNTS)."""
    return {name: _count_of(model) for name, model in _COUNTED.items()}


# List rows of summaries by id, as clients who are not staff read them.
LIST_ROWS = CompiledQuery(
    Summary,
    lambda ids: (
        Summary.objects.filter(pk__in=ids).annotate(**part_counts()).order_by().values(*LIST_FIELDS)
    ),
    id_lists={"ids": settings.API_MAX_PAGE_SIZE},
)


def summary_items(rows: Sequence[dict], request, *, expand: tuple[str, ...]) -> list[dict]:
    """List items (SummaryListItemSerializer) of `rows` (LIST_FIELDS, has_working_copy for
    editors): two queries, and one per part named in `expand`."""
    if not rows:
        return []
    options = Options.of(request)
    video_ids = [row["video_id"] for row in rows]
    summary_ids = [row["id"] for row in rows]
    people = _grouped(_PEOPLE[1].run(video_ids=video_ids), "video_id")
    topics = _grouped(_TOPICS[1].run(video_ids=video_ids), "video_id")
    parts = {}
    for name in EXPANDABLE:
        if name in expand:
            parts[name] = _grouped(_PARTS[name][1].run(summary_ids=summary_ids), "summary_id")
    items = []
    for row in rows:
        video_id = row["video_id"]
        video = _video(
            row,
            _people(people.get(video_id, []), options),
            _topics(topics.get(video_id, []), options),
            options,
            card=True,
        )
        shown_parts = {
            name: [_BUILDERS[name](part, options) for part in by_summary.get(row["id"], [])]
            for name, by_summary in parts.items()
        }
        item = _summary(row, video, shown_parts, options)
        item["counts"] = {name: row[count] for name, count in COUNTS.items()}
        items.append(item)
    return items
