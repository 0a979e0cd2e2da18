"""Webhooks: which changes make events, and how deliveries go out.

Deliveries go to a receiver on 127.0.0.2 (opened by WEBHOOK_ALLOWED_NETWORKS); 127.0.0.1
plays an internal address that must never be reached.
"""

import json
import os
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
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
from summaries.models.webhooks import SUBSCRIBABLE_EVENT_TYPES, validate_event_types
from summaries.webhooks import delivery, endpoints, events, signing
from tests.factories import ReviewerFactory, SummaryFactory
from tests.webhook_receiver import Receiver

pytestmark = pytest.mark.django_db

ALL_EVENTS = [value for value, _ in SUBSCRIBABLE_EVENT_TYPES]
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
    # An update (the kind when none is given) is told as summary.corrected too.
    assert sorted(body_of(sent)["type"] for sent in deliveries()) == [
        "summary.corrected",
        "summary.updated",
    ]


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


# --- Test events, redelivery, secret rotation ----------------------------------------------


def queued_tasks(callbacks) -> list[tuple[str, tuple]]:
    return [(c.task.name, c.args) for c in callbacks if hasattr(c, "task")]


def test_a_test_event_goes_to_one_endpoint_signed_whatever_it_subscribes_to(
    receiver, django_capture_on_commit_callbacks
):
    hook = WebhookEndpoint.objects.create(
        url=receiver.url, events=[WebhookEventType.SUMMARY_UPDATED]
    )
    WebhookEndpoint.objects.create(url=receiver.url, events=ALL_EVENTS)  # not pinged
    with django_capture_on_commit_callbacks() as callbacks:
        sent = endpoints.send_test_event(endpoint=hook)
    assert queued_tasks(callbacks) == [("summaries.tasks.deliver_webhook", (sent.pk,))]
    assert send_now(sent) is None
    (request,) = receiver.received
    body = signing.verify(hook.secret, request.body, request.headers)
    assert body["type"] == "ping" and body["data"]["endpoint"] == {"id": hook.pk, "url": hook.url}
    sent.refresh_from_db()
    assert sent.state == Delivery.DELIVERED and sent.endpoint == hook


def test_a_test_event_to_a_turned_off_endpoint_is_refused(endpoint):
    endpoint.is_active = False
    endpoint.save()
    with pytest.raises(ValidationError, match="turned off"):
        endpoints.send_test_event(endpoint=endpoint)
    assert not WebhookEvent.objects.exists()


def test_ping_is_not_an_event_one_subscribes_to():
    with pytest.raises(ValidationError, match="Unknown event types: ping"):
        validate_event_types(["summary.published", "ping"])


def test_redelivering_sends_the_same_event_again_in_a_new_round(
    endpoint, receiver, django_capture_on_commit_callbacks
):
    receiver.answers = [404, 204]
    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    assert send_now(sent) is None  # a 404 is final
    with django_capture_on_commit_callbacks() as callbacks:
        assert endpoints.redeliver(delivery=sent) is True
    assert queued_tasks(callbacks) == [("summaries.tasks.deliver_webhook", (sent.pk,))]
    sent.refresh_from_db()
    assert (sent.state, sent.attempts, sent.error) == (Delivery.PENDING, 0, "")
    assert send_now(sent) is None
    sent.refresh_from_db()
    assert sent.state == Delivery.DELIVERED and sent.attempts == 1
    assert [e["status_code"] for e in sent.log] == [404, 204]  # both rounds
    first, second = receiver.received
    assert first.body == second.body
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == str(sent.event_id)
    signing.verify(endpoint.secret, second.body, second.headers)


@pytest.mark.parametrize("state", [Delivery.PENDING, Delivery.SENDING])
def test_a_delivery_on_its_way_is_not_redelivered(
    endpoint, state, django_capture_on_commit_callbacks
):
    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    WebhookDelivery.objects.filter(pk=sent.pk).update(state=state, attempts=1)
    with django_capture_on_commit_callbacks() as callbacks:
        assert endpoints.redeliver(delivery=sent) is False
    assert queued_tasks(callbacks) == []
    sent.refresh_from_db()
    assert sent.state == state and sent.attempts == 1


def test_after_a_rotation_both_secrets_sign_until_the_overlap_ends(endpoint, receiver, settings):
    settings.WEBHOOK_SECRET_OVERLAP = 3600
    old = endpoint.secret
    rotated_at = timezone.now()
    endpoint = endpoints.rotate_secret(endpoint=endpoint, now=rotated_at)
    new = endpoint.secret
    assert new != old and new.startswith("whsec_")
    assert endpoint.previous_secret_expires_at == rotated_at + timedelta(seconds=3600)

    workflow.publish_summary(summary=SummaryFactory())
    (sent,) = deliveries()
    delivery.deliver(delivery_id=sent.pk, now=rotated_at + timedelta(seconds=3599))
    during = receiver.received[-1]
    signatures = during.headers["webhook-signature"].split(" ")
    assert len(signatures) == 2 and all(s.startswith("v1,") for s in signatures)
    # A receiver still on the old secret and one already on the new one both accept it
    # (verified at the attempt's own time: the replay window is five minutes).
    for secret in (old, new):
        assert _verify_at(secret, during, rotated_at + timedelta(seconds=3599))

    endpoints.redeliver(delivery=sent)
    delivery.deliver(delivery_id=sent.pk, now=rotated_at + timedelta(seconds=3600))
    after = receiver.received[-1]
    assert len(after.headers["webhook-signature"].split(" ")) == 1
    assert _verify_at(new, after, rotated_at + timedelta(seconds=3600))
    assert not _verify_at(old, after, rotated_at + timedelta(seconds=3600))


def _verify_at(secret, request, moment) -> bool:
    with time_machine.travel(moment, tick=False):
        try:
            signing.verify(secret, request.body, request.headers)
        except signing.WebhookVerificationError:
            return False
    return True


def test_rotating_within_the_overlap_keeps_two_secrets_at_most(endpoint, settings):
    settings.WEBHOOK_SECRET_OVERLAP = 3600
    first = endpoint.secret
    second = endpoints.rotate_secret(endpoint=endpoint).secret
    third = endpoints.rotate_secret(endpoint=endpoint)
    assert third.signing_secrets(timezone.now()) == [third.secret, second]
    assert first not in third.signing_secrets(timezone.now())


def test_with_no_overlap_the_old_secret_stops_at_once(endpoint, settings):
    settings.WEBHOOK_SECRET_OVERLAP = 0
    rotated = endpoints.rotate_secret(endpoint=endpoint)
    assert rotated.signing_secrets(timezone.now()) == [rotated.secret]
    assert rotated.previous_secret == ""


def test_the_overlap_is_a_day_unless_configured():
    assert django_settings.WEBHOOK_SECRET_OVERLAP == 24 * 3600


# --- Which summary a delivery is about ------------------------------------------------------


def test_an_event_names_the_summaries_it_is_about(endpoint):
    summary = SummaryFactory()
    workflow.publish_summary(summary=summary)
    (sent,) = deliveries()
    assert sent.event.summaries() == [
        {"id": summary.pk, "slug": summary.video.slug, "title": summary.video.title}
    ]
    ping = endpoints.send_test_event(endpoint=endpoint)
    assert ping.event.summaries() == []
    assert WebhookEvent(body="not json").summaries() == []


# --- A scheduled publication goes out within a minute -------------------------------------


def test_the_sweep_runs_at_least_once_a_minute():
    sweep = django_settings.CELERY_BEAT_SCHEDULE["sweep-webhooks"]
    assert sweep["schedule"] == django_settings.WEBHOOK_SWEEP_EVERY <= 60
    assert sweep["options"]["expires"] < sweep["schedule"]


@pytest.mark.parametrize("phase", [0.0, 0.5, 17.0, 59.5])
def test_a_scheduled_summary_is_told_within_a_minute_of_going_live(
    endpoint, receiver, settings, django_capture_on_commit_callbacks, phase
):
    """Beat sweeps every WEBHOOK_SWEEP_EVERY seconds at some phase to the publish time.
    Polling alone told of a summary at the first sweep after it went live, up to a period
    late before any queueing; each sweep now queues the announcement for the publish time
    itself. The event is recorded (and its delivery queued) at the ETA, and when every
    queued announcement is lost, at the first sweep after: within one period either way."""
    period = settings.WEBHOOK_SWEEP_EVERY
    summary = SummaryFactory()
    at = timezone.now().replace(microsecond=0) + timedelta(minutes=10)
    workflow.publish_summary(summary=summary, at=at)
    sweeps = [at - timedelta(seconds=phase + k * period) for k in range(5, 0, -1)]
    etas = []
    for moment in sweeps:
        with django_capture_on_commit_callbacks() as callbacks:
            delivery.sweep(now=moment)
        etas += [
            c.eta
            for c in callbacks
            if getattr(c, "task", None) is not None
            and c.task.name == "summaries.tasks.announce_publication"
            and c.args == (summary.pk,)
        ]
    assert etas and min(etas) == at  # queued ahead, for the very moment it goes live
    assert not WebhookEvent.objects.exists()

    # The worker runs the announcement at its ETA: told then, delivered at once.
    with django_capture_on_commit_callbacks() as callbacks:
        assert events.announce_publication(summary_id=summary.pk, now=min(etas)) is None
    (sent,) = deliveries("summary.published")
    assert sent.created_at - at <= timedelta(seconds=1)
    assert queued_tasks(callbacks) == [("summaries.tasks.deliver_webhook", (sent.pk,))]
    send_now(sent)
    assert len(receiver.received) == 1
    # The sweeper does not tell of it again, nor does a duplicate announcement.
    delivery.sweep(now=at + timedelta(seconds=period))
    events.announce_publication(summary_id=summary.pk, now=at + timedelta(seconds=2))
    assert WebhookEvent.objects.count() == 1


def test_a_lost_announcement_is_told_by_the_next_sweep(endpoint, settings):
    period = settings.WEBHOOK_SWEEP_EVERY
    summary = SummaryFactory()
    at = timezone.now() + timedelta(minutes=10)
    workflow.publish_summary(summary=summary, at=at)
    delivery.sweep(now=at - timedelta(seconds=1))  # its announcement is never run
    assert not WebhookEvent.objects.exists()
    delivery.sweep(now=at + timedelta(seconds=period - 1))
    (sent,) = deliveries("summary.published")
    assert sent.created_at - at < timedelta(seconds=period) <= timedelta(minutes=1)


def test_an_announcement_for_a_summary_rescheduled_or_unpublished_tells_nothing(endpoint):
    summary = SummaryFactory()
    at = timezone.now() + timedelta(minutes=10)
    workflow.publish_summary(summary=summary, at=at)
    workflow.publish_summary(summary=summary, at=at + timedelta(hours=1))
    assert events.announce_publication(summary_id=summary.pk, now=at) is None
    workflow.unpublish_summary(summary=summary)
    assert events.announce_publication(summary_id=summary.pk, now=at + timedelta(hours=2)) is None
    assert not WebhookEvent.objects.exists()


def test_an_announcement_run_a_moment_early_waits_for_the_publish_time(endpoint):
    summary = SummaryFactory()
    at = timezone.now() + timedelta(minutes=10)
    workflow.publish_summary(summary=summary, at=at)
    wait = events.announce_publication(summary_id=summary.pk, now=at - timedelta(seconds=1))
    assert wait == pytest.approx(1.05)
    assert not WebhookEvent.objects.exists()
    told = at + timedelta(seconds=wait - 1)  # when the task's retry runs
    assert events.announce_publication(summary_id=summary.pk, now=told) is None
    (sent,) = deliveries("summary.published")
    assert sent.created_at == told


def test_the_announcement_task_is_registered_under_its_name():
    from celery import current_app

    assert "summaries.tasks.announce_publication" in current_app.tasks


# --- Links in events on `make run` --------------------------------------------------------


def _make_run_dry(*, site_url: str | None = None, port: str | None = None) -> str:
    """The commands `make run` would run (make -n: nothing is run)."""
    env = {k: v for k, v in os.environ.items() if k not in ("SITE_URL", "PORT")}
    if site_url is not None:
        env["SITE_URL"] = site_url
    command = ["make", "-n", "run", *([f"PORT={port}"] if port else [])]
    return subprocess.run(  # noqa: S603 - fixed arguments
        command,
        cwd=Path(__file__).resolve().parent.parent,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_make_run_builds_event_links_from_its_port():
    assert 'SITE_URL="http://127.0.0.1:8311"' in _make_run_dry(port="8311")
    assert 'SITE_URL="http://127.0.0.1:8000"' in _make_run_dry()


def test_make_run_keeps_a_site_url_that_is_set():
    text = _make_run_dry(site_url="https://curation.example", port="8311")
    assert 'SITE_URL="https://curation.example"' in text
