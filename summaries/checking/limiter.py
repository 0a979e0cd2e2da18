"""A per-host limit shared by every worker process through Redis.

`RedisHostLimiter` implements `linkcheck.HostLimiter`: at most `per_host` requests in flight
per host across all processes using the same Redis (fewer while the host is slowed down
after pushing back: halved, and growing back by one per `INCREASE_AFTER` answers, shared by
all of them), and a pause per host shared by all of them. Each slot is a member of a sorted
set scored by its expiry, so a worker killed while holding slots cannot leak them: they
lapse after `slot_ttl` seconds (longer than a fetch deadline, which bounds how long a
request holds its slot). When Redis cannot be reached, a request waits for it (up to its own
timeout) rather than going ahead on this process's own count: several processes each
allowing `per_host` would put a multiple of the limit on a site during every Redis restart.
A request that gets no slot in time is not sent, and the batch hands its source to a later
attempt (`linkcheck.batch.not_started`).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import defaultdict

import redis
from django.conf import settings

from summaries.linkcheck import HostLimiter, InProcessHostLimiter
from summaries.linkcheck.limits import INCREASE_AFTER

logger = logging.getLogger(__name__)

# KEYS: slots, pause, slowed. ARGV: per_host, slot ttl (ms), member. Returns 1 when a slot
# was taken, 0 when the host is full, or -pause_ms when it is paused. Redis's own clock is
# used, so processes on machines with skewed clocks agree.
_ACQUIRE = """
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local paused = redis.call('PTTL', KEYS[2])
if paused > 0 then return -paused end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)
local limit = tonumber(redis.call('HGET', KEYS[3], 'limit') or ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= limit then return 0 end
redis.call('ZADD', KEYS[1], now_ms + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
"""
# KEYS: pause. ARGV: pause (ms). Extends a pause, never shortens it.
_PAUSE = """
local current = redis.call('PTTL', KEYS[1])
if current < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], '1', 'PX', ARGV[1]) end
return 1
"""
# KEYS: slowed. ARGV: per_host, ttl (ms). Halves the host's limit (at least 1).
_SLOW_DOWN = """
local limit = tonumber(redis.call('HGET', KEYS[1], 'limit') or ARGV[1])
limit = math.max(1, math.floor(limit / 2))
redis.call('HSET', KEYS[1], 'limit', limit, 'answers', 0)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return limit
"""
# KEYS: slowed. ARGV: per_host, ttl (ms), answers per step. One answer without push-back:
# after `answers per step` of them the limit grows by one; at per_host the host is no
# longer slowed down.
_SPEED_UP = """
local limit = redis.call('HGET', KEYS[1], 'limit')
if not limit then return tonumber(ARGV[1]) end
local answers = redis.call('HINCRBY', KEYS[1], 'answers', 1)
if answers < tonumber(ARGV[3]) then return tonumber(limit) end
limit = tonumber(limit) + 1
if limit >= tonumber(ARGV[1]) then
  redis.call('DEL', KEYS[1])
  return tonumber(ARGV[1])
end
redis.call('HSET', KEYS[1], 'limit', limit, 'answers', 0)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return limit
"""
# A host slowed down and then left alone is back at full speed after this.
SLOWED_TTL_MS = 60_000
# The longest a request waits for a full host before asking again. A release wakes one
# waiter at once (in any process: a token pushed on the host's "free" list, which waiters
# block on), so this only bounds the wait when a release's token was missed.
POLL = 0.02
REDIS_POLL = 0.25  # seconds between attempts while Redis cannot be reached


class RedisHostLimiter:
    """At most `per_host` requests in flight per host across processes sharing `client`."""

    def __init__(
        self,
        client: redis.Redis,
        per_host: int = 2,
        *,
        slot_ttl: float = 30.0,
        prefix: str = "curation:linkcheck",
    ) -> None:
        if per_host < 1:
            raise ValueError("per_host must be at least 1")
        self.client = client
        self.per_host = per_host
        self.slot_ttl_ms = max(1, int(slot_ttl * 1000))
        self.prefix = prefix
        self.fallback = InProcessHostLimiter(per_host)
        self._acquire = client.register_script(_ACQUIRE)
        self._pause = client.register_script(_PAUSE)
        self._slow_down = client.register_script(_SLOW_DOWN)
        self._speed_up = client.register_script(_SPEED_UP)
        # The slots this process holds, per thread and host: fetch releases a slot in the
        # thread that acquired it. The fallback keeps only pauses while Redis is away.
        self._held = threading.local()

    def _keys(self, host: str) -> tuple[str, str, str]:
        return (
            f"{self.prefix}:slots:{host}",
            f"{self.prefix}:pause:{host}",
            f"{self.prefix}:slowed:{host}",
        )

    def _free_key(self, host: str) -> str:
        return f"{self.prefix}:free:{host}"

    def _wait_for_release(self, host: str, seconds: float) -> None:
        """Sleep until a slot of host is released (by any process) or seconds pass."""
        if seconds < 0.001:  # BLPOP reads a timeout of 0 as "forever"
            return
        try:
            self.client.blpop([self._free_key(host)], timeout=seconds)
        except redis.RedisError:
            time.sleep(seconds)

    def _stack(self, host: str) -> list[str]:
        if not hasattr(self._held, "slots"):
            self._held.slots = defaultdict(list)
        stack: list[str] = self._held.slots[host]
        return stack

    def acquire(self, host: str, *, timeout: float | None = None) -> bool:
        give_up_at = None if timeout is None else time.monotonic() + timeout
        member = uuid.uuid4().hex
        while True:
            try:
                answer = int(
                    self._acquire(
                        keys=self._keys(host), args=[self.per_host, self.slot_ttl_ms, member]
                    )
                )
            except redis.RedisError as error:
                logger.warning("host limiter: Redis unavailable (%s); waiting for it", error)
                answer = None
            if answer == 1:
                self._stack(host).append(member)
                return True
            if answer is None:
                wait = REDIS_POLL
            else:
                wait = POLL if answer == 0 else min(-answer / 1000, 1.0)
            if give_up_at is not None:
                left = give_up_at - time.monotonic()
                if left <= 0:
                    return False
                wait = min(wait, left)
            if answer == 0:
                self._wait_for_release(host, wait)
            else:
                time.sleep(wait)

    def release(self, host: str) -> None:
        stack = self._stack(host)
        if not stack:
            return
        member = stack.pop()
        free = self._free_key(host)
        try:
            pipe = self.client.pipeline(transaction=False)
            pipe.zrem(self._keys(host)[0], member)
            # Wake one waiter. Tokens nobody takes are trimmed and expire: at worst a later
            # waiter wakes once for nothing and asks again.
            pipe.lpush(free, 1)
            pipe.ltrim(free, 0, self.per_host - 1)
            pipe.pexpire(free, 1000)
            pipe.execute()
        except redis.RedisError as error:  # the slot lapses on its own
            logger.warning("host limiter: could not release a slot (%s)", error)

    def pause(self, host: str, seconds: float) -> None:
        self.fallback.pause(host, seconds)
        try:
            self._pause(keys=[self._keys(host)[1]], args=[max(1, int(seconds * 1000))])
        except redis.RedisError as error:
            logger.warning("host limiter: could not share a pause (%s)", error)

    def wait_time(self, host: str) -> float:
        local = self.fallback.wait_time(host)
        try:
            remaining = self.client.pttl(self._keys(host)[1])
        except redis.RedisError:
            return local
        return max(local, remaining / 1000 if remaining and remaining > 0 else 0.0)

    def slow_down(self, host: str) -> None:
        self.fallback.slow_down(host)
        try:
            self._slow_down(keys=[self._keys(host)[2]], args=[self.per_host, SLOWED_TTL_MS])
        except redis.RedisError as error:
            logger.warning("host limiter: could not share a slow-down (%s)", error)

    def speed_up(self, host: str) -> None:
        self.fallback.speed_up(host)
        try:
            self._speed_up(
                keys=[self._keys(host)[2]], args=[self.per_host, SLOWED_TTL_MS, INCREASE_AFTER]
            )
        except redis.RedisError as error:
            logger.warning("host limiter: could not share a recovery (%s)", error)

    def limit(self, host: str) -> int:
        """The host's current concurrency across processes (this process's own view while
        Redis cannot be reached)."""
        try:
            value = self.client.hget(self._keys(host)[2], "limit")
        except redis.RedisError:
            return self.fallback.limit(host)
        return int(value) if value is not None else self.per_host

    def in_flight(self, host: str) -> int:
        """Slots currently held for host by every process (expired ones not counted)."""
        now_ms = int(time.time() * 1000)
        return int(self.client.zcount(self._keys(host)[0], now_ms, "+inf"))


def get_host_limiter(per_host: int) -> HostLimiter:
    """The limiter for this process: shared through Redis when REDIS_URL is set."""
    url = settings.REDIS_URL
    if not url:
        return InProcessHostLimiter(per_host)
    deadline = settings.FETCH_DEADLINE
    client = redis.Redis.from_url(
        url, socket_connect_timeout=2, socket_timeout=2, health_check_interval=30
    )
    return RedisHostLimiter(client, per_host, slot_ttl=deadline + 5)


_limiter_lock = threading.Lock()
_limiter: HostLimiter | None = None


def host_limiter() -> HostLimiter:
    """This process's per-host limiter: FETCH_PER_HOST requests in flight per host, shared
    by every worker process through Redis when REDIS_URL is set (see redis_limiter)."""
    global _limiter
    with _limiter_lock:
        if _limiter is None:
            _limiter = get_host_limiter(settings.FETCH_PER_HOST)
        return _limiter
