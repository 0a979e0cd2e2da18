"""Revisions of pin actions: what an editor did to the pins of a summary, kept small.

A summary's revision (django-reversion) holds the summary and all of its parts. Pinning,
approving or overriding changes only the pins of a few parts, so its revision holds the
summary and just those parts; a `PinRevision` row marks it and names `base`, the last
revision before it that holds the summary with all of its parts. The parts the pin
revision lacks are as `base` and the pin revisions between them recorded them
(summaries.editing.revisions.Snapshot puts them together).
"""

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
