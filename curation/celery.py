"""The Celery application; configuration comes from Django settings (CELERY_*)."""

import contextlib
import functools
import os
import time
import uuid
from pathlib import Path
from typing import Any

from celery import Celery
from celery.beat import PersistentScheduler
from celery.worker.consumer import Consumer as CeleryConsumer
from kombu.exceptions import ChannelError
from kombu.transport import filesystem as kombu_filesystem
from kombu.transport import redis as kombu_redis
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps
from redis.exceptions import ConnectionError as RedisConnectionError

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")


def _refuse_redis_channels_of_closed_connections() -> None:
    """Make a kombu Redis channel whose connection was closed raise a connection error
    when it needs Redis, instead of an AttributeError that stops the worker.

    When Redis goes away, the Celery 5.7 worker calls `collect()` and then `close()` on its
    connection (`Consumer.on_connection_error_after_connected`). `collect()` closes the
    channel, which fails on the dead socket before the channel counts as closed (the BRPOP
    read at the top of kombu's redis `Channel.close`), and detaches the transport from the
    connection (`transport.client = None`). `close()` closes the channel again: giving back
    the messages the worker holds unacknowledged (a retry waiting for its countdown) needs
    a new Redis pool, whose parameters `Channel._connparams` reads from
    `self.connection.client`. The AttributeError is not a connection error, which Celery
    would ignore there, so the worker exits ("Unrecoverable error"). Seen with celery 5.7.0
    and kombu 5.7.0; the same error on kombu's shutdown path was
    https://github.com/celery/kombu/issues/970.

    As a connection error it is ignored and the worker reconnects. The messages stay in
    Redis's list of unacknowledged messages and are handed out again after the visibility
    timeout (CELERY_VISIBILITY_TIMEOUT), as a killed worker's are: Redis was unreachable
    then anyway. tests/integration/test_worker_redis_restart.py fails without this.
    """
    channel_class: Any = kombu_redis.Channel  # kombu's type hints leave out _connparams
    connparams = channel_class._connparams

    @functools.wraps(connparams)
    def _connparams(channel: Any, *args: Any, **kwargs: Any) -> Any:
        transport = channel.connection
        if transport is None or transport.client is None:
            raise RedisConnectionError("The broker connection of this channel was closed.")
        return connparams(channel, *args, **kwargs)

    channel_class._connparams = _connparams


_refuse_redis_channels_of_closed_connections()


def _put_message_files_whole() -> None:
    """Make kombu's file-system transport (the zero-configuration broker) publish each
    message file whole: written under a name no consumer reads, then renamed into place.

    kombu's `Channel._put` opens `<time>_<uuid>.<queue>.msg` in the queue folder and only
    then writes the message; its lock is one the consumer never takes. A worker listing
    the folder in between moves and reads an empty file, and the JSON error it raises
    stops the worker ("Unrecoverable error"), losing the message. Seen with kombu 5.7.0
    under load. A rename within a folder is atomic, so a consumer sees the whole file or
    none. tests/test_celery_broker.py checks that no partial file is ever visible.
    """
    channel_class: Any = kombu_filesystem.Channel

    def _put(channel: Any, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{int(round(time.monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(channel.data_folder_out, name)
        partial = os.path.join(channel.data_folder_out, f".{name}.partial")
        try:
            with open(partial, "wb") as message_file:
                message_file.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.remove(partial)
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc

    channel_class._put = _put


_put_message_files_whole()

app = Celery("curation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class BeatScheduler(PersistentScheduler):
    """Celery's own scheduler, which also creates the folder of its schedule file: on
    PostgreSQL + Redis nothing else creates CURATION_VAR_DIR on the beat machine."""

    def setup_schedule(self):
        Path(self.schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        super().setup_schedule()


_CONSUMER_BLUEPRINT: Any = CeleryConsumer.Blueprint  # celery's type hints call it a variable


class Consumer(CeleryConsumer):
    """Celery's worker consumer without event heartbeats, gossip and mingle
    (set as CELERY_WORKER_CONSUMER, so it holds however a worker is started).

    The heartbeat publishes a `worker-heartbeat` event every 2 s from the worker's event
    loop, retrying without limit (celery 5.7.0, `Heart._send`). When Redis stops answering
    before it goes away (saving its data on a busy disk, a frozen machine), a heartbeat
    waits for its reply and then retries until Redis is back: the loop stands still
    meanwhile, and the worker neither notices the lost broker nor gives back what it
    holds. tests/integration/test_worker_redis_restart.py fails with the heartbeat.

    Nothing here reads these events: gossip listens for other workers' heartbeats, mingle
    asks the others at start-up for revoked task ids, which this project never revokes,
    and worker health checks use remote control's ping (`manage.py worker_health`).
    """

    class Blueprint(_CONSUMER_BLUEPRINT):
        default_steps = [
            step
            for step in _CONSUMER_BLUEPRINT.default_steps
            if step.rsplit(":", 1)[1] not in {"Heart", "Gossip", "Mingle"}
        ]
