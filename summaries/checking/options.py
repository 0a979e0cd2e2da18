"""The checker's settings, read where they are used."""

from typing import Any

from django.conf import settings

from summaries import linkcheck


def fetch_options() -> dict[str, Any]:
    """linkcheck.fetch options from the FETCH_* settings."""
    deadline = settings.FETCH_DEADLINE
    return {
        "allowed_networks": fetch_networks(),
        "user_agent": settings.FETCH_USER_AGENT,
        "deadline": deadline,
        "timeout": deadline,
        "max_body": settings.FETCH_MAX_BODY,
    }


def fetch_networks() -> linkcheck.AllowList:
    """Where outbound requests may go: FETCH_ALLOWED_NETWORKS, and public addresses unless
    FETCH_PUBLIC is off. Every outbound request of the service goes by it."""
    return linkcheck.allow_list(settings.FETCH_ALLOWED_NETWORKS, public=settings.FETCH_PUBLIC)
