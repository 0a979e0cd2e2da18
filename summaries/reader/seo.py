"""Structured data and social tags for a summary page, built from an already-loaded summary;
the meta descriptions of the index pages.

Nothing here queries: the caller loads the summary with its video, channel, appearances
(with person and organisation) and chapters, as SummaryDetailView does.
"""

import json
from urllib.parse import urlsplit

from django.core.serializers.json import DjangoJSONEncoder
from django.templatetags.static import static
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from summaries.models import Video

from .absolute import site_url

SITE_NAME = "Curation"
# Twitter cuts card descriptions at 200 characters; Open Graph gets the same text.
SOCIAL_DESCRIPTION_CHARS = 200
# A source URL ending in one of these is the media file itself (schema.org contentUrl).
MEDIA_EXTENSIONS = (".mp4", ".webm", ".ogv", ".mov", ".m4v", ".mkv")
# og:image until the video's thumbnail is stored: the site's icon (square, 512 px).
FALLBACK_IMAGE = "summaries/icons/icon-512.png"
FALLBACK_IMAGE_SIZE = 512

# Inside <script>, "</script>" or "<!--" in a string would end or confuse the element; JSON
# allows any character as a \u escape, so these cannot appear literally (as in json_script).
_SCRIPT_ESCAPES = {
    ord("<"): "\\u003C",
    ord(">"): "\\u003E",
    ord("&"): "\\u0026",
    ord("\u2028"): "\\u2028",
    ord("\u2029"): "\\u2029",
}


def iso_duration(seconds: int) -> str:
    """ISO 8601 duration: PT34M21S for 2061 seconds, PT1H2M3S, PT1H, PT0S."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    parts = [f"{value}{unit}" for value, unit in ((hours, "H"), (minutes, "M")) if value]
    if secs or not parts:
        parts.append(f"{secs}S")
    return "PT" + "".join(parts)


def canonical_url(summary, request) -> str:
    """The public page's absolute URL (also for the staff preview of the same summary)."""
    return site_url(summary.get_absolute_url())


def _video_urls(video) -> dict:
    """url/embedUrl/contentUrl for the video itself, as the platform allows."""
    if video.platform == Video.Platform.YOUTUBE and video.platform_video_id:
        video_id = video.platform_video_id
        return {
            "url": f"https://www.youtube.com/watch?v={video_id}",
            "embedUrl": f"https://www.youtube.com/embed/{video_id}",
        }
    urls = {"url": video.source_url}
    if urlsplit(video.source_url).path.lower().endswith(MEDIA_EXTENSIONS):
        urls["contentUrl"] = video.source_url
    return urls


def _organisation(organisation) -> dict:
    data = {"@type": "Organization", "name": organisation.name}
    domains = organisation.domain_list()
    if domains:
        data["url"] = f"https://{domains[0]}/"
    return data


def _person(appearance, request) -> dict:
    person = appearance.person
    data = {
        "@type": "Person",
        "name": person.name,
        "url": site_url(person.get_absolute_url()),
    }
    if appearance.organisation is not None:
        data["affiliation"] = _organisation(appearance.organisation)
    return data


def _clips(timed_chapters, video) -> list[dict]:
    """A Clip per chapter with a start time inside the video (Google's "key moments").

    `timed_chapters` are (title, start second, position) of the chapters with a start. A
    clip ends where the next later chapter starts, the last one at the end of the video.
    """
    timed = sorted(
        (chapter for chapter in timed_chapters if chapter[1] < video.duration_seconds),
        key=lambda chapter: (chapter[1], chapter[2]),
    )
    starts = [start for _, start, _ in timed]
    clips = []
    for title, start, _ in timed:
        later = [s for s in starts if s > start]
        clips.append(
            {
                "@type": "Clip",
                "name": title,
                "startOffset": start,
                "endOffset": later[0] if later else video.duration_seconds,
                "url": video.url_at(start),
            }
        )
    return clips


def timed_chapters(summary) -> list[tuple[str, int, int]]:
    """(title, start second, position) of the summary's chapters that have a start."""
    return [
        (chapter.title, chapter.start_time, chapter.position)
        for chapter in summary.chapters.all()
        if chapter.start_time is not None
    ]


def video_object_jsonld(
    summary, request, *, chapters=None, appearances=None, transcript_url="", changes=None
) -> dict:
    """schema.org VideoObject for the summarised video, with a Clip per key moment.

    `chapters`: the key moments when known (the page's stored article has them, only
    times verified against the live transcript when there is one: reader/receipts.py);
    else every timed chapter of the summary's (prefetched) chapters. `appearances`: the
    video's people when the page has them (reader/page_rows.py); else the video's.
    `transcript_url`: the transcript page, named as `transcript` rather than its text, so
    that the summary page neither reads the transcript nor doubles its size.
    `changes`: the page's published changes (reader/corrections.py PageCorrections):
    `dateModified` is when the last one went live (the publication when none did), and
    each correction not withdrawn is a schema.org CorrectionComment under `correction`.
    """
    video = summary.video
    channel = video.channel
    channel_org = {
        "@type": "Organization",
        "name": channel.name,
        "url": channel.site_url or site_url(channel.get_absolute_url()),
    }
    data = {
        "@context": "https://schema.org",
        "@type": "VideoObject",
        "name": video.title,
        "description": summary.tldr,
        "uploadDate": video.published_on.isoformat(),
        "duration": iso_duration(video.duration_seconds),
        "inLanguage": video.language,
        **_video_urls(video),
        "mainEntityOfPage": canonical_url(summary, request),
        "author": channel_org,
        "publisher": channel_org,
    }
    # Google requires thumbnailUrl for video results; only the stored copy is named (never
    # the platform's address, and not the site icon: it must show the video). Until the
    # worker stores it the object stays valid schema.org, just not eligible for those
    # results, and storing it makes cached pages stale (summaries/thumbnails).
    if video.thumbnail is not None:
        data["thumbnailUrl"] = site_url(video.thumbnail.src)
    if appearances is None:
        appearances = video.appearances.all()
    actors = [_person(appearance, request) for appearance in appearances]
    if actors:
        data["actor"] = actors
    if transcript_url:
        data["transcript"] = site_url(transcript_url)
    if changes is not None:
        data.update(_changes(summary, changes))
    clips = _clips(timed_chapters(summary) if chapters is None else chapters, video)
    if clips:
        data["hasPart"] = clips
    return data


def _changes(summary, changes) -> dict:
    """dateModified and the corrections of a summary page's structured data."""
    modified = changes.last_change_at or summary.publish_at
    data: dict = {"dateModified": modified.isoformat()} if modified else {}
    corrections = [
        {
            "@type": "CorrectionComment",
            "text": correction.note,
            "datePublished": correction.published_at.isoformat(),
        }
        for correction in changes.shown
        if correction.kind == "correction" and not correction.is_withdrawn
    ]
    if corrections:
        data["correction"] = corrections
    return data


def json_ld_script(data) -> SafeString:
    """`<script type="application/ld+json">` holding `data`, safe to print unescaped.

    Like django.utils.html.json_script, which only writes type="application/json".
    """
    text = json.dumps(data, cls=DjangoJSONEncoder, ensure_ascii=False).translate(_SCRIPT_ESCAPES)
    # Safe: after the escapes above the JSON holds no <, > or &, so no markup at all.
    return format_html('<script type="application/ld+json">{}</script>', mark_safe(text))  # noqa: S308


def social_meta(summary, request) -> dict:
    """Canonical URL, description, Open Graph and Twitter card tags for the summary page.

    `open_graph` and `twitter` map each tag's property/name to its content, in print order.
    """
    video = summary.video
    url = canonical_url(summary, request)
    description = Truncator(" ".join(summary.tldr.split())).chars(SOCIAL_DESCRIPTION_CHARS)
    open_graph = {
        "og:type": "video.other",
        "og:title": video.title,
        "og:description": description,
        "og:url": url,
        "og:site_name": SITE_NAME,
        "video:duration": video.duration_seconds,
        "video:release_date": video.published_on.isoformat(),
    }
    thumbnail = video.thumbnail
    twitter = {
        "twitter:card": "summary_large_image" if thumbnail else "summary",
        "twitter:title": video.title,
        "twitter:description": description,
    }
    # The stored thumbnail (served by this site or its storage), else the site's icon.
    if thumbnail is not None:
        image, width, height = thumbnail.src, thumbnail.width, thumbnail.height
    else:
        image, width = static(FALLBACK_IMAGE), FALLBACK_IMAGE_SIZE
        height = width
    open_graph["og:image"] = twitter["twitter:image"] = site_url(image)
    open_graph["og:image:width"], open_graph["og:image:height"] = width, height
    return {
        "canonical_url": url,
        "description": description,
        "open_graph": open_graph,
        "twitter": twitter,
    }


# The index pages' meta descriptions: (one, several, the rest of the sentence).
INDEX_DESCRIPTIONS = {
    "channels": (
        "channel",
        "channels",
        "whose AI videos have curated summaries, with the number of summaries of each, "
        "the most recently active first.",
    ),
    "people": (
        "person",
        "people",
        "appearing in summarised AI videos, with the number of videos of each, "
        "the most recently seen first.",
    ),
    "topics": (
        "topic",
        "topics",
        "of the summarised AI videos, with the number of videos on each, "
        "the most recently covered first.",
    ),
}


def index_description(section: str, count: int) -> str:
    """The meta description of the channel, person or topic index: "12 channels whose…"."""
    one, several, rest = INDEX_DESCRIPTIONS[section]
    return f"{count} {one if count == 1 else several} {rest}"
