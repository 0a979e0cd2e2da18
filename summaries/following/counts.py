"""How many addresses follow each channel, person, topic and everything (for editors)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count

from summaries.models import Subscriber, Subscription


@dataclass(frozen=True)
class FollowerCount:
    kind: str
    name: str
    followers: int


def follower_counts() -> list[FollowerCount]:
    """Confirmed follows of addresses that did not bounce, per thing followed, most first
    (pending and ended follows are not counted). No addresses."""
    labels = dict(Subscription.Kind.choices)
    rows = (
        Subscription.objects.active()
        .values("kind", "channel__name", "person__name", "topic__name")
        .annotate(followers=Count("id"))
        .order_by("-followers", "kind", "channel__name", "person__name", "topic__name")
    )
    return [
        FollowerCount(
            kind=labels[row["kind"]],
            name=row["channel__name"] or row["person__name"] or row["topic__name"] or "Everything",
            followers=row["followers"],
        )
        for row in rows
    ]


def followers_with_addresses():
    """Addresses with a confirmed follow, and their follows; only for users allowed to see
    addresses (summaries.view_subscriber_addresses)."""
    return (
        Subscriber.objects.filter(
            subscriptions__state=Subscription.State.ACTIVE, bounced_at__isnull=True
        )
        .distinct()
        .order_by("email")
    )
