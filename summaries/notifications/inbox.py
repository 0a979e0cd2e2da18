"""The admin inbox: what a person reads and marks, only ever their own notifications."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.utils import timezone

from summaries.models import Notification


def unread_count(*, user) -> int:
    """How many of `user`'s notifications are unread (0 for anonymous users)."""
    return Notification.objects.for_user(user).unread().count()


def mark_read(*, user, notification_ids: Iterable[int], now: datetime | None = None) -> int:
    """Mark these notifications read, those of `user` alone (another person's ids are
    ignored). Returns how many changed."""
    return (
        Notification.objects.for_user(user)
        .unread()
        .filter(pk__in=list(notification_ids))
        .update(read_at=now or timezone.now())
    )


def mark_unread(*, user, notification_ids: Iterable[int]) -> int:
    """Mark these notifications of `user` unread again. Returns how many changed."""
    return (
        Notification.objects.for_user(user)
        .filter(pk__in=list(notification_ids), read_at__isnull=False)
        .update(read_at=None)
    )
