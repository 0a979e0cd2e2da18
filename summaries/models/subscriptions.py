"""Readers following a channel, a person, a topic or everything by e-mail.

A `Subscriber` is one e-mail address; each thing it follows is a `Subscription`, pending
until the address confirms it (double opt-in). A `Digest` records each digest claimed for
an address, one per frequency and period at most. The rules are in summaries/following.
"""

from django.db import models
from django.db.models import Q

from .catalogue import Channel, Person, Topic


class Subscriber(models.Model):
    """One reader's e-mail address (lower-cased), with what was last mailed to it."""

    email = models.EmailField(max_length=254, unique=True)
    created_at = models.DateTimeField()
    # When a confirmation was last queued: no second one within FOLLOW_CONFIRM_RESEND_AFTER.
    confirmation_sent_at = models.DateTimeField(null=True, blank=True)
    # Set when a confirmation is queued, cleared by the one send that claims it.
    confirmation_due = models.BooleanField(default=False)
    bounced_at = models.DateTimeField(
        null=True, blank=True, help_text="When mail to the address bounced (its follows ended)."
    )

    class Meta:
        ordering = ["email"]
        permissions = [
            ("view_subscriber_addresses", "Can see the e-mail addresses of followers"),
            ("record_bounces", "Can turn off an address's follows after a bounce"),
        ]

    def __str__(self):
        return self.email


class SubscriptionQuerySet(models.QuerySet):
    def active(self):
        """Confirmed follows of addresses that did not bounce."""
        return self.filter(state=Subscription.State.ACTIVE, subscriber__bounced_at__isnull=True)


class Subscription(models.Model):
    """What one address follows, how often it wants a digest, and from when."""

    class Kind(models.TextChoices):
        CHANNEL = "channel", "Channel"
        PERSON = "person", "Person"
        TOPIC = "topic", "Topic"
        ALL = "all", "Everything"

    class Frequency(models.TextChoices):
        IMMEDIATE = "immediate", "As soon as published"
        DAILY = "daily", "Daily"
        WEEKLY = "weekly", "Weekly"

    class State(models.TextChoices):
        PENDING = "pending", "Waiting for confirmation"
        ACTIVE = "active", "Following"
        ENDED = "ended", "Ended"

    subscriber = models.ForeignKey(
        Subscriber, on_delete=models.CASCADE, related_name="subscriptions"
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    channel = models.ForeignKey(
        Channel, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    person = models.ForeignKey(
        Person, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    topic = models.ForeignKey(
        Topic, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    frequency = models.CharField(max_length=10, choices=Frequency.choices, default=Frequency.DAILY)
    state = models.CharField(
        max_length=10, choices=State.choices, default=State.PENDING, db_index=True
    )
    created_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    # Summaries first published after this time are not yet in a digest of this follow.
    digest_from = models.DateTimeField(null=True, blank=True)

    objects = SubscriptionQuerySet.as_manager()

    class Meta:
        ordering = ["subscriber", "kind", "id"]
        constraints = [
            models.CheckConstraint(
                condition=(
                    Q(kind="channel", channel__isnull=False, person=None, topic=None)
                    | Q(kind="person", person__isnull=False, channel=None, topic=None)
                    | Q(kind="topic", topic__isnull=False, channel=None, person=None)
                    | Q(kind="all", channel=None, person=None, topic=None)
                ),
                name="subscription_target_matches_kind",
            ),
            models.UniqueConstraint(
                fields=["subscriber", "channel"],
                condition=Q(kind="channel"),
                name="subscription_one_per_channel",
            ),
            models.UniqueConstraint(
                fields=["subscriber", "person"],
                condition=Q(kind="person"),
                name="subscription_one_per_person",
            ),
            models.UniqueConstraint(
                fields=["subscriber", "topic"],
                condition=Q(kind="topic"),
                name="subscription_one_per_topic",
            ),
            models.UniqueConstraint(
                fields=["subscriber"], condition=Q(kind="all"), name="subscription_one_for_all"
            ),
        ]
        indexes = [models.Index(fields=["frequency", "state"], name="subscription_due")]

    def __str__(self):
        return f"{self.get_kind_display()}: {self.target_name}"

    @property
    def target_name(self) -> str:
        target = self.channel or self.person or self.topic
        return str(target) if target is not None else "everything"

    @property
    def target_url(self) -> str:
        target = self.channel or self.person or self.topic
        return target.get_absolute_url() if target is not None else "/"


class Digest(models.Model):
    """One digest claimed for an address: at most one per frequency and period."""

    class State(models.TextChoices):
        SENDING = "sending", "Being sent"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    subscriber = models.ForeignKey(Subscriber, on_delete=models.CASCADE, related_name="digests")
    frequency = models.CharField(max_length=10, choices=Subscription.Frequency.choices)
    period = models.CharField(
        max_length=32, help_text="The day, ISO week or minute the digest is for."
    )
    summary_ids = models.JSONField(default=list)
    state = models.CharField(max_length=10, choices=State.choices, default=State.SENDING)
    created_at = models.DateTimeField(db_index=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["subscriber", "frequency", "period"], name="digest_once_per_period"
            )
        ]

    def __str__(self):
        return f"{self.frequency} digest {self.period} for subscriber {self.subscriber_id}"
