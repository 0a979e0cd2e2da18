"""On PostgreSQL each web process keeps a copy of the content generation that LISTEN/NOTIFY
keeps current (summaries/pagecache/listening.py): cached pages cost no query, and a change
committed anywhere still makes them stale at once.

"Another process" is played by another connection (or this process with its own refresh
after commit turned off), and the listener's heartbeat is made long, so that a change can
reach the copy only by its notification.
"""

import time

import psycopg
import pytest
from django.db import connection, transaction

from summaries.editing import workflow
from summaries.pagecache import generation, listening

from .factories import SummaryFactory

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(connection.vendor != "postgresql", reason="LISTEN/NOTIFY: PostgreSQL"),
]

TABLE = "summaries_contentgeneration"


@pytest.fixture
def listener(settings, monkeypatch):
    """This process's listener, confirmed (it has read the row), with a heartbeat long
    enough that only notifications move its copy; stopped after the test."""
    settings.PAGE_CACHE_LISTEN = True
    settings.PAGE_CACHE_LOCAL_BYTES = 1024 * 1024
    monkeypatch.setattr(listening, "HEARTBEAT", 60.0)
    monkeypatch.setattr(listening, "TRUSTED_FOR", 180.0)
    generation.current()  # the row exists
    started = listening.listen()
    try:
        wait_for(lambda: started.copy() is not None, "the listener's first read")
        yield started
    finally:
        listening.stop()


@pytest.fixture
def other_process(monkeypatch):
    """A connection of another process, and this process's refresh after its own
    commits turned off (as in any process but the one that made a change)."""
    monkeypatch.setattr(listening, "refresh", lambda: None)
    params = connection.get_connection_params()
    other = psycopg.connect(
        dbname=params["dbname"],
        user=params.get("user"),
        host=params.get("host"),
        port=params.get("port"),
        autocommit=True,
    )
    yield other
    other.close()


def wait_for(condition, what: str, timeout: float = 5.0) -> float:
    """Seconds until `condition()` held."""
    began = time.monotonic()
    while not condition():
        if time.monotonic() - began > timeout:
            pytest.fail(f"never saw {what}")
        time.sleep(0.002)
    return time.monotonic() - began


def database_row() -> tuple:
    with connection.cursor() as cursor:
        cursor.execute(listening.READ)
        return cursor.fetchone()


def test_a_cached_page_costs_no_query_while_the_listener_is_confirmed(
    client, listener, django_assert_num_queries
):
    summary = SummaryFactory(live=True, tldr="Kept words.")
    url = summary.get_absolute_url()
    client.get(url)
    wait_for(lambda: listener.copy() == database_row(), "the copy of the new row")
    with django_assert_num_queries(0):
        again = client.get(url)
    assert "Kept words." in again.content.decode()


def test_a_change_another_process_commits_reaches_the_copy_by_its_notification(
    listener, other_process
):
    before = generation.current().content
    other_process.execute(f"UPDATE {TABLE} SET content = content + 1")  # noqa: S608
    took = wait_for(lambda: generation.current().content == before + 1, "the change")
    assert took < 1.0


def test_a_page_is_not_served_past_an_unpublish_made_elsewhere(client, listener, other_process):
    summary = SummaryFactory(live=True)
    url = summary.get_absolute_url()
    assert client.get(url).status_code == 200
    wait_for(lambda: listener.copy() == database_row(), "the copy of the new row")
    assert client.get(url).status_code == 200  # from this process's copy of the page

    workflow.unpublish_summary(summary=summary)

    took = wait_for(lambda: client.get(url).status_code == 404, "the page gone")
    assert took < 1.0


def test_a_change_not_committed_yet_is_seen_only_inside_its_transaction(listener):
    before = generation.current().content
    with transaction.atomic():
        generation.content_changed()
        assert generation.current().content > before  # read from the row, not the copy
        assert listening.copy() is None
    assert generation.current().content > before  # this process read the row on commit


def test_requests_read_the_row_while_the_listener_is_cut_off_and_it_listens_again(
    listener, other_process
):
    cut = listener.backend_pid
    other_process.execute("SELECT pg_terminate_backend(%s)", [cut])
    wait_for(lambda: listener.copy() is None, "the copy dropped")
    row = other_process.execute(f"UPDATE {TABLE} SET content = content + 1 RETURNING content")  # noqa: S608
    moved = row.fetchone()[0]
    assert generation.current().content == moved

    wait_for(lambda: listener.copy() is not None, "listening again", timeout=10)
    assert listener.backend_pid != cut
    assert generation.current().content == moved


def test_a_copy_not_confirmed_lately_is_not_used(listener, other_process, monkeypatch):
    """A connection that hangs without failing stops confirming the copy; requests then
    read the row themselves."""
    other_process.execute(f"ALTER TABLE {TABLE} DISABLE TRIGGER USER")
    try:
        moved = other_process.execute(
            f"UPDATE {TABLE} SET content = content + 1 RETURNING content"  # noqa: S608
        ).fetchone()[0]
        assert generation.current().content == moved - 1  # no notification: the copy
        monkeypatch.setattr(listening, "TRUSTED_FOR", 0.0)
        assert generation.current().content == moved
    finally:
        other_process.execute(f"ALTER TABLE {TABLE} ENABLE TRIGGER USER")


def test_an_emptied_table_makes_the_copy_read_again(listener, other_process):
    before = generation.current().content
    other_process.execute(f"TRUNCATE {TABLE}")
    wait_for(lambda: listener.copy() is None, "the copy dropped")
    now = generation.current().content  # the row made again, numbered from the clock
    assert now > before
    wait_for(lambda: listener.copy() is not None, "the new row's copy")
    assert generation.current().content == now


def test_listening_can_be_turned_off(settings):
    settings.PAGE_CACHE_LISTEN = False
    assert listening.listen() is None
    assert listening.copy() is None


def test_only_web_processes_listen(settings, client):
    """Processes that serve no request (Celery workers, commands) read the row when they
    need it, rather than holding a connection more each."""
    settings.PAGE_CACHE_LISTEN = True
    try:
        generation.current()
        assert listening.running() is None
        client.get("/")
        assert listening.running() is not None
    finally:
        listening.stop()


def test_the_site_answers_a_cached_page_before_django_with_no_query(
    client, listener, django_assert_num_queries, monkeypatch
):
    """curation/wsgi.py's application: a cached page is answered before Django's handler
    (summaries/pagecache/front.py), from the listener's copy of the generation."""
    from curation.wsgi import application

    from .test_pagecache_front import call

    summary = SummaryFactory(live=True, tldr="Kept words.")
    url = summary.get_absolute_url()
    client.get(url)  # rendered and stored
    wait_for(lambda: listener.copy() == database_row(), "the copy of the new row")
    cached_pages = application.application  # inside the static files' wrapper
    monkeypatch.setattr(cached_pages, "application", lambda *args: pytest.fail("Django called"))
    with django_assert_num_queries(0):
        status, headers, body = call(application, url, HTTP_ACCEPT_ENCODING="")
    assert status == "200 OK"
    assert "Kept words." in body.decode()
    assert "s-maxage=" in headers["Cache-Control"]
