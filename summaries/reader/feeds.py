"""RSS 2.0 and Atom feeds of live summaries, site-wide and per channel.

The Feed classes hand out plain text (titles, the 30-second text, channel names); the
generators below turn it into what each element of each format holds. Readers render an
RSS <title> or <description> as HTML, so there the text is HTML-escaped (the XML writer then
escapes it once more, as XML). Atom says which is which (RFC 4287 §3.1): <title>,
<subtitle> and <name> are text and carry the text as it is; <summary type="html"> is HTML.
"""

import re
from typing import cast

from django.contrib.syndication.views import Feed
from django.db.models import OuterRef, Subquery
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed, Rss201rev2Feed, SyndicationFeed
from django.utils.html import escape
from django.utils.text import normalize_newlines

from summaries.models import Channel, Correction, Summary

from .absolute import site_host, site_is_secure

FEED_SIZE = 50
SITE_NAME = "Curation"

# Characters XML 1.0 cannot carry at all; Django's XML writer refuses the whole feed on one.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def xml_text(text):
    """The text with what XML cannot hold (control characters, e.g. Word's line break \\v)
    replaced by spaces; None stays None."""
    return None if text is None else _NOT_XML.sub(" ", str(text))


def html_from_text(text, *, line_breaks=False):
    """HTML that shows exactly the plain text: markup characters escaped, nothing else.

    With line_breaks, each line break becomes <br>, the only markup the HTML holds.
    """
    if text is None:
        return None
    html = escape(xml_text(text))
    return normalize_newlines(html).replace("\n", "<br>") if line_breaks else html


class PlainTextRssFeed(Rss201rev2Feed):
    """RSS 2.0 from plain text: titles and descriptions escaped as HTML, the author as text."""

    def __init__(self, title, link, description, **kwargs):
        super().__init__(
            html_from_text(title), link, html_from_text(description, line_breaks=True), **kwargs
        )

    def add_item(self, title, link, description, author_name=None, **kwargs):
        super().add_item(
            html_from_text(title),
            link,
            html_from_text(description, line_breaks=True),
            author_name=xml_text(author_name),
            **kwargs,
        )


class PlainTextAtomFeed(Atom1Feed):
    """Atom from plain text: titles, subtitle and names as text, the summary as HTML."""

    def __init__(self, title, link, description, subtitle=None, **kwargs):
        super().__init__(
            xml_text(title), link, xml_text(description), subtitle=xml_text(subtitle), **kwargs
        )

    def add_item(self, title, link, description, author_name=None, **kwargs):
        super().add_item(
            xml_text(title),
            link,
            html_from_text(description, line_breaks=True),  # <summary type="html">
            author_name=xml_text(author_name),
            **kwargs,
        )


class _OnSiteUrl:
    """The request as Feed.get_feed reads it, but with SITE_URL's host and scheme: Django
    makes the feed's and its items' links absolute with them (get_current_site, is_secure)."""

    def __init__(self, request):
        self._request = request

    def get_host(self):
        return site_host()

    def is_secure(self):
        return site_is_secure()

    def __getattr__(self, name):
        return getattr(self._request, name)


class SiteFeed(Feed):
    """A feed whose links start with SITE_URL, whatever the request's Host and scheme."""

    def get_feed(self, obj, request):
        # A stand-in for the request, with every attribute of it (typing.cast).
        return super().get_feed(obj, cast(HttpRequest, _OnSiteUrl(request)))


def live_summaries(**filters):
    """The newest live summaries with what an item shows, in one query for the whole feed."""
    return (
        Summary.objects.published()
        .filter(**filters)
        .select_related("video__channel")
        .annotate(last_public_change=last_public_change())
        .order_by("-publish_at", "-id")[:FEED_SIZE]
    )


def last_public_change():
    """When a summary's last update or correction went live (None: never changed so)."""
    return Subquery(
        Correction.objects.public()
        .filter(summary=OuterRef("pk"))
        .order_by("-published_at")
        .values("published_at")[:1]
    )


class LatestSummariesFeed(SiteFeed):
    """The latest live summaries across channels (RSS 2.0)."""

    feed_type = PlainTextRssFeed
    title = f"{SITE_NAME}: latest summaries"
    description = "Curated summaries of AI videos, newest first."
    item_guid_is_permalink = True

    def link(self):
        return reverse("summaries:home")

    def items(self):
        return live_summaries()

    # Plain text, not Django's default escape(str(item)): the generator escapes per format.
    def item_title(self, item):
        return item.video.title

    def item_description(self, item):
        return item.tldr

    def item_link(self, item):
        return item.get_absolute_url()

    def item_pubdate(self, item):
        return item.publish_at

    def item_updateddate(self, item):
        """When its last update or correction went live (typo fixes do not count), else
        when it was published."""
        return item.last_public_change or item.publish_at

    def item_author_name(self, item):
        return item.video.channel.name


class LatestSummariesAtomFeed(LatestSummariesFeed):
    feed_type = PlainTextAtomFeed
    subtitle = LatestSummariesFeed.description


class ChannelFeed(LatestSummariesFeed):
    """The latest live summaries of one channel (RSS 2.0); an unknown slug answers 404."""

    def get_object(self, request, slug):
        return get_object_or_404(Channel, slug=slug)

    def title(self, channel):
        return f"{channel.name} — {SITE_NAME}"

    def description(self, channel):
        return channel.description or f"Curated summaries of videos from {channel.name}."

    def link(self, channel):
        return channel.get_absolute_url()

    def items(self, channel):
        return live_summaries(video__channel=channel)


class ChannelAtomFeed(ChannelFeed):
    feed_type = PlainTextAtomFeed

    def subtitle(self, channel):
        return self.description(channel)


class CorrectionsFeed(SiteFeed):
    """The latest updates and corrections of live summaries (RSS 2.0), one item each."""

    feed_type: type[SyndicationFeed] = PlainTextRssFeed
    title = f"{SITE_NAME}: updates and corrections"
    description = "What changed in published summaries, and why, newest first."
    item_guid_is_permalink = True

    def link(self):
        return reverse("summaries:corrections")

    def items(self):
        return (
            Correction.objects.public()
            .live()
            .select_related("summary__video__channel")
            .order_by("-published_at", "-id")[:FEED_SIZE]
        )

    def item_title(self, item):
        kind = "Correction" if item.kind == Correction.Kind.CORRECTION else "Update"
        withdrawn = " (withdrawn)" if item.is_withdrawn else ""
        return f"{kind}{withdrawn}: {item.summary.video.title}"

    def item_description(self, item):
        text = item.note or "The summary was updated."
        if item.is_withdrawn:
            text += f"\n\nWithdrawn on {item.withdrawn_at:%-d %b %Y}: {item.withdrawal_note}"
        return text

    def item_link(self, item):
        return f"{item.summary.get_absolute_url()}#correction-{item.pk}"

    def item_pubdate(self, item):
        return item.published_at

    def item_updateddate(self, item):
        return item.withdrawn_at or item.published_at

    def item_author_name(self, item):
        return item.summary.video.channel.name


class CorrectionsAtomFeed(CorrectionsFeed):
    feed_type = PlainTextAtomFeed
    subtitle = CorrectionsFeed.description
