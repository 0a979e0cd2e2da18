"""RSS 2.0 and Atom feeds of live summaries, site-wide and per channel."""

from django.contrib.syndication.views import Feed
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed

from .models import Channel, Summary

FEED_SIZE = 50
SITE_NAME = "Curation"


def live_summaries(**filters):
    """The newest live summaries with what an item shows, in one query for the whole feed."""
    return (
        Summary.objects.published()
        .filter(**filters)
        .select_related("video__channel")
        .order_by("-publish_at", "-id")[:FEED_SIZE]
    )


class LatestSummariesFeed(Feed):
    """The latest live summaries across channels (RSS 2.0)."""

    title = f"{SITE_NAME}: latest summaries"
    description = "Curated summaries of AI videos, newest first."
    item_guid_is_permalink = True

    def link(self):
        return reverse("summaries:home")

    def items(self):
        return live_summaries()

    def item_title(self, item):
        return item.video.title

    def item_description(self, item):
        return item.tldr

    def item_link(self, item):
        return item.get_absolute_url()

    def item_pubdate(self, item):
        return item.publish_at

    def item_updateddate(self, item):
        return item.updated_at

    def item_author_name(self, item):
        return item.video.channel.name


class LatestSummariesAtomFeed(LatestSummariesFeed):
    feed_type = Atom1Feed
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
    feed_type = Atom1Feed

    def subtitle(self, channel):
        return self.description(channel)
