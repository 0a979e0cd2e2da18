"""Readiness checks: can this process reach its database, its cache and the broker?

The database is checked on the connection this thread's requests use: kept open between
requests (CONN_MAX_AGE), tested before reuse (CONN_HEALTH_CHECKS) and opened again when
it broke, so probes every few seconds cost a query each, not a database session each
(PostgreSQL forks a process per session). The cache and the broker are each checked on a
connection of their own with a short timeout (their usual connections have none, and a
server that stops answering, rather than refusing, would otherwise hold the probe for
minutes), side by side with the database. A probe takes about TIMEOUT seconds at worst,
or the `connect_timeout` the settings give PostgreSQL when its connection has to be
opened again. A failed check is logged here with its error; the probe's answer names the
check only.
"""

import logging
import math
import uuid
from concurrent.futures import Future, ThreadPoolExecutor, wait

from celery import current_app
from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.db import DEFAULT_DB_ALIAS, connections
from django.utils.module_loading import import_string
from redis.backoff import NoBackoff
from redis.retry import Retry

logger = logging.getLogger(__name__)

TIMEOUT = 2.0  # seconds each check may take


def database(timeout: float) -> None:
    """SELECT 1 on this thread's connection to the default database (which takes no lock
    and runs no longer than its round trip)."""
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def cache(timeout: float) -> None:
    """Set, read and delete a key of its own in the default cache."""
    params = dict(settings.CACHES[DEFAULT_CACHE_ALIAS])
    backend = import_string(params.pop("BACKEND"))
    if issubclass(backend, RedisCache):
        location = params.pop("LOCATION", "")
        params["OPTIONS"] = {
            **params.get("OPTIONS", {}),
            "socket_connect_timeout": timeout,
            "socket_timeout": timeout,
            "retry": Retry(NoBackoff(), 0),
        }
        probe = backend(location, params)
    else:  # files or memory, in this process or on this machine
        probe = caches[DEFAULT_CACHE_ALIAS]
    key = f"ops:readiness:{uuid.uuid4().hex}"
    probe.set(key, key, timeout=max(10, math.ceil(timeout) * 2))
    try:
        if probe.get(key) != key:
            raise RuntimeError("the cache did not return the value just set")
    finally:
        probe.delete(key)


def broker(timeout: float) -> None:
    """Connect to the Celery broker once, without retrying."""
    transport_options = {"socket_connect_timeout": timeout, "socket_timeout": timeout}
    with current_app.connection_for_write(
        connect_timeout=timeout, transport_options=transport_options
    ) as connection:
        connection.ensure_connection(max_retries=0, timeout=timeout)


CHECKS = {"database": database, "cache": cache, "broker": broker}
# Checks run in this thread: Django's database connections belong to one thread each.
IN_THIS_THREAD = {"database"}


def _run_here(check, timeout: float) -> Future:
    future: Future = Future()
    try:
        future.set_result(check(timeout))
    except Exception as error:  # noqa: BLE001 - a failed check is a result, logged by run()
        future.set_exception(error)
    return future


def run(timeout: float = TIMEOUT) -> dict[str, bool]:
    """{check name: passed} for every check, run side by side within about `timeout`."""
    elsewhere = {name: check for name, check in CHECKS.items() if name not in IN_THIS_THREAD}
    pool = ThreadPoolExecutor(max_workers=len(elsewhere), thread_name_prefix="readiness")
    futures = {name: pool.submit(check, timeout) for name, check in elsewhere.items()}
    futures |= {name: _run_here(CHECKS[name], timeout) for name in IN_THIS_THREAD}
    wait(futures.values(), timeout=timeout + 1)
    pool.shutdown(wait=False, cancel_futures=True)
    results = {}
    for name in CHECKS:
        future = futures[name]
        if not future.done():
            logger.warning("Readiness: the %s check did not finish within %ss", name, timeout)
            results[name] = False
        elif future.exception() is not None:
            logger.warning("Readiness: the %s check failed", name, exc_info=future.exception())
            results[name] = False
        else:
            results[name] = True
    return results
