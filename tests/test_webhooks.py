"""Webhooks (issue 16 section 2): which changes make events, and how deliveries go out.

Deliveries go to a receiver on 127.0.0.2 (opened by WEBHOOK_ALLOWED_NETWORKS); 127.0.0.1
plays an internal address that must never be reached.
"""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from summaries.checking import record
from summaries.editing import copies, workflow
from summaries.linkcheck import CheckResult, State
from summaries.models import (
    Citation,
    Source,
    Summary,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventType,
)
from summaries.webhooks import delivery, events, signing
from tests.factories import ReviewerFactory, SummaryFactory
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db

ALL_EVENTS = list(WebhookEventType.values)
Delivery = WebhookDelivery.State


@pytest.fixture(autouse=True)
def webhook_settings(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.2/32"]
    settings.WEBHOOK_DEADLINE = 1.0
    settings.WEBHOOK_MAX_ATTEMPTS = 3
    settings.WEBHOOK_DISABLE_AFTER = 3
    settings.SITE_URL = "https://curation.example"
    return settings


@pytest.fixture
def receiver():
    started = Receiver().start()
    yield started
    started.stop()


@pytest.fixture
def endpoint(receiver):
    return WebhookEndpoint.objects.create(url=receiver.url, events=ALL_EVENTS)


def deliveries(event_type: str | None = None) -> list[WebhookDelivery]:
    found = WebhookDelivery.objects.select_related("event").order_by("id")
    if event_type:
        found = found.filter(event__type=event_type)
    return list(found)


def body_of(item: WebhookDelivery) -> dict:
    return json.loads(item.event.body)


def send_now(item: WebhookDelivery):
    """One attempt, as the task makes it, at the delivery's due time."""
    item.refresh_from_db()
    return delivery.deliver(delivery_id=item.pk, now=item.next_attempt_at or timezone.now())


# --- Which changes are told -------------------------------------------------------------


def test_publishing_tells_each_subscribed_endpoint_once_after_commit(
    endpoint, django_capture_on_commit_callbacks
):
    other = WebhookEndpoint.objects.create(
        url=endpoint.url, events=[WebhookEventType.SUMMARY_UNPUBLISHED]
    )
    off = WebhookEndpoint.objects.create(url=endpoint.url, events=ALL_EVENTS, is_active=False)
    summary = SummaryFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        workflow.publish_summary(summary=summary, user=ReviewerFactory())
    (sent,) = deliveries()
    assert sent.endpoint == endpoint and sent.state == Delivery.PENDING
    assert not other.deliveries.exists() and not off.deliveries.exists()
    assert [c.task.name for c in callbacks if hasattr(c, "task")] == [
        "summaries.tasks.refresh_list_facets",  # the filter choices of the video's owners
        "summaries.tasks.refresh_related_around",
        "summaries.tasks.deliver_webhook",
    ]
    body = body_of(sent)
    assert body["type"] == "summary.published" and body["id"] == str(sent.event_id)
    data = body["data"]["summary"]
    assert data["slug"] == summary.video.slug and data["title"] == summary.video.title
    assert data["url"] == f"https://curation.example/videos/{summary.video.slug}/"
    assert data["api_url"] == f"https://curation.example/api/v1/summaries/{summary.video.slug}/"
    assert data["channel"]["slug"] == summary.video.channel.slug


def test_drafts_reviews_and_scheduled_summaries_are_never_told(endpoint):
    summary = SummaryFactory()
    workflow.submit_for_review(summary=summary)
    workflow.send_back(summary=summary, user=ReviewerFactory(), note="More detail.")
    later = timezone.now() + timedelta(hours=1)
    workflow.publish_summary(summary=summary, at=later)
    assert not WebhookEvent.objects.exists()
    workflow.unpublish_summary(summary=summary)  # it was only scheduled: nobody saw it
    assert not WebhookEvent.objects.exists()


def test_a_scheduled_summary_is_told_once_when_it_goes_live(endpoint):
    summary = SummaryFactory()
    at = timezone.now() + timedelta(minutes=5)
    workflow.publish_summary(summary=summary, at=at)
    assert events.announce_due_publications(now=at - timedelta(seconds=1)) == 0
    assert events.announce_due_publications(now=at + timedelta(seconds=30)) == 1
    assert events.announce_due_publications(now=at + timedelta(seconds=90)) == 0
    delivery.sweep(now=at + timedelta(seconds=120))
    (sent,) = deliveries()
    assert body_of(sent)["data"]["summary"]["slug"] == summary.video.slug


def test_publishing_now_is_not_told_again_by_the_sweeper(endpoint):
    workflow.publish_summary(summary=SummaryFactory())
    assert events.announce_due_publications(now=timezone.now() + timedelta(seconds=5)) == 0
    assert len(deliveries()) == 1


def test_working_copies_are_told_only_when_their_changes_go_live(endpoint):
    summary = SummaryFactory(live=True)
    copy, _ = copies.start_working_copy(summary=summary)
    copy.tldr = "A better thirty seconds."
    copy.save()
    copies.publish_changes(summary=summary, at=timezone.now() + timedelta(hours=1))
    assert not WebhookEvent.objects.exists()
    copies.publish_due_changes(now=timezone.now() + timedelta(hours=2))
    (sent,) = deliveries()
    assert body_of(sent)["type"] == "summary.updated"


def test_unpublishing_a_live_summary_is_told(endpoint):
    summary = SummaryFactory(live=True)
    workflow.unpublish_summary(summary=summary)
    (sent,) = deliveries()
    assert body_of(sent)["type"] == "summary.unpublished"
    assert body_of(sent)["data"]["summary"]["slug"] == summary.video.slug


def _cited(summary: Summary, url: str, *, verdict=Citation.Verdict.UNCHECKED, state="ok"):
    source, _ = Source.objects.get_or_create(url=url, defaults={"host": "example.org"})
    Source.objects.filter(pk=source.pk).update(state=state)
    return Citation.objects.create(
        summary=summary,
        source=source,
        url=url,
        link_text="the paper",
        claim="It is 2.5 times faster.",
        key_phrase="2.5 times faster",
        verdict=verdict,
    )


def _record(source: Source, *, state: State, text: str | None = None) -> None:
    Source.objects.filter(pk=source.pk).update(check_token="t1")
    result = CheckResult(url=source.url, state=state, status=200 if state == "ok" else 404)
    result.text = text
    record.record_results(token="t1", results={source.pk: result})


def test_a_source_changing_state_is_told_with_the_live_summaries_citing_it(endpoint):
    live = SummaryFactory(live=True)
    citation = _cited(live, "https://example.org/paper")
    _cited(SummaryFactory(), "https://example.org/paper")  # a draft citing it too
    _record(citation.source, state=State.BROKEN)
    (sent,) = deliveries(WebhookEventType.SOURCE_STATE_CHANGED)
    data = body_of(sent)["data"]
    assert data["source"]["state"] == "broken" and data["source"]["previous_state"] == "ok"
    assert [s["slug"] for s in data["summaries"]] == [live.video.slug]


def test_first_checks_and_sources_cited_only_by_drafts_are_not_told(endpoint):
    first = _cited(SummaryFactory(live=True), "https://example.org/new", state="unchecked")
    _record(first.source, state=State.OK)
    drafted = _cited(SummaryFactory(), "https://example.org/draft")
    _record(drafted.source, state=State.BROKEN)
    assert not WebhookEvent.objects.exists()


def test_a_verdict_change_is_told_for_live_summaries_only(endpoint):
    live = SummaryFactory(live=True)
    citation = _cited(live, "https://example.org/a", verdict=Citation.Verdict.SUPPORTED)
    copy, _ = copies.start_working_copy(summary=live)  # its citations are copies
    _record(citation.source, state=State.OK, text="Nothing about speed here.")
    (sent,) = deliveries(WebhookEventType.CITATION_VERDICT_CHANGED)
    data = body_of(sent)["data"]
    assert data["citation"]["id"] == citation.pk
    assert data["citation"]["verdict"] == "not_found"
    assert data["citation"]["previous_verdict"] == "supported"
    assert data["summary"]["slug"] == live.video.slug
    assert Citation.objects.filter(summary=copy, verdict="not_found").exists()


def test_nothing_is_written_when_no_endpoint_wants_the_event(receiver):
    WebhookEndpoint.objects.create(url=receiver.url, events=["summary.unpublished"])
    workflow.publish_summary(summary=SummaryFactory())
    assert not WebhookEvent.objects.exists() and not WebhookDelivery.objects.exists()


# --- Deliveries --------------------------------------------------------------------------


def test_a_delivery_is_signed_over_id_timestamp_and_body(endpoint, receiver):
    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    assert send_now(sent) is None
    (request,) = receiver.received
    assert signing.verify(endpoint.secret, request.body, request.headers)["id"] == str(
        sent.event_id
    )
    assert request.body == sent.event.body.encode()
    assert request.headers["webhook-id"] == str(sent.event_id)
    assert request.headers["content-type"] == "application/json"
    other = WebhookEndpoint(url=receiver.url).secret  # another endpoint's secret
    with pytest.raises(signing.WebhookVerificationError):
        signing.verify(other, request.body, request.headers)
    with pytest.raises(signing.WebhookVerificationError):  # the body was changed
        signing.verify(endpoint.secret, request.body + b" ", request.headers)
    sent.refresh_from_db()
    assert sent.state == Delivery.DELIVERED and sent.attempts == 1 and sent.status_code == 204
    assert [entry["status_code"] for entry in sent.log] == [204]


def test_a_replayed_delivery_is_refused_after_the_window(endpoint):
    body = b'{"id":"x"}'
    then = timezone.now() - timedelta(seconds=signing.REPLAY_WINDOW_SECONDS + 10)
    headers = signing.signed_headers(endpoint.secret, event_id="x", timestamp=then, body=body)
    with pytest.raises(signing.WebhookVerificationError):
        signing.verify(endpoint.secret, body, headers)
    now = timezone.now()
    fresh = signing.signed_headers(endpoint.secret, event_id="x", timestamp=now, body=body)
    assert signing.verify(endpoint.secret, body, fresh) == {"id": "x"}


def test_a_500_is_tried_again_later_with_the_same_id(endpoint, receiver):
    receiver.answers = [500, 503, 200]
    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    first = send_now(sent)
    sent.refresh_from_db()
    assert 15 <= first <= 30  # WEBHOOK_RETRY_DELAY (30 s) with jitter
    assert sent.state == Delivery.PENDING and sent.error == "HTTP 500"
    assert delivery.deliver(delivery_id=sent.pk) is None  # not due yet: nothing sent
    assert len(receiver.received) == 1
    second = send_now(sent)
    assert 30 <= second <= 60  # doubled
    assert send_now(sent) is None
    sent.refresh_from_db()
    assert sent.state == Delivery.DELIVERED and sent.attempts == 3
    assert [e["status_code"] for e in sent.log] == [500, 503, 200]
    ids = {r.headers["webhook-id"] for r in receiver.received}
    assert ids == {str(sent.event_id)}
    for request in receiver.received:
        signing.verify(endpoint.secret, request.body, request.headers)


def test_a_timeout_is_tried_again_then_the_delivery_fails(endpoint, receiver):
    receiver.answers = ["hang"]
    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    assert send_now(sent) is not None
    assert send_now(sent) is not None
    assert send_now(sent) is None  # WEBHOOK_MAX_ATTEMPTS (3) made
    sent.refresh_from_db()
    assert sent.state == Delivery.FAILED and sent.attempts == 3
    assert sent.error.startswith("timeout")
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).failures_in_a_row == 1


@pytest.mark.parametrize("status", [301, 400, 404, 410])
def test_a_refusal_is_final(endpoint, receiver, status):
    receiver.answers = [status]
    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    assert send_now(sent) is None
    sent.refresh_from_db()
    assert sent.state == Delivery.FAILED and sent.attempts == 1 and len(receiver.received) == 1


def test_internal_addresses_are_never_sent_to():
    internal = Receiver("127.0.0.1").start()
    try:
        port = internal.server_address[1]
        for url in (f"http://localhost:{port}/hooks", f"http://127.0.0.1:{port}/hooks"):
            hook = WebhookEndpoint.objects.create(url=url, events=ALL_EVENTS)  # bypasses forms
            workflow.publish_summary(summary=SummaryFactory())
            (sent,) = hook.deliveries.all()
            assert send_now(sent) is None
            sent.refresh_from_db()
            assert sent.state == Delivery.FAILED and sent.error.startswith("blocked")
            hook.delete()
        assert internal.received == []
    finally:
        internal.stop()


def test_an_endpoint_failing_again_and_again_is_disabled(endpoint, receiver):
    receiver.answers = [404]
    for _ in range(3):  # WEBHOOK_DISABLE_AFTER
        workflow.publish_summary(summary=SummaryFactory())
    for sent in deliveries():
        send_now(sent)
    endpoint.refresh_from_db()
    assert not endpoint.is_active and endpoint.failures_in_a_row == 3
    assert endpoint.disabled_reason.startswith("3 deliveries in a row failed; the last: HTTP 404")
    assert len(receiver.received) == 3


def test_a_disabled_endpoint_is_sent_nothing_and_turning_it_on_starts_afresh(endpoint, receiver):
    workflow.publish_summary(summary=SummaryFactory())
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        is_active=False, disabled_at=timezone.now(), disabled_reason="x", failures_in_a_row=9
    )
    (sent,) = deliveries()
    assert send_now(sent) is None
    sent.refresh_from_db()
    assert sent.state == Delivery.FAILED and receiver.received == []
    endpoint.refresh_from_db()
    endpoint.is_active = True
    endpoint.save()
    endpoint.refresh_from_db()
    assert endpoint.failures_in_a_row == 0 and endpoint.disabled_at is None
    assert endpoint.disabled_reason == ""


def test_a_success_clears_the_failure_count(endpoint, receiver):
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(failures_in_a_row=2)
    workflow.publish_summary(summary=SummaryFactory())
    send_now(deliveries()[0])
    assert WebhookEndpoint.objects.get(pk=endpoint.pk).failures_in_a_row == 0


def test_a_delivery_being_sent_elsewhere_is_not_sent_again(endpoint, receiver):
    """A worker killed mid-request leaves its claim; the redelivered task sends nothing."""
    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    claimed_at = timezone.now()
    WebhookDelivery.objects.filter(pk=sent.pk).update(
        state=Delivery.SENDING, claimed_at=claimed_at, attempts=1
    )
    assert delivery.deliver(delivery_id=sent.pk, now=claimed_at + timedelta(seconds=5)) is None
    assert receiver.received == []
    delivery.sweep(now=claimed_at + timedelta(seconds=30))  # maybe still sending
    sent.refresh_from_db()
    assert sent.state == Delivery.SENDING
    delivery.sweep(now=claimed_at + timedelta(seconds=62))  # past WEBHOOK_DEADLINE + 60 s
    sent.refresh_from_db()
    assert sent.state == Delivery.INTERRUPTED and sent.next_attempt_at is None
    assert delivery.deliver(delivery_id=sent.pk, now=claimed_at + timedelta(hours=1)) is None
    assert receiver.received == []


def test_the_sweeper_queues_deliveries_whose_message_was_lost(
    endpoint, django_capture_on_commit_callbacks
):
    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    with django_capture_on_commit_callbacks() as soon:
        delivery.sweep(now=timezone.now() + timedelta(seconds=30))
    with django_capture_on_commit_callbacks() as late:
        delivery.sweep(now=timezone.now() + timedelta(minutes=3))
    assert [c.args for c in soon if hasattr(c, "task")] == []
    assert [c.args for c in late if hasattr(c, "task")] == [(sent.pk,)]


def test_old_events_and_their_logs_are_dropped(endpoint, settings):
    workflow.publish_summary(summary=SummaryFactory())
    delivery.sweep(now=timezone.now() + timedelta(days=settings.WEBHOOK_KEEP_DAYS - 1))
    assert WebhookDelivery.objects.count() == 1
    delivery.sweep(now=timezone.now() + timedelta(days=settings.WEBHOOK_KEEP_DAYS + 1))
    assert not WebhookEvent.objects.exists() and not WebhookDelivery.objects.exists()


def test_the_retry_wait_doubles_up_to_its_cap(settings):
    settings.WEBHOOK_RETRY_DELAY, settings.WEBHOOK_MAX_RETRY_DELAY = 30, 100
    waits = [delivery.retry_delay(n, rng=lambda: 1.0) for n in range(1, 6)]
    assert waits == [30, 60, 100, 100, 100]
    assert delivery.retry_delay(1, rng=lambda: 0.0) == 15
