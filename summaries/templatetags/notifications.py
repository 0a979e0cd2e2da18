"""The inbox link in the admin header: "Inbox (3)", the signed-in user's unread count."""

from django import template
from django.urls import reverse
from django.utils.html import format_html

from summaries.models.access import is_staff
from summaries.notifications import inbox

register = template.Library()


@register.simple_tag(takes_context=True)
def inbox_link(context):
    request = context.get("request")
    user = getattr(request, "user", None)
    if not is_staff(user):
        return ""
    count = inbox.unread_count(user=user)
    return format_html(
        '<a href="{}" class="inbox-link{}">Inbox ({})</a> /',
        reverse("admin:summaries_notification_changelist"),
        " unread" if count else "",
        count,
    )
