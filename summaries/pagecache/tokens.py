"""Read-only API tokens: clients whose token shows them exactly what anonymous clients see.

A token whose user is active and not staff (so it may not see unpublished work,
models/access.py) reads the same published content as everyone, so its GETs share the
page cache. Which tokens are such is kept per process for TOKEN_TTL seconds,
so a hit costs no query: a token deleted, or a user made an editor, is served cached
public content for at most that long (the same anonymous clients get), then goes to the
view (401, or the editor's fresh answer). Staff tokens are looked up once in that time too.
"""

from __future__ import annotations

import threading

import cachetools
from django.db import DatabaseError

TOKEN_TTL = 60.0
_PREFIX = "Token "
_known: cachetools.TTLCache[str, bool] = cachetools.TTLCache(maxsize=10_000, ttl=TOKEN_TTL)
_lock = threading.Lock()


def is_reader_token(authorization: str) -> bool:
    """Whether an Authorization header carries a valid token of a user who sees only
    published content."""
    if not authorization.startswith(_PREFIX):
        return False
    key = authorization[len(_PREFIX) :].strip()
    if not key or len(key) > 40:
        return False
    with _lock:
        known = _known.get(key)
    if known is None:
        known = _look_up(key)
        with _lock:
            _known[key] = known
    return known


def _look_up(key: str) -> bool:
    from rest_framework.authtoken.models import Token

    try:
        token = Token.objects.select_related("user").filter(key=key).first()
    except DatabaseError:
        return False
    # Only staff users may see unpublished work (models/access.py); any staff token is
    # served fresh, which spares reading its permissions here (two more queries).
    return token is not None and token.user.is_active and not token.user.is_staff


def forget_all() -> None:
    """Drop what this process knows (tests)."""
    with _lock:
        _known.clear()
