"""A summary as it was on a date (Memento, RFC 7089): TimeGate, TimeMap and past versions.

Only states readers saw appear: drafts, working copies, reviewers' notes and publications
scheduled for a time that never came are never listed, redirected to or served.
"""

import datetime
import io
import re

import pytest
import time_machine
from django.core.management import call_command
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries.editing import copies, save, workflow
from summaries.models import Chapter, PublishedVersion, Summary

from .factories import ChapterFactory, EditorFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db

UTC = datetime.UTC
START = datetime.datetime(2026, 1, 5, 9, 30, 0, tzinfo=UTC)
NEVER_LIVE = "never live"
# An HTTP date as RFC 7089 writes them (RFC 1123): "Tue, 11 Sep 2001 20:35:00 GMT".
HTTP_DATE = re.compile(r"^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$")
# One link of a Link header or a TimeMap: <uri>; rel="…"; name="value"…
LINK = re.compile(r'^<(?P<uri>[^>]+)>((\s*;\s*[a-z]+="[^"]*")+)$')


def version_time(number: int) -> datetime.datetime:
    """When version `number` (1 to n) of the history goes live: a day apart, at 09:30."""
    return START + datetime.timedelta(days=number - 1)


def edit(summary: Summary, tldr: str, chapter_title: str) -> Summary:
    """Change a published summary the one way there is: its working copy."""
    copy, _ids, _made = copies.edit_target(summary=summary, user=None)
    copy.tldr = tldr
    chapters = list(Chapter.objects.filter(summary=copy).order_by("position"))
    chapters[0].title = chapter_title
    save.save_summary(summary=copy, parts={Chapter: chapters}, user=None)
    return copy


def build_history(count: int) -> Summary:
    """A summary published `count` times (first publication, then changes), with drafts
    before it, and, between versions, working copies that were discarded, sent back
    with a reviewer's note, or scheduled for a time that never came."""
    with time_machine.travel(START - datetime.timedelta(days=2), tick=False):
        summary = SummaryFactory(tldr=f"Draft words, {NEVER_LIVE}.")
        ChapterFactory(summary=summary, position=1, title="Draft chapter", body="Words.")
        summary.tldr = f"Another draft, {NEVER_LIVE}."
        save.save_summary(summary=summary, parts={}, user=None)
        workflow.submit_for_review(summary=summary, user=None)
        workflow.send_back(summary=summary, user=None, note=f"First note, {NEVER_LIVE}.")
        summary.refresh_from_db()
        summary.tldr = "Version 1 words."
        Chapter.objects.filter(summary=summary).update(title="Chapter of version 1")
        save.save_summary(summary=summary, parts={}, user=None)
    with time_machine.travel(version_time(1), tick=False):
        workflow.publish_summary(summary=summary, user=None)
    for number in range(2, count + 1):
        before = version_time(number) - datetime.timedelta(hours=6)
        with time_machine.travel(before, tick=False):
            _unseen_work(summary, number)
        with time_machine.travel(version_time(number), tick=False):
            edit(summary, f"Version {number} words.", f"Chapter of version {number}")
            copies.publish_changes(summary=summary, user=None)
    # Unpublished changes waiting now: never a version either.
    edit(summary, f"Working copy words, {NEVER_LIVE}.", f"Working copy chapter, {NEVER_LIVE}")
    summary.refresh_from_db()
    return summary


def _unseen_work(summary: Summary, number: int) -> None:
    if number % 3 == 0:
        edit(summary, f"Discarded words, {NEVER_LIVE}.", f"Discarded, {NEVER_LIVE}")
        copies.discard_changes(summary=summary, user=None)
    elif number % 3 == 1:
        copy = edit(summary, f"Sent back words, {NEVER_LIVE}.", f"Sent back, {NEVER_LIVE}")
        workflow.submit_for_review(summary=copy, user=None)
        workflow.send_back(summary=summary, user=None, note=f"Reviewer note, {NEVER_LIVE}.")
        copies.discard_changes(summary=summary, user=None)
    else:
        # Scheduled for a time after the next version: replaced by it, never live.
        edit(summary, f"Scheduled words, {NEVER_LIVE}.", f"Scheduled, {NEVER_LIVE}")
        at = version_time(number) + datetime.timedelta(hours=3)
        copies.publish_changes(summary=summary, user=None, at=at)


@pytest.fixture
def history():
    return build_history(50)


@pytest.fixture
def short_history():
    return build_history(3)


def links(header: str) -> list[dict[str, str]]:
    """A Link header (or a TimeMap) as one dict per link: uri, rel and its parameters,
    each link checked against the shape of the RFC's examples."""
    found = []
    for item in re.split(r",\s*(?=<)", header.strip()):
        match = LINK.match(item.strip())
        assert match, f"not a link in the RFC's shape: {item!r}"
        params = dict(re.findall(r'([a-z]+)="([^"]*)"', match.group(2)))
        found.append({"uri": match.group("uri"), **params})
    return found


def by_rel(found: list[dict[str, str]], rel: str) -> list[dict[str, str]]:
    return [link for link in found if rel in link["rel"].split()]


def memento_path(summary: Summary, moment: datetime.datetime) -> str:
    return f"/videos/{summary.video.slug}/versions/{moment:%Y%m%d%H%M%S}/"


def timemap_path(summary: Summary) -> str:
    return f"/videos/{summary.video.slug}/timemap/"


def accept(moment: datetime.datetime) -> dict[str, str]:
    return {"HTTP_ACCEPT_DATETIME": moment.strftime("%a, %d %b %Y %H:%M:%S GMT")}


def test_the_timemap_lists_every_published_version_and_nothing_else(client, history):
    response = client.get(timemap_path(history))

    assert response.status_code == 200
    assert response["Content-Type"] == "application/link-format"
    found = links(response.content.decode())
    original = f"http://testserver{history.video.get_absolute_url()}"
    assert found[0] == {"uri": original, "rel": "original timegate"}
    assert found[1] == {
        "uri": f"http://testserver{timemap_path(history)}",
        "rel": "self",
        "type": "application/link-format",
        "from": "Mon, 05 Jan 2026 09:30:00 GMT",
        "until": "Mon, 23 Feb 2026 09:30:00 GMT",
    }
    mementos = by_rel(found, "memento")
    expected = [version_time(number) for number in range(1, 51)]
    assert [m["uri"] for m in mementos] == [
        f"http://testserver{memento_path(history, moment)}" for moment in expected
    ]
    assert [m["datetime"] for m in mementos] == [
        moment.strftime("%a, %d %b %Y %H:%M:%S GMT") for moment in expected
    ]
    assert mementos[0]["rel"] == "first memento"
    assert mementos[-1]["rel"] == "last memento"
    assert {m["rel"] for m in mementos[1:-1]} == {"memento"}


def test_each_version_shows_what_readers_saw_then_and_no_unpublished_work(client, history):
    for number in range(1, 51):
        response = client.get(memento_path(history, version_time(number)))
        assert response.status_code == 200
        page = response.content.decode()
        assert f"Version {number} words." in page
        assert f"Chapter of version {number}<" in page
        assert NEVER_LIVE not in page
        assert "You are reading this summary as it was on" in page
    stored = " ".join(PublishedVersion.objects.values_list("html", flat=True))
    assert NEVER_LIVE not in stored


def test_the_timegate_redirects_to_the_version_live_at_the_date(client, history):
    url = history.video.get_absolute_url()
    cases = [
        (version_time(17) + datetime.timedelta(hours=5), 17),  # between two versions
        (version_time(17), 17),  # the very second it went live
        (version_time(17) - datetime.timedelta(seconds=1), 16),
        # Within hours of a scheduled change that never went live: still version 23.
        (version_time(24) - datetime.timedelta(hours=2), 23),
        (START - datetime.timedelta(days=400), 1),  # before the first: the first
        (version_time(50) + datetime.timedelta(days=300), 50),  # after the last: the last
    ]
    for wanted, number in cases:
        response = client.get(url, **accept(wanted))
        assert response.status_code == 302, wanted
        assert response["Location"] == (
            f"http://testserver{memento_path(history, version_time(number))}"
        ), wanted
        assert "accept-datetime" in response["Vary"].lower()


def test_the_timegate_answers_as_the_rfc_shows(client, short_history):
    """RFC 7089 4.1.1: 302, Vary: accept-datetime, Location, and a Link header naming
    the original (its own TimeGate), the TimeMap and mementos with their datetimes."""
    url = short_history.video.get_absolute_url()

    response = client.head(url, **accept(version_time(2) + datetime.timedelta(minutes=1)))

    assert response.status_code == 302
    assert response.content == b""
    found = links(response["Link"])
    assert by_rel(found, "original") == [
        {"uri": f"http://testserver{url}", "rel": "original timegate"}
    ]
    assert by_rel(found, "timemap")[0]["type"] == "application/link-format"
    chosen = [link for link in found if link["uri"] == response["Location"]]
    assert chosen == [
        {
            "uri": response["Location"],
            "rel": "memento",
            "datetime": "Tue, 06 Jan 2026 09:30:00 GMT",
        }
    ]
    assert [link["rel"] for link in by_rel(found, "memento")] == [
        "first memento",
        "memento",
        "last memento",
    ]


def test_a_memento_answers_as_the_rfc_shows(client, short_history):
    """RFC 7089 4.1.2: Memento-Datetime, and Link to the original, its TimeGate, the
    TimeMap, and the first, previous, next and last mementos."""
    response = client.get(memento_path(short_history, version_time(2)))

    assert response.status_code == 200
    assert response["Memento-Datetime"] == "Tue, 06 Jan 2026 09:30:00 GMT"
    assert HTTP_DATE.match(response["Memento-Datetime"])
    found = links(response["Link"])
    rels = {link["rel"]: link for link in found}
    assert rels["original timegate"]["uri"].endswith(short_history.video.get_absolute_url())
    assert rels["timemap"]["type"] == "application/link-format"
    assert rels["first prev memento"]["datetime"] == "Mon, 05 Jan 2026 09:30:00 GMT"
    assert rels["memento"]["uri"].endswith(memento_path(short_history, version_time(2)))
    assert rels["last next memento"]["datetime"] == "Wed, 07 Jan 2026 09:30:00 GMT"
    assert all(HTTP_DATE.match(link["datetime"]) for link in by_rel(found, "memento"))
    page = response.content.decode()
    assert '<meta name="robots" content="noindex, nofollow">' in page
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    assert "Memento-Datetime" not in client.get(short_history.video.get_absolute_url())


def test_the_live_page_names_its_timegate_and_timemap(client, short_history):
    url = short_history.video.get_absolute_url()

    for _ in range(2):  # rendered, then from the page cache: the same headers
        response = client.get(url)
        assert response.status_code == 200
        assert "accept-datetime" in response["Vary"].lower()
        assert links(response["Link"]) == [
            {"uri": f"http://testserver{url}", "rel": "original timegate"},
            {
                "uri": f"http://testserver{timemap_path(short_history)}",
                "rel": "timemap",
                "type": "application/link-format",
            },
        ]
    # A page in the cache is not what a TimeGate request gets.
    assert client.get(url, **accept(version_time(1))).status_code == 302


def test_mementos_answer_conditional_and_head_requests(client, short_history):
    path = memento_path(short_history, version_time(1))
    first = client.get(path)

    again = client.get(path, HTTP_IF_NONE_MATCH=first["ETag"])
    head = client.head(path)

    assert again.status_code == 304
    assert head.status_code == 200
    assert head.content == b""
    assert head["Memento-Datetime"] == "Mon, 05 Jan 2026 09:30:00 GMT"
    assert client.head(timemap_path(short_history)).status_code == 200
    assert client.post(path).status_code == 405


@pytest.mark.parametrize(
    "value",
    ["yesterday", "", "2026-01-05T09:30:00Z", "Mon, 32 Jan 2026 09:30:00 GMT", "Mon, 05 Jan"],
)
def test_an_unreadable_accept_datetime_is_a_clear_400(client, short_history, value):
    response = client.get(short_history.video.get_absolute_url(), HTTP_ACCEPT_DATETIME=value)

    assert response.status_code == 400
    assert "Accept-Datetime" in response.content.decode()
    assert "accept-datetime" in response["Vary"].lower()


def test_an_unpublished_summary_answers_404_for_all_of_it(client, short_history):
    paths = [timemap_path(short_history), memento_path(short_history, version_time(2))]
    assert all(client.get(path).status_code == 200 for path in paths)

    workflow.unpublish_summary(summary=short_history, user=None)

    for path in paths:
        assert client.get(path).status_code == 404
    url = short_history.video.get_absolute_url()
    assert client.get(url, **accept(version_time(2))).status_code == 404


def test_a_draft_never_published_has_no_versions(client):
    draft = SummaryFactory(tldr="Draft words.")
    ChapterFactory(summary=draft, position=1)
    url = draft.video.get_absolute_url()

    assert client.get(timemap_path(draft)).status_code == 404
    assert client.get(url, **accept(START)).status_code == 404
    assert not PublishedVersion.objects.exists()


def test_a_scheduled_publication_is_a_version_only_once_its_time_comes(client):
    summary = SummaryFactory(tldr="Scheduled words.")
    ChapterFactory(summary=summary, position=1)
    now = timezone.now().replace(microsecond=0)
    first, second = now + datetime.timedelta(hours=2), now + datetime.timedelta(hours=5)
    workflow.publish_summary(summary=summary, user=None, at=first)
    workflow.publish_summary(summary=summary, user=None, at=second)  # rescheduled

    assert client.get(timemap_path(summary)).status_code == 404
    with time_machine.travel(second + datetime.timedelta(minutes=1), tick=False):
        found = links(client.get(timemap_path(summary)).content.decode())
    assert [m["datetime"] for m in by_rel(found, "memento")] == [
        second.strftime("%a, %d %b %Y %H:%M:%S GMT")
    ]


def test_a_scheduled_publication_taken_back_leaves_nothing(client):
    summary = SummaryFactory(tldr="Scheduled words.")
    at = timezone.now() + datetime.timedelta(hours=2)
    workflow.publish_summary(summary=summary, user=None, at=at)

    workflow.unpublish_summary(summary=summary, user=None)

    assert not PublishedVersion.objects.exists()


def test_scheduled_changes_are_a_version_from_when_they_went_live(client, short_history):
    now = timezone.now().replace(microsecond=0)
    edit(short_history, "Scheduled change words.", "Scheduled chapter")
    copies.publish_changes(summary=short_history, user=None, at=now + datetime.timedelta(hours=1))
    assert PublishedVersion.objects.filter(live_from__gt=now).count() == 0

    went_live = now + datetime.timedelta(hours=1, seconds=42)
    with time_machine.travel(went_live, tick=False):
        copies.publish_due_changes()
        response = client.get(short_history.video.get_absolute_url(), **accept(went_live))
        page = client.get(memento_path(short_history, went_live)).content.decode()
    assert response["Location"].endswith(memento_path(short_history, went_live))
    assert "Scheduled change words." in page


def test_an_address_that_is_no_version_answers_404(client, short_history):
    slug = short_history.video.slug
    between = version_time(1) + datetime.timedelta(hours=1)
    for moment in (f"{between:%Y%m%d%H%M%S}", "2026", "99999999999999", "yesterday"):
        assert client.get(f"/videos/{slug}/versions/{moment}/").status_code == 404
    assert client.get("/videos/no-such-video/timemap/").status_code == 404


def test_query_counts_of_the_timemap_a_memento_and_the_timegate(
    client, short_history, django_assert_num_queries
):
    timemap, version = timemap_path(short_history), memento_path(short_history, version_time(2))
    page = short_history.video.get_absolute_url()
    # With a session cookie the page cache is passed by: what a first reader costs.
    with django_assert_num_queries(1):
        assert client.get(timemap, HTTP_COOKIE="sessionid=x").status_code == 200
    with django_assert_num_queries(2):
        assert client.get(version, HTTP_COOKIE="sessionid=x").status_code == 200
    wanted = accept(version_time(2))
    with django_assert_num_queries(2):
        assert client.get(page, HTTP_COOKIE="sessionid=x", **wanted).status_code == 302


def api_versions(summary) -> str:
    return f"/api/v1/summaries/{summary.video.slug}/versions/"


def test_the_api_lists_the_published_versions_with_their_addresses(client, short_history):
    response = client.get(api_versions(short_history))

    assert response.status_code == 200
    page = f"http://testserver{short_history.video.get_absolute_url()}"
    assert response.json() == {
        "original": page,
        "timemap": f"http://testserver{timemap_path(short_history)}",
        "versions": [
            {
                "datetime": f"{version_time(n):%Y-%m-%dT%H:%M:%SZ}",
                "url": f"http://testserver{memento_path(short_history, version_time(n))}",
            }
            for n in (1, 2, 3)
        ],
    }


@pytest.mark.parametrize("who", [None, EditorFactory, ReviewerFactory])
def test_the_api_answers_404_for_a_summary_that_is_not_live(short_history, who):
    api = APIClient()
    if who is not None:
        api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=who()).key}")
    draft = SummaryFactory()
    workflow.unpublish_summary(summary=short_history, user=None)

    for summary in (draft, short_history):
        response = api.get(api_versions(summary))
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"


def test_summaries_published_before_versions_get_their_current_one(client):
    with time_machine.travel(START, tick=False):
        summary = SummaryFactory(live=True, tldr="Published long ago.")
        ChapterFactory(summary=summary, position=1)
    later = START + datetime.timedelta(days=3)
    with time_machine.travel(later, tick=False):
        edit(summary, "Changed since.", "Chapter changed since")
        copies.publish_changes(summary=summary, user=None)
    PublishedVersion.objects.all().delete()  # as before versions were recorded

    call_command("record_live_versions", stdout=io.StringIO())
    call_command("record_live_versions", stdout=io.StringIO())

    assert list(PublishedVersion.objects.values_list("live_from", flat=True)) == [later]
    page = client.get(memento_path(summary, later)).content.decode()
    assert "Changed since." in page
