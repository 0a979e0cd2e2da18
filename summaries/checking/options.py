"""The checker's settings, read where they are used."""

from django.conf import settings

from summaries import linkcheck


def setting(name: str, default):
    return getattr(settings, name, default)


def fetch_options() -> dict:
    """linkcheck.fetch options from the FETCH_* settings."""
    deadline = float(setting("FETCH_DEADLINE", 10.0))
    return {
        "allowed_networks": list(setting("FETCH_ALLOWED_NETWORKS", [])),
        "user_agent": setting("FETCH_USER_AGENT", linkcheck.DEFAULT_USER_AGENT),
        "deadline": deadline,
        "timeout": deadline,
        "max_body": int(setting("FETCH_MAX_BODY", 2_000_000)),
    }
