"""What every admin page of reader-facing content shares."""

from reversion.admin import VersionAdmin

from summaries.pagecache.generation import content_changed


class ContentAdmin(VersionAdmin):
    """An admin page of content readers see: saves and deletes make cached pages stale.

    After save_related, so that inlines and many-to-many choices are saved too.
    """

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        content_changed()

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        content_changed()

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        content_changed()
