"""Video cards as HTML, written in Python rather than by the template engine.

Every list page shows 20 cards and a summary page 16 (related, more from the channel),
each with some 25 values. Through an included Django template each value is a variable
lookup and a filter call: about 0.25 ms a card, 4-5 ms of a page. Here a card is one
string built from the plain rows of summaries/reader/cards.py, every value escaped, in
about 20 µs. The markup is the one every card had as includes/video_card.html; search
results are the same card with the snippet in place of the blurb.
"""

import html
from datetime import date
from functools import lru_cache

from django.utils.dateformat import format as format_date
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from summaries.models import LANGUAGE_CHOICES
from summaries.text.durations import running_time

_LANGUAGE_NAMES = dict(LANGUAGE_CHOICES)
# The card's own heading level unless a page says otherwise (h2 where the card list
# follows the page's h1 directly).
DEFAULT_HEADING_LEVEL = 3


def escape(value) -> str:
    """django.utils.html.escape's text (it calls html.escape), without its lazy-string
    wrapper and SafeString: a card escapes a dozen values, a page hundreds."""
    return html.escape(str(value))


# How wide a card's picture is shown: the whole column on a phone, half the page on a
# tablet, a column of the grid (site.css: .card-grid) beyond; the featured card's is wider.
CARD_SIZES = "(max-width: 40rem) calc(100vw - 2rem), (max-width: 64rem) 50vw, 24rem"
FEATURED_SIZES = "(max-width: 48rem) calc(100vw - 2rem), 44rem"


def _thumbnail(thumb, *, featured: bool = False) -> str:
    if thumb is None:
        return '<span class="video-thumb video-thumb--placeholder"></span>'
    # The featured picture is the largest thing in view on the home page: loaded first.
    loading = 'fetchpriority="high"' if featured else 'loading="lazy"'
    return (
        f'<img class="video-thumb" src="{escape(thumb.src)}" srcset="{escape(thumb.srcset)}"'
        f' sizes="{FEATURED_SIZES if featured else CARD_SIZES}"'
        f' width="{int(thumb.width)}" height="{int(thumb.height)}"'
        f' alt="" {loading} decoding="async">'
    )


def _duration(seconds) -> str:
    # On the picture, as video sites show it; named for screen readers.
    length = running_time(seconds)
    if not length:
        return ""
    return (
        '<span class="duration"><span class="visually-hidden">Duration </span>'
        f"{escape(length)}</span>"
    )


def _day(day: date | None) -> str:
    if day is None:
        return '<time datetime=""></time>'
    return _formatted_day(day, get_language())


@lru_cache(maxsize=4096)
def _formatted_day(day: date, language: str | None) -> str:
    # Month names are translated: the active language is part of the key.
    return f'<time datetime="{day.isoformat()}">{escape(format_date(day, "M j, Y"))}</time>'


def _people(appearances: list[dict]) -> str:
    if not appearances:
        return ""
    names = []
    for appearance in appearances:
        person = appearance["person"]
        name = f'<a href="{escape(person["get_absolute_url"])}">{escape(person["name"])}</a>'
        if appearance["organisation"]:
            name += f" · {escape(appearance['organisation']['name'])}"
        names.append(name)
    return f'\n    <p class="people">{"; ".join(names)}</p>'


def _reasons(reasons: list[str] | None) -> str:
    # Why a related video is shown, as a label inside its card.
    if not reasons:
        return ""
    said = " · ".join(escape(reason[:1].upper() + reason[1:]) for reason in reasons)
    return f'\n    <p class="card-reason"><span class="visually-hidden">Related: </span>{said}</p>'


def card_html(
    video: dict,
    *,
    heading_level: int = DEFAULT_HEADING_LEVEL,
    css_class: str = "video-card",
    tail: str | None = None,
    reasons: list[str] | None = None,
    featured: bool = False,
) -> SafeString:
    """One card (a dict of summaries/reader/cards.py, its people added) as HTML: the
    picture with the length on it, then the title, the channel, date and language, the
    people and the blurb.

    `tail` (HTML, already safe) takes the blurb's place: a search result's snippet.
    `reasons` (a related video's) are shown as a label above the title. A `featured` card
    (the home page's first) loads its picture first, at a larger size.
    """
    language = video["language"]
    channel = video["channel"]
    level = int(heading_level)
    if tail is None:
        blurb = video["blurb"]
        tail = f'<p class="blurb">{escape(blurb)}</p>' if blurb else ""
    return mark_safe(  # noqa: S308 - every value above is escaped
        f'<article class="{css_class}">\n'
        f'  <div class="card-media">{_thumbnail(video["thumbnail"], featured=featured)}'
        f"{_duration(video['duration_seconds'])}</div>\n"
        f'  <div class="card-text">{_reasons(reasons)}\n'
        f'    <h{level}><a href="{escape(video["get_absolute_url"])}">'
        f"{escape(video['title'])}</a></h{level}>\n"
        '    <p class="video-meta">'
        f'<a class="channel" href="{escape(channel["get_absolute_url"])}">'
        f"{escape(channel['name'])}</a> · {_day(video['published_on'])}"
        f' · <abbr class="language" title="{escape(_LANGUAGE_NAMES.get(language, language))}">'
        f"{escape(language.upper())}</abbr></p>"
        f"{_people(video['appearances']['all'])}"
        f"{chr(10) + '    ' + tail if tail else ''}\n"
        "  </div>\n"
        "</article>\n"
    )


def cards_html(videos, *, heading_level: int = DEFAULT_HEADING_LEVEL) -> SafeString:
    """The cards of a list, one after another."""
    return mark_safe(  # noqa: S308 - card_html escapes every value
        "".join(card_html(video, heading_level=heading_level) for video in videos)
    )
