"""Reader pages. Only live summaries are public; staff preview anything at /preview/."""

from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Exists, OuterRef, Prefetch
from django.shortcuts import get_object_or_404
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.generic import DetailView, ListView

from . import presentation, related, search, seo
from .caching import CachedPageMixin
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
    return Video.objects.published().with_listing_data().order_by("-published_on", "-id")


class HomeView(CachedPageMixin, ListView):
    template_name = "summaries/home.html"
    context_object_name = "videos"
    paginate_by = PAGE_SIZE

    def get_queryset(self):
        return published_videos()


class VideoListView(CachedPageMixin, ListView):
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


class ChannelDetailView(VideoListView):
    template_name = "summaries/channel_detail.html"
    model_class = Channel
    lookup = "channel"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        live = Video.objects.published().filter(channel=self.owner).order_by()
        context["channel"] = self.owner
        # EXISTS per topic or person (a few hundred rows) rather than DISTINCT over the
        # joins of every video of the channel.
        # Plain rows: the form needs only names and slugs (hundreds of options).
        context["topic_choices"] = Topic.objects.filter(
            Exists(Video.topics.through.objects.filter(topic=OuterRef("pk"), video__in=live))
        ).values("slug", "name")
        context["person_choices"] = Person.objects.filter(
            Exists(Appearance.objects.filter(person=OuterRef("pk"), video__in=live))
        ).values("slug", "name")
        languages = set(live.values_list("language", flat=True).distinct())
        context["language_choices"] = [
            (code, name) for code, name in LANGUAGE_CHOICES if code in languages
        ]
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
        context["related"] = related.related_for_page(video, limit=RELATED_COUNT)
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
