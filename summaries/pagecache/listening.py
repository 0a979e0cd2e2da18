"""This process's copy of the content generation row, kept current by PostgreSQL's
LISTEN/NOTIFY, so that a cached page costs no query.

A trigger on the row's table (migration 0032_generation_notify) sends a notification on
`CHANNEL` with every change to the row, and when the table is emptied; PostgreSQL delivers
it when the transaction that made the change commits. One thread per process listens on a
connection of its own: it reads the row once listening, again on every notification, and
once every `HEARTBEAT` seconds whatever comes (which also proves the connection alive).

Web processes start it (`listen()`, from the page cache middleware); other processes
(Celery workers, commands) read the row when they need it. Requests use the copy
(`copy()`) only while it is confirmed: read less than `TRUSTED_FOR`
seconds ago by a listener still connected. Otherwise (the connection lost or hanging, the
database restarting, SQLite, listening turned off for a pooler that cannot keep LISTEN)
they read the row themselves, as they would with no listener. A request inside a
transaction reads the row itself too, since its own uncommitted change is visible only on
its own connection.

A process that commits a change reads the row again at once (`refresh`), so its own next
request never waits for the notification. Other processes see a change when its
notification arrives, normally within a millisecond of the commit.
"""

import logging
import os
import threading
import time
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from summaries.models import ContentGeneration

logger = logging.getLogger(__name__)

CHANNEL = "curation_generation"
HEARTBEAT = 1.0  # seconds between reads of the row when no notification comes
TRUSTED_FOR = 3 * HEARTBEAT  # a copy read longer ago than this is not used
RETRY_AFTER = 1.0  # seconds between attempts to listen again after a failure
WAKE_EVERY = 0.25  # seconds a wait for notifications lasts, so that stopping is prompt

_TABLE = ContentGeneration._meta.db_table
_ROW = ContentGeneration.ROW_ID
READ = f"SELECT content, checks, changed_at FROM {_TABLE} WHERE id = {_ROW}"  # noqa: S608


class Listener:
    """The copy and the thread that keeps it, for one process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.row: tuple[Any, ...] | None = None
        self.read_at = 0.0  # time.monotonic() of the read the copy came from
        self.tickets = 0  # reads begun, numbered in the order they began
        self.applied = 0  # the ticket of the read the copy came from
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        self.pid = os.getpid()
        self.backend_pid: int | None = None  # the listening connection's server process

    def ticket(self) -> int:
        """A number for a read about to begin: a read that began later saw at least as
        much as one that began earlier, so only a later read may replace the copy."""
        with self.lock:
            self.tickets += 1
            return self.tickets

    def apply(self, ticket: int, row: tuple[Any, ...] | None) -> None:
        with self.lock:
            if ticket > self.applied:
                self.applied = ticket
                self.row = row
                self.read_at = time.monotonic()

    def forget(self) -> None:
        """Requests read the row themselves until the listener has read it again."""
        self.apply(self.ticket(), None)

    def copy(self) -> tuple[Any, ...] | None:
        row, read_at = self.row, self.read_at
        if row is None or time.monotonic() - read_at > TRUSTED_FOR:
            return None
        return row

    def start(self) -> None:
        self.thread = threading.Thread(
            target=self.listen_until_stopped, name="generation-listener", daemon=True
        )
        self.thread.start()

    def stop(self) -> None:
        """Stop listening and wait for the thread (at most a wait and a retry)."""
        self.stopping.set()
        self.forget()
        if self.thread is not None:
            self.thread.join(WAKE_EVERY + RETRY_AFTER + 5)

    def listen_until_stopped(self) -> None:
        failing = False
        while not self.stopping.is_set():
            try:
                self.listen()
            except Exception:  # noqa: BLE001 - any failure: requests read the row meanwhile
                self.forget()
                if not failing:
                    logger.warning("Not listening for content changes", exc_info=True)
                failing = True
                self.stopping.wait(RETRY_AFTER)
            else:
                failing = False

    def listen(self) -> None:
        """Listen on a connection of its own until it fails or the listener stops."""
        connection = _connect()
        self.backend_pid = connection.info.backend_pid
        try:
            connection.execute(f"LISTEN {CHANNEL}", prepare=False)
            if self.row is None:
                logger.info("Listening for content changes")
            due = 0.0  # when the row must be read again, notified or not
            notified = True
            while not self.stopping.is_set():
                if notified or time.monotonic() >= due:
                    ticket = self.ticket()
                    self.apply(ticket, connection.execute(READ).fetchone())
                    due = time.monotonic() + HEARTBEAT
                # Run to its end: the generator holds the connection's lock until then.
                notified = bool(list(connection.notifies(timeout=WAKE_EVERY, stop_after=1)))
        finally:
            self.forget()
            connection.close()


APPLICATION_NAME = "curation-listener"  # how its connection shows in pg_stat_activity


def _connect() -> Any:
    """A new psycopg connection to the primary database, in autocommit, made the way
    Django makes its own (the same options, the same timeouts)."""
    wrapper = connections.create_connection(DEFAULT_DB_ALIAS)
    params = {**wrapper.get_connection_params(), "application_name": APPLICATION_NAME}
    connection = wrapper.get_new_connection(params)
    connection.autocommit = True
    return connection


_listener: Listener | None = None
_starting = threading.Lock()


def wanted() -> bool:
    return settings.PAGE_CACHE_LISTEN and connections[DEFAULT_DB_ALIAS].vendor == "postgresql"


def running() -> Listener | None:
    """This process's listener, if one was started in it (not in the process it was forked
    from)."""
    found = _listener
    if found is not None and found.pid == os.getpid():
        return found
    return None


def listen() -> Listener | None:
    """Start this process's listener unless it runs (web processes, on each request: a
    worker forked from another starts its own); None where listening is not wanted."""
    global _listener  # noqa: PLW0603 - one listener per process
    found = running()
    if found is not None or not wanted():
        return found
    with _starting:
        if running() is None:
            _listener = Listener()
            _listener.start()
        return _listener


def copy() -> tuple[Any, ...] | None:
    """The row as the listener last confirmed it, or None when a request must read it:
    no listener, the copy not confirmed lately, or a transaction open on the request's
    connection (its own changes are not in the copy)."""
    found = running()
    if found is None or connections[DEFAULT_DB_ALIAS].in_atomic_block:
        return None
    return found.copy()


def refresh() -> None:
    """Read the row again now (after this process committed a change to it)."""
    found = running()
    if found is None or found.row is None:
        return
    ticket = found.ticket()
    try:
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(READ)
            row = cursor.fetchone()
    except DatabaseError:
        row = None
    found.apply(ticket, row)


def stop() -> None:
    """Stop this process's listener (tests, before their database is dropped)."""
    global _listener  # noqa: PLW0603 - one listener per process
    with _starting:
        found, _listener = _listener, None
    if found is not None and found.pid == os.getpid():
        found.stop()
