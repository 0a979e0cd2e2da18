"""Who sees and does what: anonymous / signed-in reader / editor / admin, for every endpoint,
on drafts, summaries in review, scheduled and live ones. Hidden means 404 everywhere."""

import datetime

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from summaries.models import Summary

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    EditorFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

USERS = ["anonymous", "reader", "editor", "admin"]
STATES = ["draft", "review", "scheduled", "live"]


def make_user(kind):
    if kind == "anonymous":
        return None
    if kind == "reader":
        return UserFactory()
    if kind == "editor":
        return EditorFactory()
    return UserFactory(is_staff=True, is_superuser=True)


def make_summary(state, **kwargs):
    if state == "live":
        return SummaryFactory(live=True, **kwargs)
    if state == "scheduled":
        tomorrow = timezone.now() + datetime.timedelta(days=1)
        return SummaryFactory(status="published", publish_at=tomorrow, **kwargs)
    return SummaryFactory(status="review" if state == "review" else "draft", **kwargs)


@pytest.fixture
def world():
    """One summary in each state, all sharing a channel, a person and a topic."""
    channel, person, topic = ChannelFactory(), PersonFactory(), TopicFactory()
    summaries = {}
    for state in STATES:
        summary = make_summary(state, video__channel=channel, video__title=f"{state} quantum")
        summary.video.topics.add(topic)
        AppearanceFactory(video=summary.video, person=person)
        summary.search_document = f"{state} quantum"
        summary.save()
        summaries[state] = summary
    return {"channel": channel, "person": person, "topic": topic, "summaries": summaries}


def client_for(kind):
    client = APIClient()
    user = make_user(kind)
    if user is not None:
        client.force_authenticate(user)
    return client


def sees_unpublished(kind):
    return kind in ("editor", "admin")


@pytest.mark.parametrize("kind", USERS)
def test_reads(world, kind):
    client = client_for(kind)
    listed = {
        item["slug"] for item in client.get("/api/v1/summaries/?page_size=100").json()["results"]
    }
    videos = {item["slug"] for item in client.get("/api/v1/videos/").json()["results"]}
    for state, summary in world["summaries"].items():
        slug = summary.video.slug
        visible = state == "live" or sees_unpublished(kind)
        expected = 200 if visible else 404
        assert client.get(f"/api/v1/summaries/{slug}/").status_code == expected, (kind, state)
        assert client.get(f"/api/v1/videos/{slug}/").status_code == expected, (kind, state)
        related = client.get(f"/api/v1/videos/{slug}/related/")
        assert related.status_code == expected, (kind, state)
        if visible:
            # Related videos are live ones only, whoever asks.
            assert {r["video"]["slug"] for r in related.json()} <= {
                world["summaries"]["live"].video.slug
            }
        assert (slug in listed) is visible, (kind, state)
        assert (slug in videos) is visible, (kind, state)
        for action in ("publish", "unpublish", "submit-for-review", "recheck-sources"):
            # Actions are POST only: reading them is a 405 for everyone who can see it.
            response = client.get(f"/api/v1/summaries/{slug}/{action}/")
            assert response.status_code == 405, (kind, state, action)
    for name, prefix in (("channel", "channels"), ("person", "people"), ("topic", "topics")):
        assert client.get(f"/api/v1/{prefix}/{world[name].slug}/").status_code == 200
    # Filters and search never reveal what the client may not see.
    for query in (
        f"channel={world['channel'].slug}",
        f"person={world['person'].slug}",
        f"topic={world['topic'].slug}",
        "status=draft",
    ):
        found = {
            item["slug"] for item in client.get(f"/api/v1/summaries/?{query}").json()["results"]
        }
        if not sees_unpublished(kind):
            assert found <= {world["summaries"]["live"].video.slug}, query
    searched = client.get("/api/v1/summaries/?search=quantum").json()["results"]
    assert [item["slug"] for item in searched] == [world["summaries"]["live"].video.slug]


WRITE_STATUS = {"anonymous": 401, "reader": 403}


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("kind", USERS)
def test_writes(world, kind, state):
    """Editors write and submit; only reviewers (here the admin) publish and unpublish.

    A published summary is written through its working copy: readers keep its text.
    """
    client = client_for(kind)
    summary = world["summaries"][state]
    url = f"/api/v1/summaries/{summary.video.slug}/"
    refused = WRITE_STATUS.get(kind)
    published = state in ("scheduled", "live")

    response = client.patch(url, {"tldr": "Changed."}, HTTP_IF_MATCH="*")
    assert response.status_code == (refused or 200), response.json()
    if not refused:
        summary.refresh_from_db()
        assert (summary.tldr == "Changed.") is not published  # the copy holds it

    response = client.post(f"{url}recheck-sources/")
    assert response.status_code == (refused or 202)

    response = client.post(f"{url}submit-for-review/", HTTP_IF_MATCH="*")
    assert response.status_code == (refused or 200)

    reviewer_only = refused or (403 if kind == "editor" else None)
    response = client.post(f"{url}publish/", HTTP_IF_MATCH="*")
    assert response.status_code == (reviewer_only or 200)
    response = client.post(f"{url}unpublish/", HTTP_IF_MATCH="*")
    assert response.status_code == (reviewer_only or 200)

    # Deleting is not supported at all: 405 whoever asks.
    assert client.delete(url).status_code == 405

    summary.refresh_from_db()
    if refused:
        assert summary.tldr != "Changed."
    elif kind == "editor":
        changed = Summary.objects.filter(working_copy_of=summary).first() or summary
        assert changed.tldr == "Changed." and changed.status == "review"
    else:  # published, then taken back to draft: the changes are the draft's text now
        assert summary.tldr == "Changed." and summary.status == "draft"
        assert not Summary.objects.filter(working_copy_of=summary).exists()


@pytest.mark.parametrize("kind", USERS)
def test_create(kind):
    channel = ChannelFactory()
    payload = {
        "video": {
            "slug": "new-video",
            "title": "New video",
            "channel": channel.slug,
            "source_url": "https://example.com/v/1",
            "duration": 600,
            "published_on": "2026-10-01",
        },
        "tldr": "Thirty seconds.",
    }
    response = client_for(kind).post("/api/v1/summaries/", payload)
    assert response.status_code == WRITE_STATUS.get(kind, 201), response.json()
    assert Summary.objects.exists() is (kind not in WRITE_STATUS)
    # Catalogue endpoints: editors create; others are refused as for summaries.
    response = client_for(kind).post("/api/v1/channels/", {"name": "x", "slug": "x"})
    assert response.status_code == WRITE_STATUS.get(kind, 201)


def test_inactive_staff_is_not_an_editor(world):
    editor = EditorFactory(is_active=False)
    client = APIClient()
    client.force_authenticate(editor)
    draft = world["summaries"]["draft"]
    assert client.get(f"/api/v1/summaries/{draft.video.slug}/").status_code == 404
