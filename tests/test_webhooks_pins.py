"""The `pin.status_changed` webhook: a live statement's pin changed status when changes
or a new transcript went live; one event per pin per change, written with the change and
sent after the commit."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.utils import timezone

from summaries.editing import copies, pinning, save, workflow
from summaries.models import (
    Chapter,
    KeyPoint,
    Summary,
    Takeaway,
    Transcript,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventType,
)
from summaries.webhooks import events
from tests.factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
)
from tests.receipts_factories import (
    PARAPHRASED_POINT,
    SPEECH,
    SPEECH_CORRECTED,
    VERBATIM_POINT,
    VERBATIM_QUOTE,
    let_through,
    make_transcript,
    pin_and_approve,
    pin_best,
    vtt,
)

pytestmark = pytest.mark.django_db

PIN_EVENT = WebhookEventType.PIN_STATUS_CHANGED
DELIVER_TASK = "summaries.tasks.deliver_webhook"
# The live key point (said word for word) rewritten: a paraphrase of the same words.
PARAPHRASE = "The basic plan costs twenty dollars a month."


@pytest.fixture(autouse=True)
def webhook_settings(settings):
    settings.SITE_URL = "https://curation.example"


@pytest.fixture
def endpoint():
    return WebhookEndpoint.objects.create(url="https://hooks.example/in", events=[PIN_EVENT])


@pytest.fixture
def live():
    """A live summary whose key point is said word for word and whose takeaway is a
    paraphrase, pinned against the live transcript."""
    summary = SummaryFactory()
    KeyPointFactory(summary=summary, title="Pricing", body=VERBATIM_POINT, time=22)
    TakeawayFactory(summary=summary, text=PARAPHRASED_POINT, time=6)
    make_transcript(summary.video, SPEECH)
    pin_best(summary, KeyPoint.objects.get(summary=summary))
    pin_best(summary, Takeaway.objects.get(summary=summary))
    let_through(summary, editor=editor())  # the takeaway's paraphrase approved
    workflow.publish_summary(summary=summary, user=None)
    summary.refresh_from_db()
    assert summary.is_live()
    return summary


def editor():
    """The editor who approves paraphrases (one account however often it is asked for)."""
    return User.objects.filter(username="eve").first() or EditorFactory(username="eve")


def reviewer():
    """The reviewer who overrides refused pins."""
    return User.objects.filter(username="rita").first() or ReviewerFactory(username="rita")


def pin_events() -> list[dict]:
    found = WebhookEvent.objects.filter(type=PIN_EVENT).order_by("created_at", "key")
    return [json.loads(event.body) for event in found]


def statuses(summary: Summary) -> dict[str, str | None]:
    point = KeyPoint.objects.get(summary=summary)
    takeaway = Takeaway.objects.get(summary=summary)
    return {
        "key_point": point.pin["status"] if point.pin else None,
        "takeaway": takeaway.pin["status"] if takeaway.pin else None,
    }


def edit_and_publish(summary: Summary, *, point_body: str) -> None:
    """An editor rewrites the key point in the summary's changes; the system publishes."""
    copy, _ids, _made = copies.edit_target(summary=summary, user=None)
    point = KeyPoint.objects.get(summary=copy)
    point.body = point_body
    save.save_summary(summary=copy, parts={KeyPoint: [point]}, user=None)
    let_through(copy, editor=editor())  # a paraphrase approved by a named editor
    copies.publish_changes(summary=summary, user=None)


def import_and_publish(summary: Summary, lines) -> None:
    """A new transcript goes live with the summary's changes: refused pins are overridden
    by a reviewer first, so that the changes can go live."""
    imported = pinning.import_transcript(video=summary.video, data=vtt(lines), user=None)
    copy = imported.summary
    assert copy is not None and copy.is_working_copy
    let_through(copy, editor=editor(), reviewer=reviewer())
    copies.publish_changes(summary=summary, user=None)


def test_a_changed_statement_going_live_is_told_once_with_both_statuses(
    live, endpoint, django_capture_on_commit_callbacks
):
    assert statuses(live) == {"key_point": "verbatim", "takeaway": "paraphrase"}
    with django_capture_on_commit_callbacks() as callbacks:
        edit_and_publish(live, point_body=PARAPHRASE)
    after = statuses(live)
    assert after == {"key_point": "paraphrase", "takeaway": "paraphrase"}
    (body,) = pin_events()
    assert body["type"] == "pin.status_changed"
    data = body["data"]
    point = KeyPoint.objects.get(summary=live)
    assert data["part"] == {
        "type": "key_point",
        "id": point.pk,
        "position": point.position,
        "text": str(point),
    }
    assert (data["previous_status"], data["status"]) == ("verbatim", after["key_point"])
    assert data["quote"] is None
    assert data["pin"]["reason"] == point.pin["reason"]
    assert data["summary"]["slug"] == live.video.slug
    assert data["summary"]["api_url"].endswith(f"/api/v1/summaries/{live.video.slug}/")
    # Written with the change, sent after the commit: one delivery queued per endpoint.
    (delivery,) = WebhookDelivery.objects.filter(event__type=PIN_EVENT)
    queued = [c.args for c in callbacks if getattr(c, "task", None) is not None]
    assert (delivery.pk,) in queued
    sends = [c for c in callbacks if getattr(c, "task", None) and c.task.name == DELIVER_TASK]
    assert len(sends) == len(WebhookDelivery.objects.all())


def test_a_new_live_transcript_tells_each_pin_whose_status_changed(live, endpoint):
    import_and_publish(live, SPEECH_CORRECTED)
    after = statuses(live)
    assert Transcript.objects.get(video=live.video).digest  # one transcript: the new one
    assert after == {"key_point": "contradicted", "takeaway": "contradicted"}
    told = {
        (e["data"]["part"]["type"], e["data"]["previous_status"], e["data"]["status"])
        for e in pin_events()
    }
    assert told == {
        ("key_point", "verbatim", "contradicted"),
        ("takeaway", "paraphrase", "contradicted"),
    }
    assert len(pin_events()) == 2


def test_each_change_is_told_once_however_often_it_is_looked_for(live, endpoint):
    before = events.pin_statuses(live)
    edit_and_publish(live, point_body=PARAPHRASE)
    live.refresh_from_db()
    assert len(pin_events()) == 1
    # The same comparison again (a retried hook) tells nothing new.
    assert events.pins_changed(live, before) == 0
    assert len(pin_events()) == 1
    # Changes that leave the statuses as they are tell nothing either.
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    Summary.objects.filter(pk=copy.pk).update(tldr="A new thirty-second text.")
    copies.publish_changes(summary=live, user=None)
    assert len(pin_events()) == 1


def test_pinning_a_live_part_is_told_with_a_null_previous_status(endpoint):
    """A summary published before its video had a transcript: its statements are pinned
    in the changes that bring the transcript, and each is told as newly pinned."""
    summary = SummaryFactory()
    KeyPointFactory(summary=summary, title="Pricing", body=VERBATIM_POINT, time=22)
    workflow.publish_summary(summary=summary, user=None)  # nothing to pin to yet
    imported = pinning.import_transcript(video=summary.video, data=vtt(SPEECH), user=editor())
    pin_best(imported.summary, KeyPoint.objects.get(summary=imported.summary))
    copies.publish_changes(summary=summary, user=None)
    (body,) = pin_events()
    assert (body["data"]["previous_status"], body["data"]["status"]) == (None, "verbatim")
    assert body["data"]["pin"] is not None


def test_rejecting_a_live_pin_in_the_changes_keeps_them_from_going_live(live, endpoint):
    """A statement left without a pin on a video with a transcript is not published: no
    live pin goes back to no status, so nothing is told."""
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    takeaway = Takeaway.objects.get(summary=copy)
    pinning.set_pin(summary=copy, part=takeaway, first=None, end=None, user=None)
    with pytest.raises(ValidationError, match="is not pinned to the transcript yet"):
        copies.publish_changes(summary=live, user=None)
    assert pin_events() == []
    assert Takeaway.objects.get(summary=live).pin["status"] == "paraphrase"


def test_quotations_of_a_chapter_are_told_by_their_text(endpoint):
    summary = SummaryFactory()
    ChapterFactory(
        summary=summary, title="Open weights", start_time=40, body=f"“{VERBATIM_QUOTE}.”"
    )
    make_transcript(summary.video, SPEECH)
    save.save_summary(summary=summary, parts={}, user=None)
    pin_and_approve(summary, editor())  # the chapter's start
    workflow.publish_summary(summary=summary, user=None)
    (quote,) = Chapter.objects.get(summary=summary).quote_pins
    assert quote["status"] == "verbatim"
    changed = [
        (a, b, text.replace("open weights will matter more", "open weights might matter less"))
        for a, b, text in SPEECH
    ]
    imported = pinning.import_transcript(video=summary.video, data=vtt(changed), user=None)
    let_through(imported.summary, editor=editor(), reviewer=reviewer())
    copies.publish_changes(summary=summary, user=None)
    told = [e["data"] for e in pin_events() if e["data"]["quote"] is not None]
    assert len(told) == 1
    assert told[0]["quote"] == f"{VERBATIM_QUOTE}."
    assert told[0]["part"]["type"] == "chapter" and told[0]["previous_status"] == "verbatim"
    assert told[0]["status"] == Chapter.objects.get(summary=summary).quote_pins[0]["status"]


def test_drafts_scheduled_summaries_and_unsubscribed_sites_are_not_told(live, endpoint):
    # A first publication is summary.published's to tell, not this event's.
    draft = SummaryFactory()
    KeyPointFactory(summary=draft, body=VERBATIM_POINT, time=22)
    make_transcript(draft.video, SPEECH)
    pin_best(draft, KeyPoint.objects.get(summary=draft))
    workflow.publish_summary(summary=draft, user=None)
    # Changes of a summary scheduled to go live later are told by nobody.
    Summary.objects.filter(pk=draft.pk).update(publish_at=timezone.now() + timedelta(days=1))
    draft.refresh_from_db()
    edit_and_publish(draft, point_body=PARAPHRASE)
    assert pin_events() == []
    # Nobody subscribed: no event row, no query for the pins.
    endpoint.events = [WebhookEventType.SUMMARY_UPDATED]
    endpoint.save()
    assert events.pins_before_change(live) is None
    edit_and_publish(live, point_body=PARAPHRASE)
    assert pin_events() == []


def test_a_change_that_fails_to_go_live_tells_nothing(live, endpoint):
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    point = KeyPoint.objects.get(summary=copy)
    point.body = "Bananas are yellow and grow on trees in Ecuador."
    save.save_summary(summary=copy, parts={KeyPoint: [point]}, user=None)
    with pytest.raises(Exception, match="is not in the transcript"):
        copies.publish_changes(summary=live, user=None)
    assert pin_events() == []
