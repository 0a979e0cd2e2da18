"""Readiness checks: can this process reach its database, its cache and the broker?

Each check opens a connection of its own with a short timeout (the database's and the
cache's usual connections have none, and a server that stops answering, rather than
refusing, would otherwise hold the probe for minutes); the three run side by side, so a
probe takes about TIMEOUT seconds at worst. A failed check is logged here with its error;
the probe's answer names the check only.
"""

import copy
import logging
import math
import uuid
from concurrent.futures import ThreadPoolExecutor, wait

from celery import current_app
from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, caches
from django.core.cache.backends.redis import RedisCache
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.utils import load_backend
from django.utils.module_loading import import_string
from redis.backoff import NoBackoff
from redis.retry import Retry

logger = logging.getLogger(__name__)

TIMEOUT = 2.0  # seconds each check may take


def database(timeout: float) -> None:
    """SELECT 1 on a new connection to the default database."""
    params = copy.deepcopy(connections.settings[DEFAULT_DB_ALIAS])
    options = params.setdefault("OPTIONS", {})
    vendor = params["ENGINE"].rsplit(".", 1)[-1]
    if vendor == "postgresql":
        options["connect_timeout"] = max(2, math.ceil(timeout))  # libpq's least
        statement = f"-c statement_timeout={int(timeout * 1000)}"
        options["options"] = f"{options.get('options', '')} {statement}".strip()
    elif vendor == "sqlite3":
        options["timeout"] = timeout  # waiting for a lock
    params["CONN_MAX_AGE"] = 0
    probe = load_backend(params["ENGINE"]).DatabaseWrapper(params, DEFAULT_DB_ALIAS)
    try:
        with probe.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    finally:
        probe.close()


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


def run(timeout: float = TIMEOUT) -> dict[str, bool]:
    """{check name: passed} for every check, run side by side within about `timeout`."""
    pool = ThreadPoolExecutor(max_workers=len(CHECKS), thread_name_prefix="readiness")
    futures = {name: pool.submit(check, timeout) for name, check in CHECKS.items()}
    wait(futures.values(), timeout=timeout + 1)
    pool.shutdown(wait=False, cancel_futures=True)
    results = {}
    for name, future in futures.items():
        if not future.done():
            logger.warning("Readiness: the %s check did not finish within %ss", name, timeout)
            results[name] = False
        elif future.exception() is not None:
            logger.warning("Readiness: the %s check failed", name, exc_info=future.exception())
            results[name] = False
        else:
            results[name] = True
    return results
