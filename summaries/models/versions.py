"""The versions of a summary readers saw: one row per state that went live, kept for good.

Written by summaries.editing.versions when a summary is published or its changes go live
(scheduled ones at the time they are due), with the article as readers were shown it
(filled in by summaries.reader.memento). Drafts, working copies and reviewers' notes are
never recorded; a version recorded for a future time that never came (rescheduled,
unpublished) is deleted. The reader serves them as Mementos (RFC 7089).
"""

from datetime import datetime
from typing import Self

from django.db import models
from django.utils import timezone

from .base import live_q


class PublishedVersionQuerySet(models.QuerySet):
    def live(self, now: datetime | None = None) -> Self:
        """Versions readers saw: their summary is live now and their time has come."""
        now = now or timezone.now()
        return self.filter(live_q("summary__", now), live_from__lte=now)


class PublishedVersion(models.Model):
    """A summary as it went live at `live_from` (whole seconds, as HTTP dates tell time)."""

    summary = models.ForeignKey(
        "summaries.Summary", on_delete=models.CASCADE, related_name="published_versions"
    )
    live_from = models.DateTimeField()
    # What it was made from: a version whose summary has not changed since is not
    # recorded twice.
    page_version = models.PositiveIntegerField()
    title = models.CharField(max_length=300)
    html = models.TextField(blank=True)
    reading_time = models.CharField(max_length=40, blank=True)

    objects = PublishedVersionQuerySet.as_manager()

    class Meta:
        ordering = ["summary", "live_from"]
        constraints = [
            models.UniqueConstraint(
                fields=["summary", "live_from"], name="published_version_unique_time"
            )
        ]

    def __str__(self) -> str:
        return f"Summary {self.summary_id} as of {self.live_from:%Y-%m-%d %H:%M:%S}"
