"""Reader pages. Only live summaries are public; staff preview anything at /preview/."""

from django.contrib.admin.views.decorators import staff_member_required
from django.db.models import Prefetch
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.generic import DetailView, ListView

from .models import Appearance, Caveat, Summary, Video


class HomeView(ListView):
    template_name = "summaries/home.html"
    context_object_name = "videos"
    paginate_by = 20

    def get_queryset(self):
        return Video.objects.published().with_listing_data().select_related("summary")


class SummaryDetailView(DetailView):
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
                "key_points",
                "takeaways",
                "chapters",
                Prefetch("caveats", queryset=Caveat.objects.order_by("position")),
                "citations__source",
            )
        )
        return super().get_object(queryset)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        summary = self.object
        video = summary.video
        context["video"] = video
        context["more_from_channel"] = (
            Video.objects.published()
            .filter(channel=video.channel)
            .exclude(pk=video.pk)
            .with_listing_data()[:6]
        )
        return context


@method_decorator([staff_member_required, never_cache], name="dispatch")
class SummaryPreviewView(SummaryDetailView):
    """Exactly the reader page, for any state, for staff only and never cached."""

    def summaries(self):
        return Summary.objects.all()

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["preview"] = True
        return context
