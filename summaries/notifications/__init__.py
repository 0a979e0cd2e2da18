"""Notifications: people told when work waits for them (admin inbox and e-mail).

The workflow and the source checker call one function per event, inside the transaction
of the change; each writes the event and one notification per person told (`events`), and
the e-mails go out from Celery after the commit, at most once each (`email`, `tasks`).
"""

from .events import (
    review_reply,
    source_problem,
    summary_published,
    summary_sent_back,
    summary_submitted,
    summary_went_live,
)

__all__ = [
    "review_reply",
    "source_problem",
    "summary_published",
    "summary_sent_back",
    "summary_submitted",
    "summary_went_live",
]
