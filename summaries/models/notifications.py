"""Notifications: people told when work waits for them, in the admin inbox and by e-mail.

An event (a summary sent for review, sent back, published, gone live on schedule, a cited
source gone bad) is written in the transaction of the change it tells of, with one
notification per person told (an outbox, as for webhooks): a change that commits is told,
one that rolls back is not. Each notification is e-mailed at most once: a worker claims it
(e-mail state "sending", committed) before it sends, so a second run of the task sends
nothing, and one whose worker died mid-send is marked "interrupted", never sent again.
"""

from django.conf import settings
from django.db import models


class NotificationKind(models.TextChoices):
    SUBMITTED = "submitted", "A summary was sent for review"
    SENT_BACK = "sent_back", "A summary you wrote was sent back"
    PUBLISHED = "published", "A summary you wrote was published"
    WENT_LIVE = "went_live", "A scheduled summary you wrote went live"
    SOURCE_PROBLEM = "source_problem", "A source cited by a live summary you wrote has a problem"
    REPLY = "reply", "A reply in a review you take part in"


class NotificationEvent(models.Model):
    """Something that happened, told to the notifications that point at it.

    `subject` and `body` are plain text (never rendered as HTML unescaped): they may hold
    titles and notes editors typed.
    """

    kind = models.CharField(max_length=20, choices=NotificationKind.choices)
    # One event per key: what makes telling twice impossible (see summaries/notifications).
    key = models.CharField(max_length=200, unique=True)
    summary = models.ForeignKey(
        "summaries.Summary",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Who did it (none for the clock or the source checker).",
    )
    subject = models.CharField(max_length=200)
    body = models.TextField()
    # Where to act on it: a path on this site (the summary's admin page).
    link = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.subject


class NotificationQuerySet(models.QuerySet):
    def for_user(self, user):
        """The notifications of `user` alone: nobody sees or marks another's."""
        if user is None or not user.is_authenticated:
            return self.none()
        return self.filter(recipient=user)

    def unread(self):
        return self.filter(read_at__isnull=True)


class Notification(models.Model):
    """One person told of one event: an inbox entry, and an e-mail unless turned off."""

    class EmailState(models.TextChoices):
        PENDING = "pending", "Waiting to be sent"
        SENDING = "sending", "Being sent"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"
        INTERRUPTED = "interrupted", "Interrupted (the worker was lost; not sent again)"
        SKIPPED = "skipped", "Not sent (no address, inactive or turned off)"

    event = models.ForeignKey(
        NotificationEvent, on_delete=models.CASCADE, related_name="notifications"
    )
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notifications"
    )
    read_at = models.DateTimeField(null=True, blank=True)
    email_state = models.CharField(
        max_length=20, choices=EmailState.choices, default=EmailState.PENDING, db_index=True
    )
    email_attempts = models.PositiveSmallIntegerField(default=0)
    email_claimed_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)
    email_error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(db_index=True)

    objects = NotificationQuerySet.as_manager()

    class Meta:
        verbose_name = "notification"
        verbose_name_plural = "inbox"
        ordering = ["-created_at", "-id"]
        constraints = [
            # At most once per event and person, whatever runs twice.
            models.UniqueConstraint(
                fields=["event", "recipient"], name="notification_once_per_event_and_recipient"
            )
        ]
        indexes = [
            models.Index(fields=["recipient", "read_at"], name="notification_inbox"),
        ]

    def __str__(self) -> str:
        return self.event.subject


class NotificationPreferences(models.Model):
    """What a person wants to be told of; every kind is on until they turn it off.

    A kind turned off is neither put in the inbox nor e-mailed.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="notification_preferences",
    )
    submitted = models.BooleanField(
        "summaries sent for review", default=True, help_text="Reviewers only."
    )
    sent_back = models.BooleanField("my summaries sent back to me", default=True)
    published = models.BooleanField("my summaries published", default=True)
    went_live = models.BooleanField("my scheduled summaries going live", default=True)
    source_problem = models.BooleanField(
        "problems with sources my live summaries cite",
        default=True,
        help_text="A cited page broke, or no longer supports the claim.",
    )
    reply = models.BooleanField(
        "replies in reviews I take part in",
        default=True,
        help_text="Of a summary I wrote, am asked to review, or wrote in the review of.",
    )

    class Meta:
        verbose_name = "notification settings"
        verbose_name_plural = "notification settings"

    def __str__(self) -> str:
        return f"Notification settings of {self.user}"

    def wants(self, kind: str) -> bool:
        return bool(getattr(self, kind))
