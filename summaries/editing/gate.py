"""Who may do what to a summary: checked by every editing service, whatever face calls it.

The admin and the API only call the services of `summaries.editing`; each service that
changes a summary or its publication checks here that its user may, so that no road
(a button, a bulk action, an API action, a restore, the Video page) can skip the rule.
A service called with `user=None` is the system acting on its own (the scheduler, a
management command, a data migration); the faces always pass the signed-in user, which
tests/test_gate.py checks in their source.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

from django.core.exceptions import PermissionDenied

if TYPE_CHECKING:
    from django.contrib.auth.models import AnonymousUser, User

# Who acts: the signed-in user (or the anonymous one) of a request, or None for the system.
Actor: TypeAlias = "User | AnonymousUser | None"

PUBLISH = "summaries.publish_summary"
CHANGE = "summaries.change_summary"
ADD = "summaries.add_summary"


def may(user: Actor, permission: str) -> bool:
    """Whether `user` holds `permission` (the system, `None`, holds every one)."""
    return user is None or (user.is_active and user.has_perm(permission))


def require(user: Actor, permission: str, doing: str) -> None:
    """Raise PermissionDenied, saying what was refused, unless `user` may."""
    if not may(user, permission):
        raise PermissionDenied(f"You do not have permission to {doing}.")


def may_publish(user: Actor) -> bool:
    return may(user, PUBLISH)
