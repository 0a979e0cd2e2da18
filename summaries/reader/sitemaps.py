"""sitemap.xml: live summary pages, the channel, person and topic pages that list them, and
the indexes of channels, people and topics.

Only live summaries count: a channel, person or topic whose videos are all drafts or scheduled
is left out, so the sitemap never reveals what is not published yet.
"""

from django.contrib.sitemaps import Sitemap
from django.db.models import OuterRef, Subquery
from django.db.models.functions import Greatest
from django.urls import reverse

from summaries.models import Channel, Person, Summary, Topic

from .absolute import site_host, site_is_secure


class SiteSitemap(Sitemap):
    """Locations on SITE_URL, whatever the request's Host and scheme."""

    def get_protocol(self, protocol=None):
        return "https" if site_is_secure() else "http"

    def get_domain(self, site=None):
        return site_host()


def live_summaries():
    """Live summaries with `changed_at`: when what a reader sees last changed.

    A scheduled summary appears at its publish time, which may be later than its last edit.
    """
    return Summary.objects.published().annotate(changed_at=Greatest("updated_at", "publish_at"))


class SummarySitemap(SiteSitemap):
    changefreq = "weekly"
    priority = 0.8

    def items(self):
        # The page shows the video's fields too (title, people), so their edits count.
        return (
            live_summaries()
            .annotate(page_changed_at=Greatest("changed_at", "video__updated_at"))
            .select_related("video")
            .order_by("pk")
        )

    def location(self, item):
        return item.get_absolute_url()

    def lastmod(self, item):
        return item.page_changed_at


class ListingSitemap(SiteSitemap):
    """Pages of a model that list live summaries; lastmod is the latest change among them."""

    model = None
    # How a live summary reaches the listed object, e.g. "video__channel".
    summary_lookup = ""
    changefreq = "daily"
    priority = 0.5

    def items(self):
        latest_change = (
            live_summaries()
            .filter(**{self.summary_lookup: OuterRef("pk")})
            .order_by("-changed_at")
            .values("changed_at")[:1]
        )
        return (
            self.model.objects.annotate(latest_change=Subquery(latest_change))
            .filter(latest_change__isnull=False)
            .order_by("pk")
        )

    def lastmod(self, item):
        return item.latest_change


class ChannelSitemap(ListingSitemap):
    model = Channel
    summary_lookup = "video__channel"


class PersonSitemap(ListingSitemap):
    model = Person
    summary_lookup = "video__people"


class TopicSitemap(ListingSitemap):
    model = Topic
    summary_lookup = "video__topics"


class HomeSitemap(SiteSitemap):
    """Pages that list every live summary or what they are about; lastmod is the latest
    change among all live summaries (read once per sitemap)."""

    changefreq = "daily"
    priority = 1.0
    url_names = ["summaries:home"]

    def items(self):
        return self.url_names

    def location(self, item):
        return reverse(item)

    def lastmod(self, item):
        if not hasattr(self, "_latest"):
            latest = live_summaries().order_by("-changed_at").values("changed_at").first()
            self._latest = latest["changed_at"] if latest else None
        return self._latest


class IndexSitemap(HomeSitemap):
    """The channel, person and topic indexes."""

    priority = 0.6
    url_names = ["summaries:channel-list", "summaries:person-list", "summaries:topic-list"]


SITEMAPS = {
    "home": HomeSitemap,
    "indexes": IndexSitemap,
    "summaries": SummarySitemap,
    "channels": ChannelSitemap,
    "people": PersonSitemap,
    "topics": TopicSitemap,
}
