from django.urls import path

from summaries.pagecache import tags
from summaries.pagecache.middleware import cached_page

from . import (
    feeds,
    following,
    indexes,
    versions,
    views_lists,
    views_search,
    views_summary,
    views_transcript,
)

app_name = "summaries"


def latest_feed(feed):
    """A feed of the latest summaries, the site's or a channel's: cached, and purged by
    every publication (cache tag `feeds`)."""
    return cached_page(feed, tags=(tags.FEEDS,))


urlpatterns = [
    path("", views_lists.HomeView.as_view(), name="home"),
    path("search/", views_search.SearchView.as_view(), name="search"),
    path("videos/<slug:slug>/", views_summary.SummaryDetailView.as_view(), name="summary-detail"),
    path("videos/<slug:slug>/timemap/", versions.timemap_view, name="summary-timemap"),
    path(
        "videos/<slug:slug>/versions/<str:moment>/",
        versions.summary_version_view,
        name="summary-version",
    ),
    path(
        "videos/<slug:slug>/transcript/",
        views_transcript.TranscriptView.as_view(),
        name="summary-transcript",
    ),
    path(
        "videos/<slug:slug>/chapters.vtt",
        cached_page(views_transcript.chapters_vtt),
        name="summary-chapters-vtt",
    ),
    path(
        "preview/<slug:slug>/",
        views_summary.SummaryPreviewView.as_view(),
        name="summary-preview",
    ),
    path("channels/", indexes.ChannelIndexView.as_view(), name="channel-list"),
    path("channels/<slug:slug>/", views_lists.ChannelDetailView.as_view(), name="channel-detail"),
    path(
        "channels/<slug:slug>/rss/",
        latest_feed(feeds.ChannelFeed()),
        name="channel-feed-rss",
    ),
    path(
        "channels/<slug:slug>/atom/",
        latest_feed(feeds.ChannelAtomFeed()),
        name="channel-feed-atom",
    ),
    path("people/", indexes.PersonIndexView.as_view(), name="person-list"),
    path("people/<slug:slug>/", views_lists.PersonDetailView.as_view(), name="person-detail"),
    path("topics/", indexes.TopicIndexView.as_view(), name="topic-list"),
    path("topics/<slug:slug>/", views_lists.TopicDetailView.as_view(), name="topic-detail"),
    path("feeds/rss/", latest_feed(feeds.LatestSummariesFeed()), name="feed-rss"),
    path(
        "feeds/atom/",
        latest_feed(feeds.LatestSummariesAtomFeed()),
        name="feed-atom",
    ),
    path("corrections/", views_lists.CorrectionListView.as_view(), name="corrections"),
    path("corrections/rss/", cached_page(feeds.CorrectionsFeed()), name="corrections-feed-rss"),
    path(
        "corrections/atom/", cached_page(feeds.CorrectionsAtomFeed()), name="corrections-feed-atom"
    ),
    # Following by e-mail: personal pages, never cached (reader/following.py).
    path("follow/", following.follow, name="follow"),
    path("follow/confirm/<str:token>/", following.confirm, name="follow-confirm"),
    path("follow/manage/<str:token>/", following.manage, name="follow-manage"),
    path("follow/unsubscribe/<str:token>/", following.unsubscribe, name="follow-unsubscribe"),
]
