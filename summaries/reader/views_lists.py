"""List pages: home, corrections, and the videos of a channel, person or topic."""

import hashlib
from dataclasses import dataclass
from urllib.parse import urlencode

from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404
from django.utils.functional import cached_property
from django.views.generic import ListView

from summaries.models import Appearance, Channel, Person, Summary, Topic, Video
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.fragments import cached_fragment
from summaries.pagecache.middleware import CachedPageMixin, canonical_query

from . import cards, corrections, facets
from .navigation import SectionMixin, breadcrumbs, section_crumb

PAGE_SIZE = 20
FILTER_NAMES = ("topic", "person", "language")


def published_videos():
    """Live videos, newest first, as the rows cards are made of (cards.card_values)."""
    return cards.live_card_rows()


class CachedCountPaginator(Paginator):
    """A paginator that keeps the list's length in the fragment cache.

    Counting the live videos of a long list costs more than fetching its page; the number
    changes only when content does. `known_count`, when given, returns the length from a
    cheaper source than COUNT over the list's query (None: count the list).
    """

    def __init__(self, object_list, per_page, *, count_key, known_count=None, **kwargs):
        super().__init__(object_list, per_page, **kwargs)
        self.count_key = count_key
        self.known_count = known_count

    def _count(self) -> int:
        known = self.known_count() if self.known_count else None
        return Paginator.count.func(self) if known is None else known

    @cached_property
    def count(self):
        return cached_fragment(self.count_key, self._count)


class CachedListMixin(CachedPageMixin):
    """For list views: count through CachedCountPaginator under the key `count_key()`
    (None: count without the cache), and page links in the spelling the page cache keeps.
    """

    def count_key(self) -> str | None:
        raise NotImplementedError

    def known_count(self) -> int | None:
        """The list's length if something cheaper than COUNT over its query knows it."""
        return None

    def query_pairs(self) -> list[tuple[str, str]]:
        """The query parameters, other than the page, of the list this page belongs to."""
        return []

    def get_paginator(self, queryset, per_page, orphans=0, allow_empty_first_page=True, **kwargs):
        key = self.count_key()
        if key is None:
            return Paginator(queryset, per_page, orphans, allow_empty_first_page)
        return CachedCountPaginator(
            queryset,
            per_page,
            orphans=orphans,
            allow_empty_first_page=allow_empty_first_page,
            count_key=key,
            known_count=self.known_count,
            **kwargs,
        )

    def page_url(self, number: int) -> str:
        query = self.page_query(number)
        return f"?{query}" if query else self.request.path

    def page_query(self, number: int) -> str:
        page = [("page", str(number))] if number != 1 else []
        return canonical_query([*self.query_pairs(), *page])

    def cache_query(self) -> str | None:
        return self.page_query(self.page_number)

    def paginate_queryset(self, queryset, page_size):
        paginator, page, object_list, is_paginated = super().paginate_queryset(queryset, page_size)
        self.page_number = page.number
        return paginator, page, object_list, is_paginated

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        page = context["page_obj"]
        if page.has_previous():
            context["previous_url"] = self.page_url(page.previous_page_number())
        if page.has_next():
            context["next_url"] = self.page_url(page.next_page_number())
        return context


class CardListMixin:
    """For lists of published_videos(): the page's rows become cards, with their people
    (one query for the page)."""

    def paginate_queryset(self, queryset, page_size):
        paginator, page, object_list, is_paginated = super().paginate_queryset(queryset, page_size)
        page.object_list = cards.add_people([cards.card(row) for row in object_list])
        return paginator, page, page.object_list, is_paginated


class HomeView(SectionMixin, CardListMixin, CachedListMixin, ListView):
    template_name = "summaries/home.html"
    context_object_name = "videos"
    paginate_by = PAGE_SIZE
    section = "home"
    section_page = True

    def get_queryset(self):
        return published_videos()

    def count_key(self):
        return "count:home"

    def cache_tags(self):
        return (cache_tags.HOME,)

    def known_count(self):
        # A live summary always has a video of its own (Summary's constraints), so the
        # live videos are as many as the live summaries: counted from the visibility
        # index alone, without joining the videos.
        return Summary.objects.published().count()


class CorrectionListView(CachedListMixin, ListView):
    """Every update and correction of live summaries, newest first, each linking to its
    summary (typo fixes are not shown)."""

    template_name = "summaries/corrections.html"
    context_object_name = "corrections"
    paginate_by = PAGE_SIZE

    def get_queryset(self):
        return corrections.site_list()

    def count_key(self):
        return None  # counted with the page: the list is short and changes rarely

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        for correction in context["corrections"]:
            correction.what_changed = corrections.what_changed_html(correction.changes)
        return context


# The cache tags of a list's owner (its name) and of its list, by the list's lookup.
OWNER_TAGS = {
    "channel": (cache_tags.channel, cache_tags.channel_list),
    "people": (cache_tags.person, cache_tags.person_list),
    "topics": (cache_tags.topic, cache_tags.topic_list),
}


class VideoListView(SectionMixin, CardListMixin, CachedListMixin, ListView):
    """Videos of one channel, person or topic, filterable by topic, person and language.

    Filter values are those of the owner's live videos (`facets.choices`); a page asked for
    with any other value is shown, filtered by it, but neither its page nor its length is
    cached, so made-up values add nothing to the cache.
    """

    context_object_name = "videos"
    paginate_by = PAGE_SIZE
    model_class = None
    lookup = ""

    def get_owner(self):
        return get_object_or_404(self.model_class, slug=self.kwargs["slug"])

    def choices(self) -> dict:
        """Shared by every page and filter of the owner: stored (reader.facets)."""
        if not hasattr(self, "_choices"):
            self._choices = facets.choices(self.lookup, self.owner)
        return self._choices

    def get_queryset(self):
        self.owner = self.get_owner()
        videos = published_videos().filter(**{self.lookup: self.owner})
        self.filters = {}
        for name in FILTER_NAMES:
            value = self.request.GET.get(name, "").strip()[:200]
            if value:
                self.filters[name] = value
        self.filters_chosen = all(
            value in {choice for choice, _ in self.choices()[name]}
            for name, value in self.filters.items()
        )
        for name, lookup in (("topic", "topics__slug"), ("person", "people__slug")):
            if name in self.filters:
                videos = videos.filter(**{lookup: self.filters[name]})
        if "language" in self.filters:
            videos = videos.filter(language=self.filters["language"])
        if any("\x00" in value for value in self.filters.values()):
            # No slug or language holds NUL, and PostgreSQL refuses to compare text with it.
            videos = videos.none()
        # Only joins through people or topics can repeat a video; DISTINCT over every
        # column is costly on a long list, so it is added only then.
        if (
            self.lookup in ("people", "topics")
            or "topic" in self.filters
            or "person" in self.filters
        ):
            videos = videos.distinct()
        return videos

    def query_pairs(self):
        return list(self.filters.items())

    def known_count(self):
        return None if self.filters else self.choices()["total"]

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["owner"] = self.owner
        context["filters"] = self.filters
        # Every key present: a missing one costs the template a dir() per <option>.
        context["selected"] = {name: self.filters.get(name, "") for name in FILTER_NAMES}
        context["breadcrumbs"] = breadcrumbs(
            section_crumb(self.section), (self.owner.name, self.owner.get_absolute_url())
        )
        return context

    def count_key(self):
        if not self.filters_chosen:
            return None
        # Filter values come from the query string: hashed, so the key stays short.
        filters = hashlib.sha256(urlencode(sorted(self.filters.items())).encode()).hexdigest()
        return f"count:{self.lookup}:{self.owner.pk}:{filters}"

    def cache_query(self):
        return super().cache_query() if self.filters_chosen else None

    def cache_tags(self):
        """The owner's list and name (a rename purges every answer; tags.py)."""
        name, listed = OWNER_TAGS[self.lookup]
        return (name(self.owner.pk), listed(self.owner.pk))


class ChannelDetailView(VideoListView):
    template_name = "summaries/channel_detail.html"
    model_class = Channel
    lookup = "channel"
    section = "channels"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["channel"] = self.owner
        context["choices"] = self.choices()
        return context


@dataclass(frozen=True)
class Affiliation:
    organisation: str
    first_year: int
    last_year: int

    @property
    def years(self) -> str:
        if self.first_year == self.last_year:
            return str(self.first_year)
        return f"{self.first_year}\u2013{self.last_year}"


def affiliations(person: Person) -> list[Affiliation]:
    """Whom `person` spoke for on their live videos, oldest first: one entry per run of
    consecutive appearances for the same organisation, with its years. Appearances for no
    organisation are left out; drafts and scheduled videos never count. One query."""
    rows = (
        Appearance.objects.filter(
            person=person,
            organisation__isnull=False,
            video__in=Video.objects.published().values("pk"),
        )
        .order_by("video__published_on", "video_id")
        .values_list("organisation_id", "organisation__name", "video__published_on")
    )
    runs: list[tuple[int, Affiliation]] = []
    for organisation_id, name, day in rows:
        if runs and runs[-1][0] == organisation_id:
            first = runs[-1][1].first_year
            runs[-1] = (organisation_id, Affiliation(name, first, day.year))
        else:
            runs.append((organisation_id, Affiliation(name, day.year, day.year)))
    return [affiliation for _, affiliation in runs]


class PersonDetailView(VideoListView):
    template_name = "summaries/person_detail.html"
    model_class = Person
    lookup = "people"
    section = "people"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        # Shared by every page of the person's list.
        context["affiliations"] = cached_fragment(
            f"affiliations:{self.owner.pk}", lambda: affiliations(self.owner)
        )
        return context


class TopicDetailView(VideoListView):
    template_name = "summaries/topic_detail.html"
    model_class = Topic
    lookup = "topics"
    section = "topics"
