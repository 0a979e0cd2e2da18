"""The editor admin: a summary is written on one page, with history, preview and warnings.

Importing this package registers every model admin (Django's admin autodiscovery).
"""

from . import archives, catalogue, corrections, following, notifications, sources, summary, webhooks

__all__ = [
    "archives",
    "catalogue",
    "corrections",
    "following",
    "notifications",
    "sources",
    "summary",
    "webhooks",
]
