"""What shared HTTP caches in front of the site may keep (s-maxage and cache tags on public
answers, private everything else), and purges by tag: written with the change, sent after
the commit, deleted only once the cache confirmed them."""

import datetime
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.http import HttpResponse
from django.test import Client
from django.utils import timezone
from django.utils.cache import patch_cache_control

from summaries import tasks
from summaries.editing import workflow
from summaries.models import CachePurge
from summaries.pagecache import edge, purge
from summaries.pagecache.generation import content_changed

from .factories import ChannelFactory, EditorFactory, SummaryFactory, publish_edit

pytestmark = pytest.mark.django_db


def shared(response) -> bool:
    control = response.get("Cache-Control", "")
    return "public" in control and "s-maxage" in control and "private" not in control


def cache_tags(response) -> set[str]:
    return set(response.get("xkey", "").split())


def directive(response, name: str) -> int:
    for part in response["Cache-Control"].split(","):
        key, _, value = part.strip().partition("=")
        if key == name:
            return int(value)
    raise AssertionError(f"no {name} in {response['Cache-Control']}")


@pytest.fixture
def purging(settings):
    """Purges sent to a Varnish backend at an address that is never reached (the tests
    call the service, or replace the backend)."""
    settings.HTTP_CACHE_PURGE_BACKEND = "varnish"
    settings.HTTP_CACHE_PURGE_URLS = ["http://127.0.0.1:9/"]
    settings.HTTP_CACHE_S_MAXAGE = 3600
    return settings


# --- Public answers: s-maxage and tags --------------------------------------------------


def test_a_summary_page_names_what_it_shows(client, purging):
    summary = SummaryFactory(live=True)
    video = summary.video
    for response in (client.get(video.get_absolute_url()), client.get(video.get_absolute_url())):
        assert response.status_code == 200 and shared(response)
        assert directive(response, "s-maxage") == 3600
        assert {f"s{summary.pk}", f"v{video.pk}", f"c{video.channel_id}", "all"} <= cache_tags(
            response
        )


def test_list_pages_name_their_list(client, purging):
    summary = SummaryFactory(live=True)
    channel = summary.video.channel
    assert {"home", "all"} <= cache_tags(client.get("/"))
    assert {f"lc{channel.pk}", f"c{channel.pk}"} <= cache_tags(
        client.get(channel.get_absolute_url())
    )
    assert "feeds" in cache_tags(client.get("/feeds/rss/"))
    assert "feeds" in cache_tags(client.get(f"/channels/{channel.slug}/rss/"))
    assert "sitemaps" in cache_tags(client.get("/sitemap.xml"))


def test_oembed_and_anonymous_api_reads_are_shared_and_purged_by_any_change(client, purging):
    summary = SummaryFactory(live=True)
    page = "http://testserver" + summary.video.get_absolute_url()
    for url in (
        f"/oembed?url={page}&format=json",
        f"/api/v1/summaries/{summary.video.slug}/",
        "/api/v1/summaries/",
    ):
        response = client.get(url)
        assert response.status_code == 200 and shared(response), url
        assert {"misc", "all"} <= cache_tags(response), url


def test_api_reads_are_kept_no_longer_than_browsers_keep_them(client, purging):
    # Check details in the API change with every recorded check, which purges no answer.
    summary = SummaryFactory(live=True)
    response = client.get(f"/api/v1/summaries/{summary.video.slug}/")
    assert directive(response, "s-maxage") == purging.API_CACHE_MAX_AGE


def test_a_missing_page_is_shared_and_purged_by_any_publication(client, purging):
    response = client.get("/videos/no-such-video/")
    assert response.status_code == 404 and shared(response)
    assert cache_tags(response) == {"missing", "all"}


def test_shared_caches_keep_nothing_past_the_next_scheduled_publication(client, purging):
    live = SummaryFactory(live=True)
    workflow.publish_summary(
        summary=SummaryFactory(), at=timezone.now() + datetime.timedelta(seconds=90)
    )
    response = client.get(live.video.get_absolute_url())
    assert 80 <= directive(response, "s-maxage") <= 90


# --- Private answers ----------------------------------------------------------------------


def private(response) -> bool:
    control = response.get("Cache-Control", "")
    return (
        ("private" in control or "no-store" in control)
        and "public" not in control
        and "s-maxage" not in control
        and "xkey" not in response
    )


def test_signed_in_editors_get_private_pages_previews_and_admin():
    summary = SummaryFactory(live=True)
    draft = SummaryFactory()
    editor = Client()
    editor.force_login(EditorFactory())
    for url in (
        summary.video.get_absolute_url(),
        "/",
        "/api/v1/summaries/",
        f"/preview/{draft.video.slug}/",
        "/admin/",
        "/admin/summaries/summary/",
    ):
        response = editor.get(url)
        assert response.status_code in (200, 302), url
        assert private(response), (url, response.get("Cache-Control"))


def test_a_session_cookie_makes_any_answer_private(client):
    summary = SummaryFactory(live=True)
    session = client.session  # a session with no one signed in: the page is the readers'
    session["seen"] = True
    session.save()
    client.cookies["sessionid"] = session.session_key
    assert private(client.get(summary.video.get_absolute_url()))


def test_forms_that_set_a_cookie_and_posts_are_private(client):
    form = client.get("/admin/login/")
    assert "csrftoken" in form.cookies and private(form)
    assert private(client.get("/follow/"))
    posted = client.post("/follow/", {"email": "not an address"})
    assert posted.status_code in (200, 400, 403) and private(posted)


def test_a_public_answer_that_sets_a_cookie_is_private(rf):
    response = HttpResponse("page")
    patch_cache_control(response, public=True, max_age=0, s_maxage=60)
    response["xkey"] = "home"
    response.set_cookie("tracking", "1")
    assert private(edge.finish(rf.get("/"), response))


def test_a_post_answer_is_private_whatever_the_view_said(rf):
    response = HttpResponse("page")
    patch_cache_control(response, public=True, s_maxage=60)
    assert private(edge.finish(rf.post("/"), response))


def test_answers_with_no_cache_control_are_private(client):
    response = client.get("/robots.txt")
    assert response.status_code == 200 and private(response)


# --- Purges: an outbox written with the change ----------------------------------------------


def test_no_backend_writes_no_purge(django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        workflow.unpublish_summary(summary=SummaryFactory(live=True))
    assert not CachePurge.objects.exists()


def test_a_publication_purges_its_page_and_every_list_that_shows_it(
    purging, django_capture_on_commit_callbacks
):
    summary = SummaryFactory()
    video = summary.video
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        workflow.publish_summary(summary=summary)
    (row,) = CachePurge.objects.all()
    assert set(row.tags.split()) >= {
        f"s{summary.pk}",
        f"v{video.pk}",
        f"lc{video.channel_id}",
        "home",
        "feeds",
        "sitemaps",
        "misc",
        "missing",
    }
    assert "all" not in row.tags.split()
    assert any(getattr(c, "__qualname__", "") == f"{purge.SEND_TASK}.delay" for c in callbacks)


def test_an_edit_going_live_and_an_unpublication_purge_the_summary(purging):
    summary = SummaryFactory(live=True, tldr="Before.")
    publish_edit(summary, tldr="After.")
    workflow.unpublish_summary(summary=summary)
    rows = list(CachePurge.objects.all())
    assert len(rows) >= 2
    assert all(f"s{summary.pk}" in row.tags.split() for row in rows[-2:])


def test_a_change_naming_no_tags_purges_everything(purging):
    content_changed()
    assert CachePurge.objects.get().tags == "all"


def test_a_scheduled_publication_is_purged_again_when_it_goes_live(purging):
    at = timezone.now() + datetime.timedelta(hours=2)
    summary = workflow.publish_summary(summary=SummaryFactory(), at=at)
    due = CachePurge.objects.filter(due_at=at).get()
    assert f"s{summary.pk}" in due.tags.split()
    assert purge.send(due.pk) is False, "not sent before it is due"
    assert CachePurge.objects.filter(pk=due.pk).exists()


def test_a_rename_purges_everything(purging, admin_client):
    channel = ChannelFactory(name="Old name")
    response = admin_client.post(
        f"/admin/summaries/channel/{channel.pk}/change/",
        {"name": "New name", "slug": channel.slug, "site_url": ""},
    )
    assert response.status_code == 302, response.content[:2000]
    assert CachePurge.objects.filter(tags="all").exists()


# --- Sending purges -----------------------------------------------------------------------


class _Cache(BaseHTTPRequestHandler):
    """A cache on loopback: records each PURGE's tags, answers with `status`."""

    status = 200
    seen: list[str] = []

    def do_PURGE(self):  # noqa: N802 - the handler's API
        type(self).seen.append(self.headers.get("xkey-purge", ""))
        self.send_response(type(self).status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def cache_server(settings):
    _Cache.seen = []
    _Cache.status = 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Cache)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.HTTP_CACHE_PURGE_BACKEND = "varnish"
    settings.HTTP_CACHE_PURGE_URLS = [f"http://127.0.0.1:{server.server_address[1]}/"]
    try:
        yield _Cache
    finally:
        server.shutdown()
        server.server_close()


def _row(tags: str = "s1 home") -> CachePurge:
    return CachePurge.objects.create(tags=tags, due_at=timezone.now())


def test_a_confirmed_purge_is_deleted(cache_server):
    row = _row()
    tasks.send_cache_purge(row.pk)
    assert cache_server.seen == ["home s1"]
    assert not CachePurge.objects.filter(pk=row.pk).exists()


@pytest.mark.parametrize("status", [403, 500, 503])
def test_a_purge_the_cache_does_not_confirm_is_kept_and_retried(cache_server, status):
    cache_server.status = status
    row = _row()
    with pytest.raises(purge.PurgeFailed):
        purge.send(row.pk)
    row.refresh_from_db()
    assert row.attempts == 1 and str(status) in row.last_error
    assert purge.PurgeFailed in tasks.send_cache_purge.autoretry_for


def test_an_unreachable_cache_keeps_the_purge(purging):
    row = _row()
    with pytest.raises(purge.PurgeFailed):
        purge.send(row.pk)
    assert CachePurge.objects.filter(pk=row.pk).exists()


def test_many_tags_go_in_several_requests(cache_server):
    tags = " ".join(f"v{n}" for n in range(450))
    tasks.send_cache_purge(_row(tags).pk)
    assert [len(seen.split()) for seen in cache_server.seen] == [200, 200, 50]


def test_the_sweeper_sends_purges_left_behind(cache_server, celery_eager):
    old = CachePurge.objects.create(
        tags="s1", due_at=timezone.now() - datetime.timedelta(minutes=1)
    )
    fresh = _row("s2")
    assert purge.sweep() == 1
    assert not CachePurge.objects.filter(pk=old.pk).exists()
    assert CachePurge.objects.filter(pk=fresh.pk).exists()
