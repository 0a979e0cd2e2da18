from django import template
from django.utils.html import format_html, format_html_join

from summaries.models import LANGUAGE_CHOICES
from summaries.reader import card_html
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
    """A video's length as readers say it (summaries.text.durations.running_time)."""
    return running_time(seconds)


# Words a reader gets through in a minute of attentive reading (technical prose).
WORDS_PER_MINUTE = 230


def _words(text: str) -> int:
    # Spaces and line breaks, not a tag-stripping parse: ~0.3 ms for an hour's transcript
    # against ~4 ms, and the one attribute space of each link hardly moves a minute.
    return text.count(" ") + text.count("\n") + 1 if text else 0


@register.simple_tag
def reading_time(summary):
    """Reading time, "8 min read": the words of the 30-second text, key points, takeaways,
    chapters and caveats at WORDS_PER_MINUTE, at least a minute.

    Reads only what the page prefetched (`SummaryQuerySet.with_parts`): no query.
    """
    words = _words(summary.tldr)
    for point in summary.key_points.all():
        words += _words(point.title) + _words(point.body_html)
    for takeaway in summary.takeaways.all():
        words += _words(takeaway.text_html)
    for chapter in summary.chapters.all():
        words += _words(chapter.title) + _words(chapter.synopsis) + _words(chapter.body_html)
    for caveat in summary.caveats.all():
        words += _words(caveat.text_html)
    return f"{max(1, round(words / WORDS_PER_MINUTE))} min read"


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


@register.filter
def host(value):
    """anthropic.com for www.anthropic.com or a full URL."""
    return host_of(value if "://" in value else f"https://{value}")


@register.simple_tag
def options(choices, selected):
    """<option>s for (value, label) pairs, the selected value marked.

    A channel's filter form has hundreds; a template loop spends ~10 µs on each.
    """
    return format_html_join(
        "",
        '<option value="{}"{}>{}</option>',
        ((value, " selected" if value == selected else "", label) for value, label in choices),
    )


@register.simple_tag(takes_context=True)
def video_cards(context, videos):
    """The cards of a list (summaries/reader/card_html.py), at the page's `heading_level`."""
    level = context.get("heading_level") or card_html.DEFAULT_HEADING_LEVEL
    return card_html.cards_html(videos, heading_level=level)


@register.simple_tag
def video_card(video, snippet=None):
    """One card; a search result's `snippet` (safe HTML) takes the blurb's place."""
    if snippet is None:
        return card_html.card_html(video)
    return card_html.card_html(
        video,
        css_class="video-card search-result",
        tail=format_html('<p class="snippet">{}</p>', snippet),
    )
