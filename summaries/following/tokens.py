"""The signed links of follow e-mails: confirm, manage, unsubscribe.

Signed with the SECRET_KEY (django.core.signing), each with its own salt, so that one
kind of link never works as another. Confirmation and manage links expire
(FOLLOW_CONFIRM_MAX_AGE, FOLLOW_MANAGE_MAX_AGE); unsubscribe links never do, so that an
old message's one-click unsubscribe still works.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core import signing

CONFIRM_SALT = "summaries.following.confirm"
MANAGE_SALT = "summaries.following.manage"
UNSUBSCRIBE_SALT = "summaries.following.unsubscribe"


class BadToken(Exception):
    """The link was altered or is not one of ours."""


class ExpiredToken(Exception):
    """The link was ours but is too old."""


@dataclass(frozen=True)
class Unsubscribe:
    subscriber_id: int
    subscription_ids: tuple[int, ...]


def confirm_token(subscriber_id: int) -> str:
    return signing.TimestampSigner(salt=CONFIRM_SALT).sign(str(subscriber_id))


def manage_token(subscriber_id: int) -> str:
    return signing.TimestampSigner(salt=MANAGE_SALT).sign(str(subscriber_id))


def unsubscribe_token(subscriber_id: int, subscription_ids: list[int]) -> str:
    """A link that ends these follows of the address (those a message was about)."""
    value = [subscriber_id, sorted(subscription_ids)]
    return signing.dumps(value, salt=UNSUBSCRIBE_SALT, compress=True)


def read_confirm_token(token: str) -> int:
    return _read_timed(token, CONFIRM_SALT, settings.FOLLOW_CONFIRM_MAX_AGE)


def read_manage_token(token: str) -> int:
    return _read_timed(token, MANAGE_SALT, settings.FOLLOW_MANAGE_MAX_AGE)


def read_unsubscribe_token(token: str) -> Unsubscribe:
    try:
        subscriber_id, subscription_ids = signing.loads(token, salt=UNSUBSCRIBE_SALT)
        return Unsubscribe(int(subscriber_id), tuple(int(pk) for pk in subscription_ids))
    except (signing.BadSignature, TypeError, ValueError) as exc:
        raise BadToken from exc


def _read_timed(token: str, salt: str, max_age: int) -> int:
    try:
        return int(signing.TimestampSigner(salt=salt).unsign(token, max_age=max_age))
    except signing.SignatureExpired as exc:
        raise ExpiredToken from exc
    except (signing.BadSignature, ValueError) as exc:
        raise BadToken from exc
