"""The Celery app module (curation/celery.py)."""

from types import SimpleNamespace

import pytest
from kombu.transport import redis as kombu_redis

import curation.celery  # noqa: F401 - every process imports it (curation/__init__.py)


def test_a_redis_channel_of_a_closed_connection_raises_a_connection_error_celery_ignores():
    # What a worker's channel is after Celery's collect() on a lost Redis: its transport
    # is detached from the connection (kombu's Connection._do_close_transport).
    channel = SimpleNamespace(connection=SimpleNamespace(client=None))
    with pytest.raises(kombu_redis.get_redis_error_classes().connection_errors):
        kombu_redis.Channel._connparams(channel)
