"""What every admin page of reader-facing content shares."""

from reversion.admin import VersionAdmin

from summaries.editing import catalogue


class ContentAdmin(VersionAdmin):
    """An admin page of catalogue entries readers see: saves and deletes go through
    `editing.catalogue`, which checks the user's permission and makes cached pages stale
    (with the form's transaction, which saves the inlines and many-to-many choices too).
    """

    def save_model(self, request, obj, form, change):
        catalogue.save_entry(instance=obj, user=request.user, clean=False)

    def delete_model(self, request, obj):
        catalogue.delete_entries(entries=[obj], user=request.user)

    def delete_queryset(self, request, queryset):
        catalogue.delete_entries(entries=queryset, user=request.user)


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
