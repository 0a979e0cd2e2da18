"""The sources report: every cited URL with its latest check and history."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from summaries import checking
from summaries.admin.archives import ArchivedCopyShownFilter
from summaries.models import (
    Channel,
    Citation,
    Source,
    SourceCheck,
)

from .evidence import evidence_link, evidence_view


def state_badge(source):
    return format_html(
        '<span class="source-state source-state-{}">{}</span>',
        source.state,
        source.get_state_display(),
    )


def verdict_badge(citation):
    return format_html(
        '<span class="claim-verdict claim-verdict-{}">{}</span>',
        citation.verdict,
        citation.get_verdict_display(),
    )


def page_summary(source):
    """What the cited page says it is: its title and description, as last checked (PDFs: the
    title from their metadata), so that an editor sees at once a link that points at the
    wrong page."""
    if not source.title and not source.description:
        return format_html('<span class="source-page-unknown">{}</span>', "no title")
    return format_html(
        '<span class="source-page"><cite>{}</cite>{}</span>',
        source.title or "(untitled)",
        format_html("<br><small>{}</small>", Truncator(source.description).chars(160))
        if source.description
        else "",
    )


class ChannelListFilter(admin.SimpleListFilter):
    """Sources cited by summaries of one channel."""

    title = "channel"
    parameter_name = "channel"

    def lookups(self, request, model_admin):
        return [(str(c.pk), c.name) for c in Channel.objects.order_by("name")]

    def queryset(self, request, queryset):
        if self.value() and self.value().isdigit():
            cited = Citation.objects.filter(summary__video__channel_id=self.value())
            return queryset.filter(pk__in=cited.values("source_id"))
        return queryset


class SourceCheckInline(admin.TabularInline):
    """The latest checks of a source (history is bounded per source)."""

    model = SourceCheck
    extra = 0
    can_delete = False
    fields = [
        "checked_at",
        "state",
        "status_code",
        "final_url",
        "title",
        "error_class",
        "response_ms",
    ]
    readonly_fields = fields
    verbose_name_plural = "Check history"

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class CitedByInline(admin.TabularInline):
    """The summaries whose citations point at the source: where, what claim, what verdict."""

    model = Citation
    extra = 0
    can_delete = False
    fields = [
        "summary_link",
        "where",
        "link_text",
        "claim",
        "key_phrase",
        "verdict_shown",
        "evidence",
    ]
    readonly_fields = fields
    verbose_name = "citation"
    verbose_name_plural = "Cited by"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related(
                "summary__video",
                "summary__working_copy_of__video",
                "chapter",
                "key_point",
                "takeaway",
            )
        )

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="Summary")
    def summary_link(self, citation):
        summary = citation.summary
        # A published summary's pending changes are edited on the summary's own page.
        page = summary.working_copy_of if summary.is_working_copy else summary
        url = reverse("admin:summaries_summary_change", args=[page.pk])
        title = page.video.title if page.video_id else str(page)
        if summary.is_working_copy:
            return format_html('<a href="{}">{}</a> (unpublished changes)', url, title)
        return format_html('<a href="{}">{}</a>', url, title)

    @admin.display(description="In")
    def where(self, citation):
        if citation.chapter_id:
            return f"Chapter {citation.chapter.position} “{citation.chapter.title}”"
        if citation.key_point_id:
            return f"Key point {citation.key_point.position} “{citation.key_point.title}”"
        if citation.takeaway_id:
            return f"Takeaway {citation.takeaway.position}"
        return "—"

    @admin.display(description="Claim check")
    def verdict_shown(self, citation):
        return verdict_badge(citation)

    @admin.display(description="Evidence")
    def evidence(self, citation):
        return evidence_link(citation)


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    """The sources report: sources are created from citations and checked by the workers."""

    class Media:
        css = {"all": ["summaries/css/admin.css"]}

    list_display = [
        "url",
        "host",
        "badge",
        "status_code",
        "page",
        "citation_count",
        "last_checked_at",
        "next_check_at",
        "ignored",
    ]
    list_filter = [
        "state",
        "ignored",
        ArchivedCopyShownFilter,
        ChannelListFilter,
        "last_checked_at",
        "host",
    ]
    search_fields = ["url", "title", "description", "host", "final_url"]
    readonly_fields = [f.name for f in Source._meta.fields]
    inlines = [CitedByInline, SourceCheckInline]
    actions = ["check_now", "ignore", "stop_ignoring"]
    date_hierarchy = "last_checked_at"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(citation_total=models.Count("citations"))

    @admin.display(description="State", ordering="state")
    def badge(self, source):
        return state_badge(source)

    @admin.display(description="Page", ordering="title")
    def page(self, source):
        return page_summary(source)

    @admin.display(description="Citations", ordering="citation_total")
    def citation_count(self, source):
        return source.citation_total

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_urls(self):
        view = self.admin_site.admin_view(self.evidence_view)
        return [
            path(
                "<int:source_id>/evidence/<int:citation_id>/",
                view,
                name="summaries_source_evidence",
            ),
            *super().get_urls(),
        ]

    def evidence_view(self, request, source_id, citation_id):
        if not self.has_view_permission(request):
            raise PermissionDenied
        return evidence_view(self, request, source_id, citation_id)

    @admin.action(description="Check selected sources now")
    def check_now(self, request, queryset):
        queued = checking.request_checks(sources=queryset)
        skipped = queryset.count() - len(queued)
        messages.success(request, f"Queued {len(queued)} source(s) for checking.")
        if skipped:
            messages.warning(
                request, f"{skipped} source(s) skipped: ignored or already being checked."
            )

    @admin.action(description="Ignore selected sources (never check them)")
    def ignore(self, request, queryset):
        for source in queryset:
            checking.ignore_source(source=source)
        messages.success(request, f"Ignoring {queryset.count()} source(s).")

    @admin.action(description="Check selected sources again (stop ignoring)")
    def stop_ignoring(self, request, queryset):
        for source in queryset:
            checking.ignore_source(source=source, ignored=False)
        messages.success(request, f"Checking {queryset.count()} source(s) again.")
