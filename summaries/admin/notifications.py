"""The inbox and each person's notification settings: every staff user sees their own only.

Neither page uses the model permissions: what a person may see is their own notifications
and their own settings, whatever groups they are in, and nobody else's, whatever they are.
"""

from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from django.template.defaultfilters import linebreaks_filter
from django.urls import reverse
from django.utils.html import format_html

from summaries.models import Notification, NotificationPreferences
from summaries.models.access import is_staff
from summaries.notifications import inbox


class ReadFilter(admin.SimpleListFilter):
    title = "read"
    parameter_name = "read"

    def lookups(self, request, model_admin):
        return [("no", "Unread"), ("yes", "Read")]

    def queryset(self, request, queryset):
        if self.value() == "no":
            return queryset.filter(read_at__isnull=True)
        if self.value() == "yes":
            return queryset.filter(read_at__isnull=False)
        return queryset


class OwnOnlyAdmin(admin.ModelAdmin):
    """An admin page of rows that belong to one user each, shown to that user alone."""

    owner_field = "user"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(**{self.owner_field: request.user})

    def _own(self, request, obj) -> bool:
        return is_staff(request.user) and (
            obj is None or getattr(obj, f"{self.owner_field}_id") == request.user.pk
        )

    def has_module_permission(self, request):
        return is_staff(request.user)

    def has_view_permission(self, request, obj=None):
        return self._own(request, obj)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Notification)
class NotificationAdmin(OwnOnlyAdmin):
    """The inbox: newest first, unread in bold; opening one marks it read."""

    owner_field = "recipient"
    list_display = ["headline", "kind", "created_at", "is_read"]
    list_display_links = ["headline"]
    list_filter = [ReadFilter, "event__kind"]
    list_select_related = ["event"]
    list_per_page = 50
    search_fields = ["event__subject"]
    fields = ["kind", "subject", "message", "open_link", "created_at", "read_at"]
    readonly_fields = fields
    actions = ["mark_read", "mark_unread"]

    def has_change_permission(self, request, obj=None):
        return False  # read-only; read state changes by opening or by the actions

    @admin.display(description="notification", ordering="-created_at")
    def headline(self, obj):
        if obj.read_at is None:
            return format_html("<strong>{}</strong>", obj.event.subject)
        return obj.event.subject

    @admin.display(description="kind", ordering="event__kind")
    def kind(self, obj):
        return obj.event.get_kind_display()

    @admin.display(description="subject")
    def subject(self, obj):
        return obj.event.subject

    @admin.display(description="message")
    def message(self, obj):
        # Escaped first (autoescape), then paragraphs: editors' text is shown as typed.
        return linebreaks_filter(obj.event.body, autoescape=True)

    @admin.display(description="open")
    def open_link(self, obj):
        if not obj.event.link:
            return "-"
        return format_html('<a href="{}">Go to the summary</a>', obj.event.link)

    @admin.display(description="read", boolean=True)
    def is_read(self, obj):
        return obj.read_at is not None

    def change_view(self, request, object_id, form_url="", extra_context=None):
        notification = self.get_object(request, object_id)  # None unless the user's own
        if notification is not None:
            inbox.mark_read(user=request.user, notification_ids=[notification.pk])
        return super().change_view(request, object_id, form_url, extra_context)

    def changelist_view(self, request, extra_context=None):
        extra_context = {
            "title": f"Inbox ({inbox.unread_count(user=request.user)} unread)",
            "preferences_url": reverse("admin:summaries_notificationpreferences_changelist"),
            **(extra_context or {}),
        }
        return super().changelist_view(request, extra_context)

    @admin.action(description="Mark as read")
    def mark_read(self, request, queryset):
        count = inbox.mark_read(user=request.user, notification_ids=_ids(queryset))
        self.message_user(request, f"{count} marked as read.", messages.SUCCESS)

    @admin.action(description="Mark as unread")
    def mark_unread(self, request, queryset):
        count = inbox.mark_unread(user=request.user, notification_ids=_ids(queryset))
        self.message_user(request, f"{count} marked as unread.", messages.SUCCESS)


def _ids(queryset) -> list[int]:
    return list(queryset.values_list("pk", flat=True))


@admin.register(NotificationPreferences)
class NotificationPreferencesAdmin(OwnOnlyAdmin):
    """A person's own notification settings: the list page opens them directly."""

    fields = ["submitted", "sent_back", "published", "went_live", "source_problem", "reply"]

    def has_change_permission(self, request, obj=None):
        return self._own(request, obj)

    def changelist_view(self, request, extra_context=None):
        if not is_staff(request.user):
            return super().changelist_view(request, extra_context)
        preferences, _ = NotificationPreferences.objects.get_or_create(user=request.user)
        return HttpResponseRedirect(
            reverse("admin:summaries_notificationpreferences_change", args=[preferences.pk])
        )

    def response_change(self, request, obj):
        self.message_user(request, "Your notification settings were saved.", messages.SUCCESS)
        return HttpResponseRedirect(request.path)
