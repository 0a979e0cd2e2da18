from django import template

from summaries.forms import format_duration

register = template.Library()


@register.filter
def duration(seconds):
    """34:21 for 2061 seconds; 1:02:03 past an hour."""
    if seconds in (None, ""):
        return ""
    return format_duration(seconds)
