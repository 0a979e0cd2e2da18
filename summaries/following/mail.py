"""The follow e-mails: a confirmation and digests, as plain text and HTML.

Every message carries a one-click unsubscribe (RFC 8058: List-Unsubscribe with an https
link that a POST follows without confirmation, and List-Unsubscribe-Post) and a signed link
to the address's manage page. No images, no tracking: the HTML part is the text's words
and links, sent through Django's mail framework (SMTP, or the console by default).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse

from summaries.models import Subscriber, Subscription, Summary

from . import tokens


class TransientMailError(Exception):
    """Nothing was sent and trying again later may work; the task retries it."""


def site_link(name: str, token: str) -> str:
    return settings.SITE_URL + reverse(f"summaries:{name}", args=[token])


def _message(
    *,
    subscriber: Subscriber,
    subject: str,
    template: str,
    context: dict,
    subscription_ids: list[int],
) -> EmailMultiAlternatives:
    unsubscribe_url = site_link(
        "follow-unsubscribe", tokens.unsubscribe_token(subscriber.pk, subscription_ids)
    )
    context = {
        **context,
        "site_url": settings.SITE_URL,
        "unsubscribe_url": unsubscribe_url,
        "manage_url": site_link("follow-manage", tokens.manage_token(subscriber.pk)),
    }
    message = EmailMultiAlternatives(
        subject=f"{settings.EMAIL_SUBJECT_PREFIX}{subject}",
        body=render_to_string(f"following/{template}.txt", context),
        from_email=settings.DEFAULT_FROM_EMAIL,
        to=[subscriber.email],
        headers={
            "List-Unsubscribe": f"<{unsubscribe_url}>",
            "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
            "Auto-Submitted": "auto-generated",
        },
    )
    message.attach_alternative(render_to_string(f"following/{template}.html", context), "text/html")
    return message


def confirmation_message(
    subscriber: Subscriber, follows: list[Subscription]
) -> EmailMultiAlternatives:
    """The one message sent before an address confirms: what it asked to follow and the
    link that confirms it (expiring after FOLLOW_CONFIRM_MAX_AGE)."""
    return _message(
        subscriber=subscriber,
        subject="Confirm that you want to follow new summaries",
        template="confirm",
        context={
            "follows": follows,
            "confirm_url": site_link("follow-confirm", tokens.confirm_token(subscriber.pk)),
            "hours": settings.FOLLOW_CONFIRM_MAX_AGE // 3600,
        },
        subscription_ids=[follow.pk for follow in follows],
    )


def _item(summary: Summary) -> dict[str, str]:
    video = summary.summarised_video  # a digest holds live summaries, never working copies
    return {
        "title": video.title,
        "channel": video.channel.name,
        "tldr": summary.tldr,
        "url": settings.SITE_URL + video.get_absolute_url(),
    }


def digest_message(
    subscriber: Subscriber,
    follows: list[Subscription],
    summaries: Iterable[Summary],
) -> EmailMultiAlternatives:
    """A digest: each new summary's title, 30-second text and link."""
    items = [_item(summary) for summary in summaries]
    subject = items[0]["title"] if len(items) == 1 else f"{len(items)} new summaries"
    return _message(
        subscriber=subscriber,
        subject=subject,
        template="digest",
        context={"items": items, "follows": follows},
        subscription_ids=[follow.pk for follow in follows],
    )
