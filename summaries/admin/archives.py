"""Archived copies in the admin: which citations readers see through a web archive's copy,
and the captures asked of the archive. Both are written by workers only."""

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from summaries.models import ArchiveCapture, ArchivedCopy


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class FoundListFilter(admin.SimpleListFilter):
    """Look-ups that found a verified copy, or none."""

    title = "copy found"
    parameter_name = "found"

    def lookups(self, request, model_admin):
        return [("yes", "A verified copy"), ("no", "No copy holds the phrase")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.exclude(url="").exclude(matched_by="").filter(verified_at__isnull=False)
        if self.value() == "no":
            return queryset.filter(url="")
        return queryset


@admin.register(ArchivedCopy)
class ArchivedCopyAdmin(ReadOnlyAdmin):
    """Citations and their archived copies; "shown" ones are what readers rely on now."""

    list_display = ["citation_link", "summary_link", "source_url", "copy_link", "captured_at"]
    list_display += ["shown", "verified_at", "looked_up_at"]
    list_filter = ["shown", FoundListFilter, "looked_up_at"]
    list_select_related = ["citation__source", "citation__summary__video"]
    search_fields = ["citation__url", "citation__link_text", "url"]
    readonly_fields = [
        "citation",
        "url",
        "captured_at",
        "key_phrase",
        "excerpt",
        "verified_at",
        "looked_up_at",
        "shown",
    ]

    @admin.display(description="Citation", ordering="citation__link_text")
    def citation_link(self, copy):
        return copy.citation.link_text

    @admin.display(description="Summary")
    def summary_link(self, copy):
        summary = copy.citation.summary
        url = reverse("admin:summaries_summary_change", args=[summary.pk])
        return format_html('<a href="{}">{}</a>', url, summary.video.title)

    @admin.display(description="Source")
    def source_url(self, copy):
        source = copy.citation.source
        url = reverse("admin:summaries_source_change", args=[source.pk])
        return format_html('<a href="{}">{}</a> ({})', url, source.url, source.get_state_display())

    @admin.display(description="Archived copy", ordering="url")
    def copy_link(self, copy):
        if not copy.url:
            return "none found"
        return format_html('<a href="{}" rel="noopener">{}</a>', copy.url, copy.url)


@admin.register(ArchiveCapture)
class ArchiveCaptureAdmin(ReadOnlyAdmin):
    """Captures asked of the web archive, and what came of each."""

    list_display = ["source", "state", "snapshot_url", "captured_at", "created_at"]
    list_display += ["attempts", "polls", "error"]
    list_filter = ["state", "created_at"]
    list_select_related = ["source"]
    search_fields = ["source__url", "snapshot_url"]
    readonly_fields = [f.name for f in ArchiveCapture._meta.fields]


class ArchivedCopyShownFilter(admin.SimpleListFilter):
    """Sources some citation of which readers see through an archived copy."""

    title = "archived copy"
    parameter_name = "archived"

    def lookups(self, request, model_admin):
        return [("shown", "Readers see an archived copy")]

    def queryset(self, request, queryset):
        if self.value() == "shown":
            shown = ArchivedCopy.objects.filter(shown=True).values("citation__source_id")
            return queryset.filter(pk__in=shown)
        return queryset
