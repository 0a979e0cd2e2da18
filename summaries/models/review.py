"""The review conversation of a summary: notes and replies between editors and reviewers."""

from django.conf import settings
from django.db import models
from django.utils import timezone

# A message in the review of a summary is a few sentences, not a second summary.
REVIEW_MESSAGE_CHARS = 2000


class ReviewMessage(models.Model):
    """One message of a summary's review, kept in order for as long as the summary is.

    Always on the summary itself, never on its working copy (which is deleted when its
    changes are published or discarded), so the conversation outlives each round of
    changes. Written only by the services of summaries.editing.review. `text` is plain
    text typed by a person: it is shown escaped.
    """

    class Kind(models.TextChoices):
        SUBMITTED = "submitted", "Sent for review"
        SENT_BACK = "sent_back", "Sent back"
        REPLY = "reply", "Reply"
        NOTE = "note", "Note"

    summary = models.ForeignKey(
        "summaries.Summary", on_delete=models.CASCADE, related_name="review_messages"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.REPLY)
    text = models.TextField(max_length=REVIEW_MESSAGE_CHARS, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["summary", "created_at"], name="reviewmessage_thread")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} on summary {self.summary_id}"
