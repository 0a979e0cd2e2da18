"""Reader pages. Only live summaries are public; editors preview anything at /preview/."""

import hashlib
from dataclasses import dataclass, replace
from urllib.parse import urlencode

from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import connections
from django.db.models import OuterRef, Subquery, Value
from django.http import Http404, HttpResponse, HttpResponseBadRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.decorators import method_decorator
from django.utils.functional import cached_property
from django.views.decorators.cache import never_cache
from django.views.generic import DetailView, ListView, TemplateView

from summaries.editing import video_changes
from summaries.models import (
    Appearance,
    Channel,
    KeyPoint,
    Person,
    Summary,
    Takeaway,
    Topic,
    Transcript,
    Video,
)
from summaries.models.access import can_see_unpublished
from summaries.pagecache import tags as cache_tags
from summaries.pagecache.fragments import cached_fragment
from summaries.pagecache.middleware import CachedPageMixin, canonical_query

from . import (
    article,
    cards,
    corrections,
    facets,
    memento,
    oembed,
    page_rows,
    presentation,
    receipts,
    related,
    search,
    search_filters,
    search_results,
    search_suggest,
    seo,
)
from .absolute import site_url
from .compiled import CompiledQuery
from .navigation import SectionMixin, breadcrumbs, section_crumb

PAGE_SIZE = 20
FILTER_NAMES = ("topic", "person", "language")
RELATED_COUNT = 10


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


class SearchView(ListView):
    """Search results with snippets, filters (search_filters.SearchFilter) and "did you
    mean" when nothing is found; filters alone list the matching summaries, newest first.

    Not page-cached: every query string is a page of its own, so caching them would let
    anyone fill the cache. Invalid filters answer 400 with the form saying what is wrong;
    a page number that is not one shows the first page, one past the end the last.
    """

    template_name = "summaries/search.html"
    context_object_name = "summaries"
    paginate_by = PAGE_SIZE

    def get(self, request, *args, **kwargs):
        self.query = search.clean_query(request.GET.get("q", ""))
        self.choices = search_filters.cached_filter_choices()
        self.filterset = search_filters.SearchFilter(
            request.GET, queryset=Summary.objects.published(), choices=self.choices.choices
        )
        self.valid = self.filterset.is_valid()
        self.filters = self.filterset.chosen() if self.valid else {}
        response = super().get(request, *args, **kwargs)
        if not self.valid:
            response.status_code = 400
        return response

    def get_queryset(self):
        """The ids of the results, best first: a list when searching (at most MAX_RANKED
        on PostgreSQL, so its length is the count: one query), else a queryset."""
        if not self.valid or not (self.query or self.filters):
            return []
        summaries = self.filterset.qs
        if self.query:
            matches = search.search_summaries(self.query, summaries=summaries)
            return list(matches.values_list("pk", flat=True))
        return summaries.order_by("-publish_at", "-id").values_list("pk", flat=True)

    def paginate_queryset(self, queryset, page_size):
        paginator = self.get_paginator(queryset, page_size)
        page = paginator.get_page(self.request.GET.get("page"))
        return paginator, page, page.object_list, page.has_other_pages()

    def page_url(self, number: int) -> str:
        pairs = [("q", self.query), *self.filters.items()]
        if number != 1:
            pairs.append(("page", str(number)))
        return f"?{canonical_query(pairs)}"

    def suggestion(self) -> search_suggest.Suggestion | None:
        def finds_something(query: str) -> bool:
            return search.search_summaries(query, summaries=self.filterset.qs).exists()

        return search_suggest.suggest(
            self.query,
            choices=self.choices.choices,
            filters=self.filters,
            finds_something=finds_something,
        )

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        page = context["page_obj"]
        form = self.filterset.form
        context["query"] = self.query
        context["searched"] = self.valid and bool(self.query or self.filters)
        context["results"] = search_results.page_results(list(page.object_list), self.query)
        context["choices"] = self.choices.choices
        context["options"] = {
            name: self.choices.options_html(name, self.filters.get(name, ""))
            for name in search_filters.CHOICE_NAMES
        }
        context["filters"] = self.filters
        context["selected"] = {
            name: self.filters.get(name, "") for name in search_filters.FILTER_NAMES
        }
        context["errors"] = {name: errors[0] for name, errors in form.errors.items()}
        context["capped"] = (
            bool(self.query)
            and connections[Summary.objects.db].vendor == "postgresql"
            and page.paginator.count >= search.MAX_RANKED
        )
        if page.has_previous():
            context["previous_url"] = self.page_url(page.previous_page_number())
        if page.has_next():
            context["next_url"] = self.page_url(page.next_page_number())
        if context["searched"] and self.query and not page.paginator.count:
            context["suggestion"] = self.suggestion()
        return context


def live_transcript_digest():
    """The digest of the live transcript of a summary's video in its language, as a
    subquery: the page learns whether there is one (and which) without reading it."""
    return Subquery(
        Transcript.objects.live()
        .filter(video=OuterRef("video"), language=OuterRef("video__language"))
        .values("digest")[:1]
    )


def summary_page_query(summaries):
    """What a summary page reads of its summary: the video and channel, the stored article,
    the digest of the live transcript; not the search document (the whole text again, for
    search only) nor any transcript's text."""
    return (
        summaries.defer("search_document")
        .select_related("video", "video__channel", "page")
        .annotate(transcript_digest=live_transcript_digest())
    )


_LIVE_SUMMARY = CompiledQuery(
    Summary,
    lambda slug, now: summary_page_query(Summary.objects.published(now)).filter(video__slug=slug),
    texts=("slug",),
    now=True,
)


class SummaryDetailView(SectionMixin, CachedPageMixin, DetailView):
    """A summary page; a summary that is not live answers 404."""

    template_name = "summaries/summary_detail.html"
    context_object_name = "summary"
    section = "channels"  # the breadcrumbs lead through the channel
    # The page is its own Memento TimeGate and names its TimeMap (reader/memento.py).
    answers_memento = True

    def get(self, request, *args, **kwargs):
        if not self.answers_memento:
            return super().get(request, *args, **kwargs)
        response: HttpResponse
        try:
            wanted = memento.accept_datetime(request)
        except memento.BadDatetime:
            response = HttpResponseBadRequest(
                "Accept-Datetime: not an HTTP date; send one such as "
                '"Tue, 11 Sep 2001 20:35:00 GMT".',
                content_type="text/plain; charset=utf-8",
            )
        else:
            if wanted is not None:
                response = self.timegate(wanted)
            else:
                response = super().get(request, *args, **kwargs)
                response["Link"] = ", ".join(memento.original_links(request, self.slug()))
        patch_vary_headers(response, ("Accept-Datetime",))
        return response

    def slug(self) -> str:
        return self.kwargs[self.slug_url_kwarg]

    def timegate(self, wanted) -> HttpResponse:
        """302 to the version of the live summary that readers saw at `wanted`."""
        summary = self.find_summary()
        times = memento.live_times(summary.pk)
        chosen = memento.select(times, wanted)
        if chosen is None:
            raise Http404("This summary has no published versions.")
        slug = self.slug()
        response = HttpResponseRedirect(memento.memento_url(self.request, slug, chosen))
        response["Link"] = ", ".join(memento.timegate_links(self.request, slug, times, chosen))
        return response

    def find_summary(self):
        """The live summary of the video at this address; 404 if there is none."""
        found = _LIVE_SUMMARY.run(slug=self.kwargs[self.slug_url_kwarg])
        if not found:
            raise Http404("No live summary at this address.")
        return found[0]

    def get_object(self, queryset=None):
        summary = self.find_summary()
        # The video's people and topics, shown whatever version of the summary the page is.
        self.people = page_rows.people(summary.video_id)
        self.topics = page_rows.topics(summary.video_id)
        return summary

    def page_citations(self) -> list:
        """The citations of the page's summary, each with its source's latest check."""
        return page_rows.citations(self.object.pk)

    def summary_article(self) -> article.Article:
        return article.page_article(self.object)

    def has_live_transcript(self) -> bool:
        return bool(article.transcript_digest(self.object))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        video = self.object.video
        transcript_url = ""
        if self.has_live_transcript():
            transcript_url = reverse("summaries:summary-transcript", args=[video.slug])
        context["transcript_url"] = transcript_url
        context["video"] = video
        more = cards.more_from_channel(video)
        context["more_from_channel"] = more
        page_article = self.summary_article()
        context["people"] = self.people
        context["topics"] = self.topics
        citations = self.page_citations()
        presentation.label_sources(citations)
        context["cited_sources"] = presentation.cited_sources_html(citations)
        # The stored article's cited links get what can change without an edit: the
        # archived copy shown and the date cited (Robust Links, as in the list above).
        linked = presentation.robust_text_links(page_article.html, citations)
        context["article"] = replace(page_article, html=linked)
        # Cards show no topics; the reasons beside them are stored text. A video shown
        # under "More from this channel" is not shown twice.
        context["related"] = related.related_for_page(
            video,
            limit=RELATED_COUNT,
            topics=False,
            cards=True,
            exclude=[other["pk"] for other in more],
        )
        # The people of every card, in one query.
        cards.add_people([*more, *(item.video for item in context["related"])])
        context["breadcrumbs"] = breadcrumbs(
            section_crumb("channels"),
            (video.channel.name, video.channel.get_absolute_url()),
            (video.title, video.get_absolute_url()),
        )
        self.shown_videos = [card["pk"] for card in (*more, *(i.video for i in context["related"]))]
        changes = corrections.for_page(self.object)
        context["corrections"] = changes.shown
        context["social"] = seo.social_meta(self.object, self.request)
        context["oembed_url"] = oembed.oembed_url(context["social"]["canonical_url"], self.request)
        context["jsonld"] = seo.json_ld_script(
            seo.video_object_jsonld(
                self.object,
                self.request,
                chapters=page_article.timed_chapters,
                appearances=self.people,
                transcript_url=transcript_url,
                changes=changes,
            )
        )
        return context

    def cache_tags(self):
        """The summary, its video and channel, and every video whose card the page shows
        (unpublished, it must leave the page). People and topics are named by their
        renames, which purge every answer (tags.py)."""
        video = self.object.video
        return (
            cache_tags.summary(self.object.pk),
            cache_tags.video(video.pk),
            cache_tags.channel(video.channel_id),
            *(cache_tags.video(pk) for pk in getattr(self, "shown_videos", ())),
        )


@method_decorator([staff_member_required, never_cache], name="dispatch")
class SummaryPreviewView(SummaryDetailView):
    """Exactly the reader page, for any state, never cached, for those who may see
    unpublished work (access.can_see_unpublished: staff who may view summaries).

    Signed out or not staff: the admin's login page. Other staff: 403, before the address
    is looked up, so that every address answers the same and none tells a draft exists.
    """

    page_cache = False
    answers_memento = False

    def dispatch(self, request, *args, **kwargs):
        if not can_see_unpublished(request.user):
            raise PermissionDenied("Previews are for those who may view summaries.")
        return super().dispatch(request, *args, **kwargs)

    def find_summary(self):
        """The summary of the video at this address, in any state."""
        return get_object_or_404(
            summary_page_query(Summary.objects.all()), video__slug=self.kwargs[self.slug_url_kwarg]
        )

    def get_object(self, queryset=None):
        """The summary, or the unpublished changes to it when it has a working copy."""
        summary = super().get_object(queryset)
        copy = Summary.objects.filter(working_copy_of=summary).defer("search_document").first()
        if copy is None:
            self.set_transcript(summary)
            return summary
        # In memory only, for this page: the copy is about its summary's video, as its
        # changes would make it.
        copy.video = summary.video
        if copy.video_changes:
            copy.video = video_changes.pending_video(summary.video, copy.video_changes)
        copy.working_copy_of = summary
        self.set_transcript(copy)
        return copy

    def set_transcript(self, summary) -> None:
        """Show the pins as they will be published: verified against the transcript
        waiting for review if there is one (it goes live with the summary), else the live
        one; a live summary's against the live one (editing.receipts.transcript_for)."""
        video = summary.video
        found = dict(
            Transcript.objects.filter(video_id=video.pk, language=video.language).values_list(
                "state", "digest"
            )
        )
        live = found.get(Transcript.State.LIVE, "")
        self.live_transcript = bool(live)
        if summary.status == Summary.Status.PUBLISHED and not summary.is_working_copy:
            summary.transcript_digest = live
        else:
            summary.transcript_digest = found.get(Transcript.State.DRAFT) or live

    def has_live_transcript(self) -> bool:
        return self.live_transcript

    def summary_article(self) -> article.Article:
        # Any state, exactly as it is now: never the stored article, never stored.
        return article.fresh_article(self.object)

    def page_citations(self) -> list:
        # The version shown (a working copy's own citations), loaded with its article.
        return list(self.object.citations.all())

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["preview"] = True
        return context


def live_summary_of(slug: str) -> Summary:
    """The live summary of the video at this address, with its video and channel; 404."""
    summary = (
        Summary.objects.published()
        .filter(video__slug=slug)
        .defer("search_document")
        .select_related("video", "video__channel")
        .first()
    )
    if summary is None:
        raise Http404("No live summary at this address.")
    return summary


def page_chapters(summary) -> list:
    """The summary's chapters as the transcript page and the chapters file need them."""
    return list(summary.chapters.only("summary", "position", "title", "start_time", "pin"))


def statement_pins(summary) -> list[tuple[str, int, object]]:
    """(kind, position, pin) of the summary's key points and takeaways, in one query."""
    points = KeyPoint.objects.filter(summary=summary).order_by().annotate(kind=Value("key_point"))
    takeaways = Takeaway.objects.filter(summary=summary).order_by().annotate(kind=Value("takeaway"))
    fields = ("kind", "position", "pin")
    return list(points.values_list(*fields).union(takeaways.values_list(*fields), all=True))


class TranscriptView(SectionMixin, CachedPageMixin, TemplateView):
    """The live transcript of a live summary's video, by chapter, in paragraphs (by speaker
    and pause: `text.paragraphs`), each with a time link and the key points and takeaways
    its words support; `?q=` shows only the paragraphs holding every word, marked
    (transcript.js filters as the reader types). 404 when the summary is not live or the
    video has no live transcript. A filtered page is not cached: every query would be a
    page of its own."""

    template_name = "summaries/transcript.html"
    section = "channels"

    def get(self, request, *args, **kwargs):
        self.query = search.clean_query(request.GET.get("q", ""))
        return super().get(request, *args, **kwargs)

    def cache_query(self) -> str | None:
        return None if self.query else ""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        summary = live_summary_of(self.kwargs["slug"])
        video = summary.summarised_video  # a live summary's own
        transcript = (
            Transcript.objects.live()
            .filter(video=video, language=video.language)
            .only("video_id", "language", "state", "segments", "digest")
            .first()
        )
        if transcript is None:
            raise Http404("This video has no published transcript.")
        chapters = page_chapters(summary)
        starts = receipts.chapter_starts(chapters, transcript.digest)
        marked = receipts.statements(
            statement_pins(summary), transcript.digest, video.get_absolute_url()
        )
        sections = receipts.sections(transcript.segment_list(), starts, video, marked)
        words = receipts.query_words(self.query)
        matching = receipts.filter_passages(sections, words)
        context.update(
            summary=summary,
            video=video,
            query=self.query,
            sections=sections,
            transcript_html=receipts.transcript_html(sections, words),
            paragraph_count=sum(len(section.passages) for section in sections),
            matching=matching,
            has_chapters=bool(starts),
            canonical_url=site_url(self.request.path),
            breadcrumbs=breadcrumbs(
                section_crumb("channels"),
                (video.channel.name, video.channel.get_absolute_url()),
                (video.title, video.get_absolute_url()),
                ("Transcript", self.request.path),
            ),
        )
        return context


def chapters_vtt(request, slug: str) -> HttpResponse:
    """The video's chapters as a WebVTT chapters track (text/vtt): each from its start
    (verified against the live transcript where pinned) to the next one's, the last to the
    end of the video. 404 when the summary is not live or no chapter has a start."""
    summary = live_summary_of(slug)
    video = summary.summarised_video  # a live summary's own
    digest = (
        Transcript.objects.live()
        .filter(video=video, language=video.language)
        .values_list("digest", flat=True)
        .first()
    )
    starts = receipts.chapter_starts(page_chapters(summary), digest or "")
    text = receipts.chapters_vtt(starts, video.duration_seconds)
    if text is None:
        raise Http404("This video has no timed chapters.")
    return HttpResponse(text, content_type="text/vtt; charset=utf-8")
