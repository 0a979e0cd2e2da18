"""Reader pages. Only live summaries are public; staff preview anything at /preview/."""

import hashlib
from urllib.parse import urlencode

from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.db.models import Exists, OuterRef, Prefetch
from django.shortcuts import get_object_or_404
from django.utils.decorators import method_decorator
from django.utils.functional import cached_property
from django.views.decorators.cache import never_cache
from django.views.generic import DetailView, ListView

from . import presentation, related, search, seo
from .caching import CachedPageMixin, cached_fragment
from .models import (
    LANGUAGE_CHOICES,
    Appearance,
    Caveat,
    Channel,
    Citation,
    Person,
    Summary,
    Topic,
    Video,
)

PAGE_SIZE = 20
FILTER_NAMES = ("topic", "person", "language")
RELATED_COUNT = 10


def published_videos():
    """Live videos, newest first, with what a card shows (cards show no summary field)."""
    return Video.objects.published().with_card_data().order_by("-published_on", "-id")


class CachedCountPaginator(Paginator):
    """A paginator that keeps the list's length in the fragment cache.

    Counting the live videos of a long list costs more than fetching its page; the number
    changes only when content does.
    """

    def __init__(self, object_list, per_page, *, count_key, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        self.count_key = count_key

    @cached_property
    def count(self):
        return cached_fragment(self.count_key, lambda: Paginator.count.func(self))


class CachedCountMixin:
    """For list views: count through CachedCountPaginator under the key `count_key()`."""

    def count_key(self):
        raise NotImplementedError

    def get_paginator(self, queryset, per_page, orphans=0, allow_empty_first_page=True, **kwargs):
        return CachedCountPaginator(
            queryset,
            per_page,
            orphans=orphans,
            allow_empty_first_page=allow_empty_first_page,
            count_key=self.count_key(),
            **kwargs,
        )


class HomeView(CachedPageMixin, CachedCountMixin, ListView):
    template_name = "summaries/home.html"
    context_object_name = "videos"
    paginate_by = PAGE_SIZE

    def get_queryset(self):
        return published_videos()

    def count_key(self):
        return "count:home"


def channel_filter_choices(channel) -> dict[str, list[tuple[str, str]]]:
    """(value, label) pairs of the topics, people and languages of a channel's live videos."""
    live = Video.objects.published().filter(channel=channel).order_by()
    # EXISTS per topic or person (a few hundred rows) rather than DISTINCT over the
    # joins of every video of the channel.
    topics = Topic.objects.filter(
        Exists(Video.topics.through.objects.filter(topic=OuterRef("pk"), video__in=live))
    )
    people = Person.objects.filter(
        Exists(Appearance.objects.filter(person=OuterRef("pk"), video__in=live))
    )
    languages = set(live.values_list("language", flat=True).distinct())
    return {
        "topic": list(topics.values_list("slug", "name")),
        "person": list(people.values_list("slug", "name")),
        "language": [(code, name) for code, name in LANGUAGE_CHOICES if code in languages],
    }


class VideoListView(CachedPageMixin, CachedCountMixin, ListView):
    """Videos of one channel, person or topic, filterable by topic, person and language."""

    context_object_name = "videos"
    paginate_by = PAGE_SIZE
    model_class = None
    lookup = ""

    def get_owner(self):
        return get_object_or_404(self.model_class, slug=self.kwargs["slug"])

    def get_queryset(self):
        self.owner = self.get_owner()
        videos = published_videos().filter(**{self.lookup: self.owner})
        self.filters = {}
        for name, lookup in (("topic", "topics__slug"), ("person", "people__slug")):
            value = self.request.GET.get(name, "").strip()[:200]
            if value:
                self.filters[name] = value
                videos = videos.filter(**{lookup: value})
        language = self.request.GET.get("language", "").strip()
        if language in dict(LANGUAGE_CHOICES):
            self.filters["language"] = language
            videos = videos.filter(language=language)
        # Only joins through people or topics can repeat a video; DISTINCT over every
        # column is costly on a long list, so it is added only then.
        if (
            self.lookup in ("people", "topics")
            or "topic" in self.filters
            or "person" in self.filters
        ):
            videos = videos.distinct()
        return videos

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["owner"] = self.owner
        context["filters"] = self.filters
        # Every key present: a missing one costs the template a dir() per <option>.
        context["selected"] = {name: self.filters.get(name, "") for name in FILTER_NAMES}
        context["filter_query"] = "&".join(f"{k}={v}" for k, v in self.filters.items())
        return context

    def count_key(self):
        # Filter values come from the query string: hashed, so the key stays short.
        filters = hashlib.sha256(urlencode(sorted(self.filters.items())).encode()).hexdigest()
        return f"count:{self.lookup}:{self.owner.pk}:{filters}"


class ChannelDetailView(VideoListView):
    template_name = "summaries/channel_detail.html"
    model_class = Channel
    lookup = "channel"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["channel"] = self.owner
        # Shared by every page and filter of the channel, and costly on a long channel.
        context["choices"] = cached_fragment(
            f"channel-choices:{self.owner.pk}", lambda: channel_filter_choices(self.owner)
        )
        return context


class PersonDetailView(VideoListView):
    template_name = "summaries/person_detail.html"
    model_class = Person
    lookup = "people"


class TopicDetailView(VideoListView):
    template_name = "summaries/topic_detail.html"
    model_class = Topic
    lookup = "topics"


class SearchView(CachedPageMixin, ListView):
    template_name = "summaries/search.html"
    context_object_name = "summaries"
    paginate_by = PAGE_SIZE

    def get_queryset(self):
        self.query = self.request.GET.get("q", "")[:200]
        return search.search_summaries(self.query).select_related("video", "video__channel")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["query"] = self.query
        return context


class SummaryDetailView(CachedPageMixin, DetailView):
    """A summary page; a summary that is not live answers 404."""

    template_name = "summaries/summary_detail.html"
    context_object_name = "summary"
    slug_field = "video__slug"

    def summaries(self):
        return Summary.objects.published()

    def get_object(self, queryset=None):
        queryset = (
            self.summaries()
            .defer("search_document")  # the whole text again, for search only
            .select_related("video", "video__channel")
            .prefetch_related(
                Prefetch(
                    "video__appearances",
                    queryset=Appearance.objects.select_related("person", "organisation"),
                ),
                "video__topics",
                "key_points",
                "takeaways",
                "chapters",
                Prefetch("caveats", queryset=Caveat.objects.order_by("position")),
                Prefetch("citations", queryset=Citation.objects.select_related("source")),
            )
        )
        return super().get_object(queryset)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        video = self.object.video
        context["video"] = video
        context["more_from_channel"] = (
            published_videos().filter(channel=video.channel).exclude(pk=video.pk)[:6]
        )
        context["chapters"] = presentation.chapters_for_page(self.object)
        # Cards show no topics; the reasons beside them are stored text.
        context["related"] = related.related_for_page(video, limit=RELATED_COUNT, topics=False)
        context["social"] = seo.social_meta(self.object, self.request)
        context["jsonld"] = seo.json_ld_script(seo.video_object_jsonld(self.object, self.request))
        return context


@method_decorator([staff_member_required, never_cache], name="dispatch")
class SummaryPreviewView(SummaryDetailView):
    """Exactly the reader page, for any state, for staff only and never cached."""

    page_cache = False

    def summaries(self):
        return Summary.objects.all()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["preview"] = True
        return context
