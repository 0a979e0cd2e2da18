"""How fast capture requests leave: at most N per period across every worker, and none
while the archive asked us to wait.

N slots in the shared cache (Redis in production), each taken with an atomic add that
lapses one period later: a request is sent only with a slot, so no period-long window ever
holds more than N requests, whichever workers sent them.
"""

import math
import time

from django.core.cache import cache

from .options import capture_rate

PREFIX = "archive:pace"
PAUSE_KEY = f"{PREFIX}:pause"
# The shortest wait handed back, so that a busy archive is not asked in a tight loop.
MIN_WAIT = 0.05


def take_turn(*, now: float | None = None) -> float:
    """Take a turn to send one capture request: 0 when taken, else seconds to wait."""
    now = time.time() if now is None else now
    paused_until = cache.get(PAUSE_KEY)
    if paused_until is not None and paused_until > now:
        return max(MIN_WAIT, paused_until - now)
    count, period = capture_rate()
    # A slot lives a second longer than its period: caches keep whole seconds, and a slot
    # that lapsed a moment early would let one request too many into a window.
    lifetime = math.ceil(period) + 1
    keys = [f"{PREFIX}:{count}:{period}:{slot}" for slot in range(count)]
    for key in keys:
        if cache.add(key, now, timeout=lifetime):
            return 0.0
    taken = [t for t in cache.get_many(keys).values() if isinstance(t, int | float)]
    soonest = min(taken, default=now) + lifetime - now
    return max(MIN_WAIT, soonest)


def pause(seconds: float, *, now: float | None = None) -> None:
    """The archive pushed back: send no capture request for `seconds` (never shortened)."""
    now = time.time() if now is None else now
    until = now + seconds
    current = cache.get(PAUSE_KEY)
    if current is None or current < until:
        cache.set(PAUSE_KEY, until, timeout=math.ceil(seconds) + 1)
