"""The API's summary reads (built from plain rows: summaries/api/representation.py) answer
exactly what the serializers write: the same bytes, ETag and Last-Modified, for varied
summaries, for anonymous clients, editors and staff, with every ?expand= option."""

import datetime
import itertools

import pytest
from django.db.models import Exists, OuterRef
from django.test import RequestFactory
from django.utils import timezone
from django.utils.http import http_date
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIClient

from summaries.api.catalogue_serializers import VideoSerializer
from summaries.api.summary_serializers import SummaryListItemSerializer, SummarySerializer
from summaries.api.summary_views import (
    last_modified,
    summary_details,
    summary_list_items,
    summary_tag,
)
from summaries.editing import copies, derived
from summaries.models import Caveat, Correction, Source, Summary, Video
from summaries.models.access import can_see_unpublished
from summaries.pagecache.generation import content_changed

from .factories import (
    AppearanceFactory,
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    OrganisationFactory,
    SummaryFactory,
    TakeawayFactory,
    TopicFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

PIN = {
    "status": "paraphrase",
    "first": 3,
    "end": 9,
    "start": 12.5,
    "stop": 15.0,
    "said": "the words said",
    "score": 81.5,
    "reason": "Said in other words.",
    "suggested_time": None,
    "approved": {"by": "ed", "at": "2026-12-01T10:00:00Z"},
}
OVERRIDDEN = {
    "status": "not_found",
    "first": 0,
    "end": 0,
    "start": 0.0,
    "stop": 0.0,
    "override": {"by": "rev", "at": "2026-12-02T10:00:00Z", "note": "Said off camera."},
}


def rich(n: int, *, organisation=True, parts=True) -> Summary:
    """A live summary unlike the others: people with and without organisations, topics,
    every kind of part (pinned or not), caveats on each kind of part, citations with and
    without key phrases, sources checked or not, non-ASCII text."""
    summary = SummaryFactory(
        live=True,
        video__title=f"Vidéo {n} — “quoted”",
        video__blurb="Un résumé ✓" if n % 2 else "",
        video__thumbnail_url="https://img.example/t.jpg" if n % 3 == 0 else "",
        tldr=f"In short ({n}): 2× faster. 日本語",
    )
    video = summary.video
    AppearanceFactory(video=video, organisation=OrganisationFactory() if organisation else None)
    AppearanceFactory(video=video, position=2)
    for m in range(n % 3):
        video.topics.add(TopicFactory(name=f"Topic {n}-{m}"))
    if not parts:
        return summary
    point = KeyPointFactory(summary=summary, body="See [the paper](https://paper.example/a).")
    takeaway = TakeawayFactory(summary=summary, text="Use [it](https://tool.example/x)", time=90)
    chapter = ChapterFactory(
        summary=summary,
        start_time=30 if n % 2 else None,
        synopsis="Two sentences.",
        body=(
            "[Source](https://example.org/page) says it is 2 times faster. "
            "[Other](https://other.example/p?utm_source=x) agrees with the claim made."
        ),
    )
    ChapterFactory(summary=summary, body=f"Plain text {n}.")
    Caveat.objects.create(summary=summary, chapter=chapter, text="Careful.", position=1)
    Caveat.objects.create(summary=summary, takeaway=takeaway, text="*Also*.", position=2)
    Caveat.objects.create(summary=summary, key_point=point, claim="2×", text="Hm.", position=3)
    derived.refresh_derived_data(summary=summary)
    if n % 2:
        type(point).objects.filter(pk=point.pk).update(pin=PIN)
        type(takeaway).objects.filter(pk=takeaway.pk).update(pin=OVERRIDDEN)
        quote = {**PIN, "quote": "a quotation", "speaker": "Ada"}
        type(chapter).objects.filter(pk=chapter.pk).update(pin=PIN, quote_pins=[quote])
    checked = timezone.now() - datetime.timedelta(days=n)
    Source.objects.filter(citations__summary=summary, url__contains="example.org").update(
        state="ok",
        status_code=200,
        title="The page",
        content_type="text/html",
        response_ms=120,
        redirect_chain=[["https://example.org/old", 301]],
        final_url="https://example.org/page",
        last_checked_at=checked,
    )
    summary.citations.filter(url__contains="other").update(
        key_phrase="", verdict="found", verdict_checked_at=checked, confirmed_at=checked
    )
    return summary


@pytest.fixture
def summaries():
    made = [rich(n) for n in range(1, 5)]
    made.append(rich(5, organisation=False, parts=False))
    # Editors' extras: a working copy, a review note, a reviewer, a draft, published changes.
    copies.edit_target(summary=made[0], user=None)
    reviewer = UserFactory(username="reviewer-1", is_staff=True)
    Summary.objects.filter(pk=made[1].pk).update(review_note="Fix the title.", assigned_to=reviewer)
    made.append(SummaryFactory(video__title="A draft"))
    Correction.objects.create(
        summary=made[0],
        kind=Correction.Kind.CORRECTION,
        note="We got the number wrong.",
        published_at=timezone.now(),
        changes=[{"label": "Title", "old": [["a", True]], "new": [["b", True]]}],
    )
    content_changed()
    return made


def _users():
    staff = UserFactory(username="staff-only", is_staff=True)
    return {"anonymous": None, "editor": EditorFactory(), "staff": staff}


def _client(user):
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


def _drf_request(path, user):
    request = Request(RequestFactory().get(path, HTTP_HOST="testserver"))
    if user is not None:
        request.user = user
    return request


def _view_queryset(user):
    """Summaries as the view reads them for `user` (editors: whether each has changes)."""
    if not can_see_unpublished(user):
        return Summary.objects.originals()
    changes = Summary.objects.filter(working_copy_of=OuterRef("pk"))
    return Summary.objects.originals().annotate(has_working_copy=Exists(changes))


def _old_detail(summary, path, user):
    """The detail as SummarySerializer writes it: (bytes, ETag, Last-Modified)."""
    loaded = summary_details(_view_queryset(user)).get(pk=summary.pk)
    request = _drf_request(path, user)
    data = SummarySerializer(loaded, context={"request": request, "view": None}).data
    return (
        JSONRenderer().render(data),
        summary_tag(loaded, data),
        http_date(last_modified(loaded).timestamp()),
    )


DETAIL_QUERIES = ["", "?expand=pins", "?expand=corrections", "?expand=pins,corrections"]


@pytest.mark.parametrize("who", ["anonymous", "editor", "staff"])
def test_the_detail_is_what_the_serializer_writes(summaries, who):
    user = _users()[who]
    client = _client(user)
    live = [s for s in summaries if s.status == Summary.Status.PUBLISHED]
    for summary, query in itertools.product(live, [*DETAIL_QUERIES, "?format=json"]):
        path = f"/api/v1/summaries/{summary.video.slug}/{query}"
        response = client.get(path)
        assert response.status_code == 200, path
        content, etag, modified = _old_detail(summary, path, user)
        assert response.content == content, path
        assert response["ETag"] == etag, path
        assert response["Last-Modified"] == modified, path


def test_the_detail_follows_the_current_time_zone(summaries, settings):
    settings.TIME_ZONE = "Europe/Paris"
    summary = summaries[1]
    path = f"/api/v1/summaries/{summary.video.slug}/"
    response = _client(None).get(path)
    assert response.content == _old_detail(summary, path, None)[0]
    assert b"+01:00" in response.content


LIST_QUERIES = [
    "",
    "?expand=key_points",
    "?expand=citations,chapters",
    "?expand=key_points,takeaways,chapters,caveats,citations",
    "?ordering=updated_at&page_size=2",
]


@pytest.mark.parametrize("who", ["anonymous", "editor", "staff"])
@pytest.mark.parametrize("query", LIST_QUERIES)
def test_list_items_are_what_the_serializer_writes(summaries, who, query):
    user = _users()[who]
    path = f"/api/v1/summaries/{query}"
    response = _client(user).get(path)
    assert response.status_code == 200
    request = _drf_request(path, user)
    body = response.json()
    slugs = [item["slug"] for item in body["results"]]
    assert slugs  # every case lists something
    expand = tuple(request.query_params.get("expand", "").split(",")) if "expand" in path else ()
    by_slug = {s.video.slug: s for s in summary_list_items(_view_queryset(user), expand)}
    page = [by_slug[slug] for slug in slugs]
    context = {"request": request, "view": None, "expand": expand}
    old = SummaryListItemSerializer(page, many=True, context=context).data
    assert JSONRenderer().render(body["results"]) == JSONRenderer().render(old)


def test_editors_list_drafts_and_working_copies_are_flagged(summaries):
    body = _client(EditorFactory()).get("/api/v1/summaries/").json()
    by_slug = {item["slug"]: item for item in body["results"]}
    assert by_slug[summaries[0].video.slug]["unpublished_changes"].endswith("/working-copy/")
    assert by_slug[summaries[-1].video.slug]["status"] == "draft"


VIDEO_QUERIES = ["", "?ordering=title&page_size=3", "?language=en", "?search=Vid%C3%A9o"]


@pytest.mark.parametrize("who", ["anonymous", "editor"])
@pytest.mark.parametrize("query", VIDEO_QUERIES)
def test_video_list_items_are_what_the_serializer_writes(summaries, who, query):
    user = _users()[who]
    path = f"/api/v1/videos/{query}"
    response = _client(user).get(path)
    assert response.status_code == 200
    body = response.json()
    slugs = [item["slug"] for item in body["results"]]
    assert slugs
    by_slug = {video.slug: video for video in Video.objects.with_listing_data()}
    context = {"request": _drf_request(path, user), "view": None}
    old = VideoSerializer([by_slug[slug] for slug in slugs], many=True, context=context).data
    assert JSONRenderer().render(body["results"]) == JSONRenderer().render(old)


def test_the_detail_answers_404_to_drafts_and_to_filters_that_leave_it_out(summaries):
    client = _client(None)
    draft = summaries[-1]
    assert client.get(f"/api/v1/summaries/{draft.video.slug}/").status_code == 404
    live = summaries[1]
    path = f"/api/v1/summaries/{live.video.slug}/"
    assert client.get(f"{path}?channel={live.video.channel.slug}").status_code == 200
    assert client.get(f"{path}?channel=another-channel").status_code == 404
    response = client.get(f"{path}?language=xx")
    assert response.status_code == 400
    assert "language" in response.json()["error"]["fields"]
