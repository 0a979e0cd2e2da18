"""Revisions of pin actions: what an editor did to the pins of a summary, kept small.

A summary's revision (django-reversion) holds the summary and all of its parts. Pinning,
approving or overriding changes only the pins of a few parts, so its revision holds the
summary and just those parts; a `PinRevision` row marks it and names `base`, the last
revision before it that holds the summary with all of its parts. The parts the pin
revision lacks are as `base` and the pin revisions between them recorded them
(summaries.editing.revisions.Snapshot puts them together).
"""

from typing import Any

from django.db import models
from reversion.models import Revision


class PinRevision(models.Model):
    revision = models.OneToOneField(Revision, on_delete=models.CASCADE, related_name="pin_revision")
    # A revision that pin revisions build on is kept as long as they are: without it they
    # could not say what the summary's other parts were.
    base = models.ForeignKey(Revision, on_delete=models.PROTECT, related_name="pin_revisions")
    # The summary row whose parts it records (a revision may hold several summaries).
    summary_id = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["base", "summary_id"])]

    def __str__(self) -> str:
        return f"Pins of summary {self.summary_id} in revision {self.revision_id}"


class RevisionActionManager(models.Manager["RevisionAction"]):
    def create(self, **fields: Any) -> "RevisionAction":
        """django-reversion saves a revision's meta (`reversion.add_meta`) with this; a
        revision recorded within another (a save within a publication) joins it, so one
        revision can be given several actions: the first one recorded stands."""
        action = self.model(**fields)
        self.bulk_create([action], ignore_conflicts=True)  # one INSERT; a second is a no-op
        return action


class RevisionAction(models.Model):
    """What a revision did, when it did more than save: stored beside the revision, as
    Wagtail's log entries store `action`. A revision without one is an ordinary save."""

    class Kind(models.TextChoices):
        PUBLISHED = "published", "Published"
        SCHEDULED = "scheduled", "Scheduled"
        UNPUBLISHED = "unpublished", "Unpublished"
        SUBMITTED = "submitted", "Submitted for review"
        SENT_BACK = "sent_back", "Sent back"
        RESTORED = "restored", "Restored"
        DISCARDED = "discarded", "Discarded changes"
        PINNED = "pinned", "Pinned"
        UNPINNED = "unpinned", "Unpinned"
        APPROVED = "approved", "Approved"
        OVERRODE = "overrode", "Overrode"
        KEPT_PIN = "kept_pin", "Kept the pin"

    revision = models.OneToOneField(
        Revision, on_delete=models.CASCADE, primary_key=True, related_name="action"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)

    objects = RevisionActionManager()

    class Meta:
        base_manager_name = "objects"

    def __str__(self) -> str:
        return f"{self.get_kind_display()} (revision {self.revision_id})"
