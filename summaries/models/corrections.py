"""What readers are told about published changes: updates, corrections and typo fixes.

One row per set of changes that went live on a published summary, written by
summaries.editing.corrections when the changes are published. Updates and corrections are
shown to readers (dated, with their note and what changed); typo fixes are kept for
editors only. A row is never deleted: withdrawing a correction is recorded on it and shown.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from .base import live_q

# A public note is a few sentences; the withdrawal's reason too.
NOTE_CHARS = 2000


class CorrectionQuerySet(models.QuerySet):
    def public(self) -> "CorrectionQuerySet":
        """Updates and corrections: what readers are shown (typo fixes are not)."""
        return self.exclude(kind=Correction.Kind.TYPO)

    def live(self, now=None) -> "CorrectionQuerySet":
        """Those of summaries readers can see now (published, publish time reached)."""
        return self.filter(live_q("summary__", now))


class Correction(models.Model):
    """A published change of a live summary, with its kind and its public note.

    `changes` is what changed, word by word, from the live text before to the live text
    after (summaries.editing.corrections.changes_data), stored when the changes went live
    so that later edits do not rewrite it. Plain text fields (`note`, `withdrawal_note`)
    are typed by people and shown escaped.
    """

    class Kind(models.TextChoices):
        TYPO = "typo", "Typo fix"
        UPDATE = "update", "Update"
        CORRECTION = "correction", "Correction"

    # PROTECT: a summary with published changes is unpublished, never deleted with them
    # (its corrections would leave /corrections/ and the feeds without a trace).
    summary = models.ForeignKey(
        "summaries.Summary", on_delete=models.PROTECT, related_name="corrections"
    )
    kind = models.CharField(max_length=20, choices=Kind.choices)
    note = models.TextField(
        max_length=NOTE_CHARS,
        blank=True,
        help_text="Shown to readers: for a correction, what was wrong and what is right.",
    )
    published_at = models.DateTimeField(db_index=True)
    published_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    changes = models.JSONField(default=list, blank=True)
    withdrawn_at = models.DateTimeField(null=True, blank=True)
    withdrawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    withdrawal_note = models.TextField(max_length=NOTE_CHARS, blank=True)

    objects = CorrectionQuerySet.as_manager()

    class Meta:
        ordering = ["-published_at", "-id"]
        indexes = [models.Index(fields=["summary", "published_at"], name="correction_summary")]
        constraints = [
            # A correction always says what was wrong and what is right.
            models.CheckConstraint(
                condition=~Q(kind="correction") | ~Q(note=""), name="correction_has_note"
            ),
            # A withdrawal always says why.
            models.CheckConstraint(
                condition=Q(withdrawn_at__isnull=True) | ~Q(withdrawal_note=""),
                name="correction_withdrawal_has_note",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of summary {self.summary_id}"

    @property
    def is_public(self) -> bool:
        return self.kind != self.Kind.TYPO

    @property
    def is_withdrawn(self) -> bool:
        return self.withdrawn_at is not None
