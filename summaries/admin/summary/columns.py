"""The summary changelist: its columns and the language filter."""

from django.contrib import admin
from django.utils import timezone
from django.utils.html import format_html
from django.utils.text import Truncator

from summaries.models import LANGUAGE_CHOICES, Summary


class LanguageFilter(admin.SimpleListFilter):
    """The languages summaries are written about, not every language Django knows."""

    title = "language"
    parameter_name = "language"

    def lookups(self, request, model_admin):
        used = set(Summary.objects.originals().values_list("video__language", flat=True).distinct())
        return [(code, name) for code, name in LANGUAGE_CHOICES if code in used]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(video__language=self.value())
        return queryset


class SummaryColumnsMixin:
    """SummaryAdmin's list columns (SummaryAdmin.get_queryset counts the failing sources)."""

    @admin.display(description="Sources", ordering="failing")
    def failing_sources(self, summary):
        failing = getattr(summary, "failing", 0)
        if not failing:
            return "—"
        return format_html(
            '<span class="source-state source-state-broken">{} failing</span>', failing
        )

    # Columns.

    @admin.display(description="Video", ordering="video__title")
    def title(self, summary):
        title = summary.video.title
        return format_html('<span title="{}">{}</span>', title, Truncator(title).chars(60))

    @admin.display(ordering="video__channel__name")
    def channel(self, summary):
        return summary.video.channel

    @admin.display(description="Last edit", ordering="updated_at")
    def last_edit(self, summary):
        who = _last_editor(summary)
        when = f"{timezone.localtime(summary.updated_at):%Y-%m-%d %H:%M}"
        return f"{when}, {who}" if who else when

    @admin.display(description="State", ordering="status")
    def list_state(self, summary):
        """The state in a word or two: the publish time has a column of its own."""
        if summary.is_scheduled():
            state = "Scheduled"
        elif summary.is_live():
            state = "Live"
        else:
            state = _status_label(summary)
        copy = getattr(summary, "working_copy", None)
        if copy is not None:
            state = f"{state} · changes ({_status_label(copy).lower()})"
        return format_html('<span class="nowrap">{}</span>', state)


def _last_editor(summary) -> str:
    """Who saved the summary last: its last editor, else whoever created it ("" if unknown)."""
    user = summary.updated_by or summary.created_by
    return user.get_username() if user else ""


def _status_label(summary) -> str:
    """The status as editors read it: a draft a reviewer sent back says so."""
    if summary.status == Summary.Status.DRAFT and summary.review_note:
        return "Draft (sent back)"
    return summary.get_status_display()
