"""Cache tags: short names of what a public answer shows.

Views send them in the HTTP_CACHE_TAG_HEADER header (edge.py) and every change names the
tags it makes stale (generation.content_changed), so that an HTTP cache in front (Varnish's
xkey, a CDN's surrogate keys) drops exactly the answers that show what changed (purge.py).

- `s<id>` a summary, `v<id>` a video (its page, or its card in a list), `c<id>`, `p<id>`,
  `t<id>` a channel, person or topic whose name the answer shows;
- `lc<id>`, `lp<id>`, `lt<id>` the list pages (and feeds) of a channel, person or topic;
- `home`, `feeds`, `sitemaps`: the site-wide lists;
- `misc`: a public answer whose view names nothing finer (indexes, transcripts, oEmbed,
  the API), purged by every change, so an answer is never stale for lack of a tag;
- `missing`: a 404 or 410, purged by every change (a publication makes one a page);
- `all`: on every public answer, purged by a change that names no tags (renames, imports).
"""

from collections.abc import Iterable

from django.conf import settings

from summaries.models import Summary

EVERY = "all"
OTHER = "misc"
MISSING = "missing"
HOME = "home"
FEEDS = "feeds"
SITEMAPS = "sitemaps"
# Purged with every change: answers that may show anything.
ALWAYS = (OTHER, MISSING)


def summary(pk: int) -> str:
    return f"s{pk}"


def video(pk: int) -> str:
    return f"v{pk}"


def channel(pk: int) -> str:
    return f"c{pk}"


def person(pk: int) -> str:
    return f"p{pk}"


def topic(pk: int) -> str:
    return f"t{pk}"


def channel_list(pk: int) -> str:
    return f"lc{pk}"


def person_list(pk: int) -> str:
    return f"lp{pk}"


def topic_list(pk: int) -> str:
    return f"lt{pk}"


def header_value(tags: Iterable[str]) -> str:
    """Tags as sent: unique, in a stable order, space-separated."""
    return " ".join(sorted(set(tags)))


def of_summary_change(summary_obj: Summary) -> set[str]:
    """What a change to what readers see of a summary makes stale: its page and API
    answers, its video's card wherever it is listed, the lists of its channel, people and
    topics, the site-wide lists, and the answers that may show anything.

    Reads the video's people and topics (two queries): call it before and after a change
    that moves the video between lists, and purge both. Reads nothing, and names nothing,
    when no purge backend is configured (there is no cache to purge).
    """
    if not settings.HTTP_CACHE_PURGE_BACKEND:
        return set()
    video_obj = summary_obj.summarised_video
    found = {summary(summary_obj.pk), HOME, FEEDS, SITEMAPS, *ALWAYS}
    if summary_obj.working_copy_of_id:
        found.add(summary(summary_obj.working_copy_of_id))
    if video_obj is None:
        return found
    found |= {video(video_obj.pk), channel_list(video_obj.channel_id)}
    found |= {person_list(pk) for pk in video_obj.people.values_list("pk", flat=True)}
    found |= {topic_list(pk) for pk in video_obj.topics.values_list("pk", flat=True)}
    return found


def of_checked_summaries(summary_ids: Iterable[int]) -> set[str]:
    """What recorded checks that change source labels make stale: the pages of the
    summaries citing those sources (cards and lists show no labels)."""
    return {*(summary(pk) for pk in summary_ids), *ALWAYS}


def of_videos(video_ids: Iterable[int]) -> set[str]:
    """What a change to videos (their related lists, their thumbnails) makes stale: their
    pages and their cards wherever they are listed."""
    return {*(video(pk) for pk in video_ids), *ALWAYS}
