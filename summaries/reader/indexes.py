"""Index pages of channels, people and topics: each with its number of live videos, the one
with the newest live video first."""

import datetime
from dataclasses import dataclass

from django.db.models import Count, Max, Model
from django.views.generic import ListView

from summaries.models import Channel, Person, Topic, Video

from . import seo
from .navigation import SectionMixin, breadcrumbs, section_crumb
from .views_lists import CachedListMixin

INDEX_PAGE_SIZE = 50


@dataclass(frozen=True)
class IndexEntry:
    item: Model
    videos: int
    latest: datetime.date


def live_video_counts(group_by: str):
    """Rows of {group_by: id, "videos": n, "latest": date} over live videos only, one per
    channel, person or topic (`group_by` is the Video field naming it), the one with the
    newest video first; ties go to the one with more videos, then the lower id.

    Drafts, summaries in review and scheduled ones never count (Video.objects.published()),
    so a channel, person or topic with no live video is not listed at all.
    """
    return (
        Video.objects.published()
        .filter(**{f"{group_by}__isnull": False})
        .order_by()
        .values(group_by)
        .annotate(videos=Count("pk"), latest=Max("published_on"))
        .order_by("-latest", "-videos", group_by)
    )


class IndexView(SectionMixin, CachedListMixin, ListView):
    """One index page: a count query (kept in the fragment cache), the page's rows, and the
    objects they name. One template for the three kinds: they differ only in their words."""

    template_name = "summaries/index.html"
    context_object_name = "rows"
    paginate_by = INDEX_PAGE_SIZE
    section_page = True
    model_class: type[Model] = Channel
    group_by = ""
    title = ""

    def get_queryset(self):
        return live_video_counts(self.group_by)

    def count_key(self):
        return f"count:index:{self.section}"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        rows = context["rows"]
        items = self.model_class.objects.in_bulk([row[self.group_by] for row in rows])
        context["entries"] = [
            IndexEntry(items[row[self.group_by]], row["videos"], row["latest"]) for row in rows
        ]
        page = context["page_obj"]
        count = page.paginator.count
        context["title"] = self.title
        context["page_title"] = (
            self.title if page.number == 1 else f"{self.title}, page {page.number}"
        )
        context["description"] = seo.index_description(self.section, count)
        context["breadcrumbs"] = breadcrumbs(section_crumb(self.section))
        return context


class ChannelIndexView(IndexView):
    section = "channels"
    model_class = Channel
    group_by = "channel"
    title = "Channels"


class PersonIndexView(IndexView):
    section = "people"
    model_class = Person
    group_by = "appearances__person"
    title = "People"


class TopicIndexView(IndexView):
    section = "topics"
    model_class = Topic
    group_by = "topics"
    title = "Topics"
