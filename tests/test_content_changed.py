"""Every write path makes cached pages stale, through one explicit call (no save signals).

Each case performs one write the way its user does (the admin, the API, a service, a task
or a command) and checks that the content generation moved, which is what makes every
stored page and fragment stale.
"""

import contextlib

import pytest
from django.db import connection, transaction
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries import checking, tasks
from summaries.demo import load_demo
from summaries.editing import workflow
from summaries.linkcheck import CheckResult, State
from summaries.models import Channel, Person, Source, Summary, Video
from summaries.pagecache import generation
from summaries.pagecache.generation import content_changed, current_generation
from summaries.reader import related, related_bulk

from .admin_forms import form_fields
from .factories import (
    ChannelFactory,
    ChapterFactory,
    EditorFactory,
    OrganisationFactory,
    PersonFactory,
    ReviewerFactory,
    SummaryFactory,
    TopicFactory,
    VideoFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(EditorFactory(is_superuser=True))
    return client


@pytest.fixture
def api():
    client = APIClient()
    reviewer = ReviewerFactory()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=reviewer).key}")
    return client


def admin_save(client, obj, changes, form_id):
    name = obj._meta.model_name
    url = reverse(f"admin:summaries_{name}_change", args=[obj.pk])
    data = {**form_fields(client.get(url), form_id=form_id), **changes}
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]


def admin_summary_edit(client, api):
    summary = SummaryFactory()
    admin_save(client, summary, {"tldr": "New words."}, "summary_form")


def admin_publish_changes(client, api):
    """Edits to a live summary are unpublished changes: pages change when they go live."""
    summary = SummaryFactory(live=True)
    admin_save(client, summary, {"tldr": "New words."}, "summary_form")
    before = current_generation()
    admin_save(client, summary, {"_publish": "Publish changes"}, "summary_form")
    assert current_generation() != before
    assert Summary.objects.get(pk=summary.pk).tldr == "New words."


def admin_channel_rename(client, api):
    admin_save(client, ChannelFactory(), {"name": "Renamed"}, "channel_form")


def admin_person_rename(client, api):
    admin_save(client, PersonFactory(), {"name": "Renamed"}, "person_form")


def admin_topic_rename(client, api):
    admin_save(client, TopicFactory(), {"name": "Renamed"}, "topic_form")


def admin_organisation_rename(client, api):
    admin_save(client, OrganisationFactory(), {"name": "Renamed"}, "organisation_form")


def admin_video_edit(client, api):
    admin_save(client, VideoFactory(), {"title": "Retitled"}, "video_form")


def admin_video_delete(client, api):
    video = VideoFactory()
    url = reverse("admin:summaries_video_delete", args=[video.pk])
    assert client.post(url, {"post": "yes"}).status_code == 302


def admin_summary_delete(client, api):
    summary = SummaryFactory(live=True)
    url = reverse("admin:summaries_summary_delete", args=[summary.pk])
    assert client.post(url, {"post": "yes"}).status_code == 302
    assert not Summary.objects.exists()


def admin_delete_action(client, api):
    video = VideoFactory()
    changelist = reverse("admin:summaries_video_changelist")
    data = {"action": "delete_selected", "_selected_action": [video.pk], "post": "yes"}
    assert client.post(changelist, data).status_code == 302
    assert not Video.objects.filter(pk=video.pk).exists()


def admin_publish_action(client, api):
    summary = SummaryFactory()
    changelist = reverse("admin:summaries_summary_changelist")
    client.post(changelist, {"action": "publish_now", "_selected_action": [summary.pk]})
    assert Summary.objects.get(pk=summary.pk).is_live()


def api_channel_create(client, api):
    response = api.post("/api/v1/channels/", {"name": "New", "slug": "new"}, format="json")
    assert response.status_code == 201


def api_person_update(client, api):
    person = PersonFactory()
    url = f"/api/v1/people/{person.slug}/"
    tag = api.get(url)["ETag"]
    response = api.patch(url, {"name": "Renamed"}, format="json", HTTP_IF_MATCH=tag)
    assert response.status_code == 200


def api_summary_publish(client, api):
    summary = SummaryFactory()
    url = f"/api/v1/summaries/{summary.video.slug}/"
    tag = api.get(url)["ETag"]
    response = api.post(f"{url}publish/", {}, format="json", HTTP_IF_MATCH=tag)
    assert response.status_code == 200


def service_unpublish(client, api):
    workflow.unpublish_summary(summary=SummaryFactory(live=True))


def service_submit_for_review(client, api):
    workflow.submit_for_review(summary=SummaryFactory())


def task_rerender(client, api):
    tasks.rerender_summary(ChapterFactory().summary_id)


def service_confirm_citation(client, api):
    chapter = ChapterFactory(body="It is 2.5 times faster [a](https://example.com/a).")
    workflow_summary = chapter.summary
    admin_save(client, workflow_summary, {}, "summary_form")  # citations extracted
    source = Source.objects.get()
    Source.objects.filter(pk=source.pk).update(state="ok", fingerprint="f")
    citation = workflow_summary.citations.select_related("source").get()
    before = current_generation()
    checking.confirm_citation(citation=citation)
    assert current_generation() != before


def service_record_changed_check(client, api):
    source = Source.objects.create(url="https://example.com/x", host="example.com")
    token, ids = checking.claim_sources(queryset=Source.objects.all(), limit=1)
    result = CheckResult(url=source.url, state=State.BROKEN, status=404)
    checking.record_results(token=token, results={source.pk: result})


def service_refresh_related(client, api):
    summary = SummaryFactory(live=True)
    related.refresh_related_around(video=summary.video)


def service_refresh_all_related(client, api):
    SummaryFactory(live=True)
    related_bulk.refresh_all_related()


def command_load_demo(client, api):
    load_demo()


WRITES = [
    admin_summary_edit,
    admin_publish_changes,
    admin_channel_rename,
    admin_person_rename,
    admin_topic_rename,
    admin_organisation_rename,
    admin_video_edit,
    admin_video_delete,
    admin_summary_delete,
    admin_delete_action,
    admin_publish_action,
    api_channel_create,
    api_person_update,
    api_summary_publish,
    service_unpublish,
    service_submit_for_review,
    task_rerender,
    service_confirm_citation,
    service_record_changed_check,
    service_refresh_related,
    service_refresh_all_related,
    command_load_demo,
]


@pytest.mark.parametrize("write", WRITES, ids=[write.__name__ for write in WRITES])
def test_every_write_path_makes_cached_pages_stale(write, admin_client, api):
    before = current_generation()
    write(admin_client, api)
    assert current_generation() != before


def in_a_transaction_of_its_own() -> bool:
    """Whether the code running is inside an atomic block other than the test's own
    (Django marks those it opens around each test)."""
    return any(not getattr(block, "_from_testcase", False) for block in connection.atomic_blocks)


@pytest.mark.parametrize("write", WRITES, ids=[write.__name__ for write in WRITES])
def test_every_write_path_moves_the_generation_in_the_transaction_of_its_change(
    write, admin_client, api, monkeypatch
):
    """So the number moves exactly when the change commits: never after it (a reader in
    between would be served the old page), never without it (a rolled back change)."""
    inside = []
    move = generation._move

    def watched(column, *, dated):
        inside.append(in_a_transaction_of_its_own())
        move(column, dated=dated)

    monkeypatch.setattr(generation, "_move", watched)
    write(admin_client, api)
    assert inside and all(inside), inside


def test_a_change_rolled_back_leaves_the_generation_as_it_was():
    before = current_generation()
    with contextlib.suppress(RuntimeError), transaction.atomic():
        content_changed()
        assert current_generation() != before  # seen inside the transaction
        raise RuntimeError
    assert current_generation() == before


def test_saving_content_sends_no_invalidation_by_itself():
    """Invalidation is explicit: a bare model save (a migration, a shell) does not bump."""
    channel = Channel.objects.create(name="Quiet", slug="quiet")
    before = current_generation()
    channel.name = "Still quiet"
    channel.save()
    Person.objects.create(name="Nobody", slug="nobody")
    assert current_generation() == before


def test_saving_changes_to_a_live_summary_leaves_pages_alone(admin_client):
    """Readers do not see unpublished changes, so their pages stay cached."""
    summary = SummaryFactory(live=True)
    before = current_generation()
    admin_save(admin_client, summary, {"tldr": "New words."}, "summary_form")
    assert current_generation() == before
