"""The checker's settings, read where they are used."""

from typing import Any

from django.conf import settings


def fetch_options() -> dict[str, Any]:
    """linkcheck.fetch options from the FETCH_* settings."""
    deadline = settings.FETCH_DEADLINE
    return {
        "allowed_networks": list(settings.FETCH_ALLOWED_NETWORKS),
        "user_agent": settings.FETCH_USER_AGENT,
        "deadline": deadline,
        "timeout": deadline,
        "max_body": settings.FETCH_MAX_BODY,
    }
