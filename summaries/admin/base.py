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


class ReadOnlyAdmin:
    """A mixin for a ModelAdmin of records written elsewhere: nobody adds, changes or
    deletes one in the admin, whatever their permissions (superusers too).

    Put it before admin.ModelAdmin in the bases. Without the delete permission the delete
    view answers 403 and the "Delete selected" action is not offered.
    """

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
