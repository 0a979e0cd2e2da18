"""A live summary as it was on a date: Memento (RFC 7089) for summary pages.

The summary page is the Original Resource and its own TimeGate (the RFC's pattern 1.1,
302-style negotiation): a request for it with `Accept-Datetime` is redirected (302) to the
version that was live then; every answer of the page says `Vary: accept-datetime`. The
TimeMap lists the published versions (application/link-format), and each version has a
stable address (its time, `versions/20261203141500/`) that shows the article readers saw
then, with `Memento-Datetime` and the Link relations of the RFC.

Which version a date gets: the last one live at or before it; a date before the first
version gets the first (the RFC lets a TimeGate choose; the first is what a reader asking
about an earlier date can read at all); a summary with no version answers 404. Only
versions of a live summary whose time has come exist for readers
(PublishedVersion.objects.live()); an unpublished summary answers 404 for all of them.
"""

import bisect
from collections.abc import Sequence
from datetime import UTC, datetime

from django.http import HttpRequest
from django.urls import reverse
from django.utils.http import http_date, parse_http_date

from summaries.models import PublishedVersion

from .absolute import site_url

LINK_FORMAT = "application/link-format"
# A version's address holds its time in UTC, to the second: 20261203141500.
TIME_FORMAT = "%Y%m%d%H%M%S"


class BadDatetime(ValueError):
    """An Accept-Datetime header that is not an HTTP date."""


def accept_datetime(request: HttpRequest) -> datetime | None:
    """The datetime a request asks for, None when it sends no Accept-Datetime.

    Raises BadDatetime when the header is there but not an HTTP date (RFC 7089 asks for
    RFC 1123 dates, "Tue, 11 Sep 2001 20:35:00 GMT"; the two obsolete HTTP date forms
    are read too, as HTTP readers do).
    """
    value = request.headers.get("Accept-Datetime")
    if value is None:
        return None
    try:
        seconds = parse_http_date(value.strip())
    except ValueError:
        raise BadDatetime(value) from None
    return datetime.fromtimestamp(seconds, tz=UTC)


def httpdate(moment: datetime) -> str:
    """A datetime as the RFC writes them: "Tue, 11 Sep 2001 20:35:00 GMT"."""
    return http_date(moment.timestamp())


def version_slug(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def parse_version_slug(value: str) -> datetime | None:
    try:
        return datetime.strptime(value, TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError:
        return None


def original_url(request: HttpRequest, slug: str) -> str:
    return site_url(reverse("summaries:summary-detail", args=[slug]))


def timemap_url(request: HttpRequest, slug: str) -> str:
    return site_url(reverse("summaries:summary-timemap", args=[slug]))


def memento_url(request: HttpRequest, slug: str, moment: datetime) -> str:
    path = reverse("summaries:summary-version", args=[slug, version_slug(moment)])
    return site_url(path)


def live_times(summary_id: int) -> list[datetime]:
    """The times of the versions readers can see of a summary, oldest first (one query);
    empty when the summary is not live."""
    return _times(PublishedVersion.objects.live().filter(summary_id=summary_id))


def live_times_at(slug: str) -> list[datetime]:
    """The same for the summary of the video at `slug`."""
    return _times(PublishedVersion.objects.live().filter(summary__video__slug=slug))


def _times(versions) -> list[datetime]:
    return list(versions.order_by("live_from").values_list("live_from", flat=True))


def select(times: Sequence[datetime], wanted: datetime) -> datetime | None:
    """The version live at `wanted`: the last at or before it, else the first; None for none."""
    if not times:
        return None
    return times[max(bisect.bisect_right(times, wanted) - 1, 0)]


def _link(url: str, rel: str, **params: str) -> str:
    extra = "".join(f'; {name}="{value}"' for name, value in params.items())
    return f'<{url}>; rel="{rel}"{extra}'


def original_links(request: HttpRequest, slug: str) -> list[str]:
    """The Original Resource, its own TimeGate, and its TimeMap."""
    return [
        _link(original_url(request, slug), "original timegate"),
        _link(timemap_url(request, slug), "timemap", type=LINK_FORMAT),
    ]


def memento_rel(times: Sequence[datetime], moment: datetime, current: datetime | None) -> str:
    """The relation types of the memento at `moment` seen from the one at `current`
    (None: from a TimeGate or a TimeMap): first, last, prev, next, then "memento"."""
    index = times.index(moment)
    words = []
    if index == 0:
        words.append("first")
    if index == len(times) - 1:
        words.append("last")
    if current is not None and moment != current:
        position = times.index(current)
        if index == position - 1:
            words.append("prev")
        elif index == position + 1:
            words.append("next")
    return " ".join([*words, "memento"])


def memento_link(request: HttpRequest, slug: str, moment: datetime, rel: str) -> str:
    return _link(memento_url(request, slug, moment), rel, datetime=httpdate(moment))


def neighbour_links(
    request: HttpRequest, slug: str, times: Sequence[datetime], current: datetime | None
) -> list[str]:
    """Links to the first, last, previous and next mementos, and to `current` itself."""
    shown: list[datetime] = [times[0], times[-1]]
    if current is not None:
        position = times.index(current)
        shown += [current, *times[max(position - 1, 0) : position + 2]]
    ordered = sorted(set(shown))
    return [
        memento_link(request, slug, moment, memento_rel(times, moment, current))
        for moment in ordered
    ]


def timegate_links(
    request: HttpRequest, slug: str, times: Sequence[datetime], chosen: datetime
) -> list[str]:
    """The Link header of a TimeGate's redirect: original, timemap, the chosen memento
    and the first and last (RFC 7089, 4.1.1)."""
    return [
        *original_links(request, slug),
        *(
            memento_link(request, slug, moment, memento_rel(times, moment, None))
            for moment in sorted({times[0], chosen, times[-1]})
        ),
    ]


def timemap(request: HttpRequest, slug: str, times: Sequence[datetime]) -> str:
    """The TimeMap in application/link-format (RFC 7089, 5.1.1; RFC 6690): the original
    and TimeGate, the TimeMap itself with the span it covers, then each memento."""
    entries = [
        _link(original_url(request, slug), "original timegate"),
        _link(
            timemap_url(request, slug),
            "self",
            type=LINK_FORMAT,
            **{"from": httpdate(times[0]), "until": httpdate(times[-1])},
        ),
        *(memento_link(request, slug, m, memento_rel(times, m, None)) for m in times),
    ]
    return ",\n".join(entries) + "\n"
