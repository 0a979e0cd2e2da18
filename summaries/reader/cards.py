"""Video cards as plain data: what card_html.py writes as HTML, without model instances.

A list page shows 20 cards and a summary page 16. As model instances (a video with its
channel, each appearance with its person and organisation) they cost a few hundred objects
per page. Cards here are dictionaries spelt as the models are
(`video.channel.get_absolute_url`, `video.appearances.all`, `appearance.person.name`), so a
template can still read them as it would a model, and card_html.py reads each value with
one dictionary access. A list of
cards takes two queries: the videos with their channels (`card_values`), and the people of
every card on the page (`add_people`).
"""

from django.db.models import F

from summaries.models import Appearance, Video
from summaries.models.base import slug_url

from .compiled import CompiledQuery

# The Video columns a card reads; thumbnail_files for its `thumbnail`.
CARD_FIELDS = (
    "pk",
    "title",
    "slug",
    "duration_seconds",
    "language",
    "published_on",
    "blurb",
    "thumbnail_files",
    "channel__name",
    "channel__slug",
)
# Names of the columns in card rows: prefixed, so that rows read through a relation
# (a related link's video) cannot clash with the relation's own fields.
_ALIASES = {f"card_{name}": name for name in CARD_FIELDS}


def card_values(queryset, through: str = "", extra: tuple[str, ...] = ()):
    """`queryset` as card rows: the columns of CARD_FIELDS of its videos, or of the videos
    its `through` relation leads to (e.g. "related" for RelatedLink), and its own `extra`
    fields."""
    prefix = f"{through}__" if through else ""
    return queryset.values(*extra, **{alias: F(prefix + name) for alias, name in _ALIASES.items()})


def _thumbnail(files):
    # The model's own property (storage URLs, sizes), on an unsaved video holding the files.
    return Video(thumbnail_files=files).thumbnail if files else None


def _card(pk, title, slug, duration, language, published_on, blurb, thumbnail, channel):
    return {
        "pk": pk,
        "title": title,
        "slug": slug,
        "get_absolute_url": slug_url("summaries:summary-detail", slug),
        "duration_seconds": duration,
        "language": language,
        "published_on": published_on,
        "blurb": blurb,
        "thumbnail": thumbnail,
        "channel": channel,
        "appearances": {"all": []},
    }


def _channel(name: str, slug: str) -> dict:
    return {
        "name": name,
        "slug": slug,
        "get_absolute_url": slug_url("summaries:channel-detail", slug),
    }


def card(row: dict) -> dict:
    """A card from a row of `card_values`; its people come with `add_people`."""
    return _card(
        row["card_pk"],
        row["card_title"],
        row["card_slug"],
        row["card_duration_seconds"],
        row["card_language"],
        row["card_published_on"],
        row["card_blurb"],
        _thumbnail(row["card_thumbnail_files"]),
        _channel(row["card_channel__name"], row["card_channel__slug"]),
    )


def _appearance(name: str, slug: str, organisation: str | None) -> dict:
    return {
        "person": {"name": name, "get_absolute_url": slug_url("summaries:person-detail", slug)},
        "organisation": None if organisation is None else {"name": organisation},
    }


def card_of_video(video: Video) -> dict:
    """The card of a loaded video whose channel and appearances (with person and
    organisation) are loaded too: no query."""
    result = _card(
        video.pk,
        video.title,
        video.slug,
        video.duration_seconds,
        video.language,
        video.published_on,
        video.blurb,
        video.thumbnail,
        _channel(video.channel.name, video.channel.slug),
    )
    result["appearances"]["all"] = [
        _appearance(
            appearance.person.name,
            appearance.person.slug,
            appearance.organisation.name if appearance.organisation else None,
        )
        for appearance in video.appearances.all()
    ]
    result["people_loaded"] = True
    return result


# The most cards a page shows at once (a list page; a summary page shows 16).
MAX_CARDS = 20

_PEOPLE = CompiledQuery(
    Appearance,
    lambda video_ids: (
        Appearance.objects.filter(video_id__in=video_ids)
        .order_by("video_id", "position", "id")
        .values_list("video_id", "person__name", "person__slug", "organisation__name")
    ),
    id_lists={"video_ids": MAX_CARDS},
)


def live_card_rows(now=None):
    """Live videos, newest first, as card rows (`card_values`)."""
    return card_values(Video.objects.published(now).order_by("-published_on", "-id"))


# Cards under "More from this channel" on a summary page.
MORE_COUNT = 6

_MORE_FROM_CHANNEL = CompiledQuery(
    Video,
    lambda channel_id, video_id, now: (
        live_card_rows(now).filter(channel_id=channel_id).exclude(pk=video_id)[:MORE_COUNT]
    ),
    ids=("channel_id", "video_id"),
    now=True,
)


def more_from_channel(video) -> list[dict]:
    """Cards of the MORE_COUNT newest live videos of `video`'s channel other than itself,
    without their people (`add_people`)."""
    rows = _MORE_FROM_CHANNEL.run(channel_id=video.channel_id, video_id=video.pk)
    return [card(row) for row in rows]


def add_people(cards: list[dict]) -> list[dict]:
    """Fill `appearances.all` of each card (person and organisation, in Appearance's
    order) in one query for all of them; cards made by `card_of_video` are left as they are."""
    by_video: dict[int, list[list]] = {}
    for item in cards:
        if not item.get("people_loaded"):
            by_video.setdefault(item["pk"], []).append(item["appearances"]["all"])
    if not by_video:
        return cards
    for video_id, name, slug, organisation in _PEOPLE.run(video_ids=list(by_video)):
        appearance = _appearance(name, slug, organisation)
        for people in by_video[video_id]:
            people.append(appearance)
    return cards
