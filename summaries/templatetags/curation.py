from html import escape

from django import template
from django.utils.html import format_html
from django.utils.safestring import mark_safe

from summaries.models import LANGUAGE_CHOICES
from summaries.reader import article, card_html
from summaries.text import platforms
from summaries.text.durations import format_duration, running_time
from summaries.text.links import host_of, http_url, text_fragment_url

register = template.Library()

# get_language_display flattens the ~100 choices on every call; cards call it often.
_LANGUAGE_NAMES = dict(LANGUAGE_CHOICES)


@register.filter
def language_name(code):
    """English for "en"; the code itself when unknown."""
    return _LANGUAGE_NAMES.get(code, code)


@register.filter
def duration(seconds):
    """34:21 for 2061 seconds; 1:02:03 past an hour."""
    if seconds in (None, ""):
        return ""
    return format_duration(seconds)


@register.filter(name="running_time")
def running_time_filter(seconds):
    """A video's length as a clock, 34:21 (summaries.text.durations.running_time)."""
    return running_time(seconds)


@register.simple_tag
def reading_time(summary):
    """Reading time, "8 min read" (summaries/reader/article.py), from prefetched parts."""
    return article.reading_time(summary)


@register.filter
def youtube_id(video):
    """The id of a YouTube video, which the page's player may embed; "" for other videos."""
    if video.platform == platforms.YOUTUBE:
        return video.platform_video_id
    return ""


@register.filter
def youtube_watch_url(video_id):
    """The video's own page on YouTube, for readers without JavaScript or the player."""
    return f"https://www.youtube.com/watch?v={video_id}"


@register.filter(name="http_url")
def http_url_filter(url):
    """The URL if it may be an href (http or https); "" otherwise (test it with {% if %})."""
    return http_url(url)


@register.simple_tag
def time_link(video, seconds):
    """A link into the video at that second, "Watch from 3:21" (player.js plays it on the
    page); the time alone if it cannot link."""
    url = http_url(video.url_at(seconds))
    if url:
        return format_html('<a class="time" href="{}">Watch from {}</a>', url, duration(seconds))
    return format_html('<span class="time">{}</span>', duration(seconds))


@register.filter
def text_fragment(url, phrase):
    """The cited URL pointing at the phrase; "" when the URL may not be an href."""
    url = http_url(url)
    return text_fragment_url(url, phrase) if url else ""


# The tints a monogram may take (site.css: .avatar--0 to .avatar--5).
TINTS = 6


@register.filter
def monogram(name):
    """The initials a channel or person is shown by where there is no picture: "MB" for
    Matthew Berman, "O" for OpenAI."""
    return "".join(word[0] for word in str(name).split()[:2]).upper()


@register.filter
def tint(name):
    """The same tint for the same name, on every page (0 to TINTS - 1)."""
    return sum(map(ord, str(name))) % TINTS


@register.filter
def host(value):
    """anthropic.com for www.anthropic.com or a full URL."""
    return host_of(value if "://" in value else f"https://{value}")


@register.simple_tag
def options(choices, selected):
    """<option>s for (value, label) pairs, the selected value marked.

    A channel's filter form has hundreds: a template loop spends ~10 µs on each and
    format_html ~7 µs, html.escape (what django.utils.html.escape calls) under 1 µs.
    """
    return mark_safe(  # noqa: S308 - every value and label is escaped
        "".join(
            f'<option value="{escape(str(value))}"{" selected" if value == selected else ""}>'
            f"{escape(str(label))}</option>"
            for value, label in choices
        )
    )


@register.simple_tag(takes_context=True)
def video_cards(context, videos):
    """The cards of a list (summaries/reader/card_html.py), at the page's `heading_level`."""
    level = context.get("heading_level") or card_html.DEFAULT_HEADING_LEVEL
    return card_html.cards_html(videos, heading_level=level)


@register.simple_tag
def video_card(video, snippet=None, reasons=None):
    """One card; a search result's `snippet` (safe HTML) takes the blurb's place, a
    related video's `reasons` are its label."""
    if snippet is None:
        return card_html.card_html(video, reasons=reasons)
    return card_html.card_html(
        video,
        css_class="video-card search-result",
        tail=format_html('<p class="snippet">{}</p>', snippet),
    )


@register.simple_tag
def featured_card(video):
    """The home page's first card, larger, its picture loaded first, its title an h2."""
    return card_html.card_html(
        video, heading_level=2, css_class="video-card video-card--featured", featured=True
    )
