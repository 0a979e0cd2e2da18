"""Notifications: who is told of what, at most once, as they chose, and only to themselves."""

import smtplib
import socket
from datetime import timedelta

import pytest
import reversion
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from summaries import notifications
from summaries.checking import record
from summaries.editing import copies, workflow
from summaries.linkcheck import CheckResult, State
from summaries.models import (
    Citation,
    Notification,
    NotificationEvent,
    NotificationPreferences,
    Source,
    Summary,
)
from summaries.notifications import email, events
from summaries.notifications.tasks import send_notification_email, sweep_notifications
from tests.factories import EditorFactory, ReviewerFactory, SummaryFactory, UserFactory

pytestmark = pytest.mark.django_db


def told(kind: str | None = None) -> dict[str, set[str]]:
    """username -> the kinds they were told of (or only `kind`)."""
    found: dict[str, set[str]] = {}
    rows = Notification.objects.select_related("event", "recipient")
    for n in rows.filter(event__kind=kind) if kind else rows:
        found.setdefault(n.recipient.username, set()).add(n.event.kind)
    return found


def send_all() -> None:
    for pk in Notification.objects.values_list("pk", flat=True):
        email.send_email(notification_id=pk)


@pytest.fixture
def people():
    """Two reviewers, two editors, and people who must never be told."""
    return {
        "rita": ReviewerFactory(username="rita"),
        "rob": ReviewerFactory(username="rob"),
        "ed": EditorFactory(username="ed"),
        "eve": EditorFactory(username="eve"),
        "gone": ReviewerFactory(username="gone", is_active=False),
        "boss": UserFactory(username="boss", is_superuser=True, is_staff=True),
        "outsider": UserFactory(username="outsider", is_superuser=True, is_staff=False),
    }


def written_by(*users, **fields) -> Summary:
    """A summary created by the first user with a revision by each of the others."""
    summary = SummaryFactory(created_by=users[0], **fields)
    for user in users[1:]:
        with reversion.create_revision():
            summary.save()
            reversion.set_user(user)
    return summary


# --- Who is told ---------------------------------------------------------------------------


def test_a_summary_sent_for_review_is_told_to_active_staff_reviewers_but_not_the_sender(
    people,
):
    summary = SummaryFactory(created_by=people["rob"])
    workflow.submit_for_review(summary=summary, user=people["rob"])
    assert told() == {"rita": {"submitted"}, "boss": {"submitted"}}
    event = NotificationEvent.objects.get()
    assert event.summary == summary and event.actor == people["rob"]
    assert event.link == reverse("admin:summaries_summary_change", args=[summary.pk])
    assert summary.video.title in event.subject


def test_sent_back_tells_the_people_who_wrote_it_with_the_note(people):
    summary = written_by(people["ed"], people["eve"], status=Summary.Status.IN_REVIEW)
    SummaryFactory(created_by=people["rob"])  # someone else's summary
    workflow.send_back(summary=summary, user=people["rita"], note="Cite the 2.5× figure.")
    assert told() == {"ed": {"sent_back"}, "eve": {"sent_back"}}
    assert "Cite the 2.5× figure." in NotificationEvent.objects.get().body


def test_publishing_tells_the_editors_not_the_reviewer_who_published(people):
    summary = written_by(people["ed"], people["rita"], status=Summary.Status.IN_REVIEW)
    workflow.publish_summary(summary=summary, user=people["rita"])
    assert told() == {"ed": {"published"}}


def test_a_scheduled_summary_is_told_once_when_it_goes_live_not_when_scheduled(people):
    summary = written_by(people["ed"])
    at = timezone.now() + timedelta(minutes=5)
    workflow.publish_summary(summary=summary, user=people["rita"], at=at)
    assert not Notification.objects.exists()
    assert events.announce_went_live(now=at - timedelta(seconds=1)) == 0
    assert events.announce_went_live(now=at + timedelta(seconds=30)) == 1
    assert events.announce_went_live(now=at + timedelta(seconds=90)) == 0
    email.sweep(now=at + timedelta(seconds=120))
    # The reviewer who scheduled it has a revision of it: one of the people who wrote it.
    assert told() == {"ed": {"went_live"}, "rita": {"went_live"}}
    assert {n.event.actor for n in Notification.objects.all()} == {None}


def test_a_summary_published_at_once_is_not_told_again_by_the_sweeper(people):
    summary = written_by(people["ed"], status=Summary.Status.IN_REVIEW)
    workflow.publish_summary(summary=summary, user=people["rita"])
    assert events.announce_went_live() == 0
    assert told() == {"ed": {"published"}}


def test_published_changes_tell_who_wrote_the_live_summary_and_its_changes(people):
    live = written_by(people["ed"], live=True)
    copy, _ = copies.start_working_copy(summary=live, user=people["eve"])
    assert notifications.summary_published(summary=live, by=people["rita"], changes=copy)
    assert told() == {"ed": {"published"}, "eve": {"published"}}


def test_changes_published_by_the_clock_are_told_as_gone_live(people):
    live = written_by(people["ed"], live=True)
    copy, _ = copies.start_working_copy(summary=live, user=people["eve"])
    assert notifications.summary_went_live(summary=live, changes=copy)
    assert notifications.summary_published(summary=live, by=people["rita"], changes=copy) == []
    assert told() == {"ed": {"went_live"}, "eve": {"went_live"}}


def test_changes_published_through_the_workflow_are_told_once(people):
    live = written_by(people["ed"], live=True)
    copies.start_working_copy(summary=live, user=people["eve"])
    workflow.publish_summary(summary=live, user=people["rita"])
    assert told() == {"ed": {"published"}, "eve": {"published"}}


def test_scheduled_changes_are_told_as_gone_live_when_the_clock_publishes_them(people):
    live = written_by(people["ed"], live=True)
    copies.start_working_copy(summary=live, user=people["eve"])
    at = timezone.now() + timedelta(minutes=5)
    copies.publish_changes(summary=live, user=people["rita"], at=at)
    assert not Notification.objects.exists()
    assert copies.publish_due_changes(now=at + timedelta(seconds=1)) == [live.pk]
    assert copies.publish_due_changes(now=at + timedelta(seconds=61)) == []
    # The reviewer who scheduled them saved the copy last: one of the people who wrote it.
    assert told() == {"ed": {"went_live"}, "eve": {"went_live"}, "rita": {"went_live"}}


def test_drafts_and_scheduled_summaries_are_never_told_as_published(people):
    assert notifications.summary_published(summary=written_by(people["ed"])) == []
    scheduled = written_by(
        people["ed"],
        status=Summary.Status.PUBLISHED,
        publish_at=timezone.now() + timedelta(hours=1),
    )
    assert notifications.summary_published(summary=scheduled) == []
    assert not NotificationEvent.objects.exists()


def _cited(summary: Summary, url: str, *, verdict=Citation.Verdict.UNCHECKED, state="ok"):
    source, _ = Source.objects.get_or_create(url=url, defaults={"host": "example.org"})
    Source.objects.filter(pk=source.pk).update(state=state)
    return Citation.objects.create(
        summary=summary,
        source=source,
        url=url,
        link_text="the paper",
        claim="It is <b>2.5 times</b> faster.",
        key_phrase="2.5 times faster",
        verdict=verdict,
    )


def _check(source: Source, *, state: State, text: str | None = None, token="t1") -> None:  # noqa: S107
    Source.objects.filter(pk=source.pk).update(check_token=token)
    result = CheckResult(url=source.url, state=state, status=200 if state == "ok" else 404)
    result.text = text
    record.record_results(token=token, results={source.pk: result})


def test_a_cited_source_breaking_is_told_to_the_editors_of_live_summaries_only(people):
    live = written_by(people["ed"], live=True)
    citation = _cited(live, "https://example.org/paper")
    _cited(written_by(people["eve"]), "https://example.org/paper")  # a draft cites it too
    _check(citation.source, state=State.BROKEN)
    assert told() == {"ed": {"source_problem"}}
    body = NotificationEvent.objects.get().body
    assert "https://example.org/paper" in body and "Broken (HTTP 404)" in body
    _check(citation.source, state=State.BROKEN, token="t2")  # still broken: nothing new
    assert Notification.objects.count() == 1


def test_a_claim_no_longer_found_is_told_with_the_claim(people):
    live = written_by(people["ed"], live=True)
    citation = _cited(live, "https://example.org/a", verdict=Citation.Verdict.SUPPORTED)
    _check(citation.source, state=State.OK, text="Nothing about speed here.")
    assert told() == {"ed": {"source_problem"}}
    assert "Not found" in NotificationEvent.objects.get().body
    assert "It is <b>2.5 times</b> faster." in NotificationEvent.objects.get().body


def test_healthy_checks_write_nothing(people, django_assert_num_queries):
    live = written_by(people["ed"], live=True)
    citation = _cited(live, "https://example.org/fine")
    with django_assert_num_queries(0):
        notifications.source_problem(
            sources=[citation.source],
            states_before={citation.source.pk: "ok"},
            citations=[citation],
            verdicts_before={citation.pk: "unchecked"},
            problem_states=record.PROBLEM_STATES,
            problem_verdicts=record.PROBLEM_VERDICTS,
        )


# --- Preferences ---------------------------------------------------------------------------


def test_a_kind_turned_off_is_neither_in_the_inbox_nor_mailed(people):
    NotificationPreferences.objects.create(user=people["rita"], submitted=False)
    NotificationPreferences.objects.create(user=people["boss"], sent_back=False)
    workflow.submit_for_review(summary=SummaryFactory(), user=people["rob"])
    assert told() == {"boss": {"submitted"}}


def test_a_kind_turned_off_after_the_event_is_not_mailed(people, mailoutbox):
    workflow.submit_for_review(summary=SummaryFactory(), user=people["rob"])
    NotificationPreferences.objects.create(user=people["rita"], submitted=False)
    send_all()
    assert [m.to for m in mailoutbox] == [[people["boss"].email]]
    states = dict(Notification.objects.values_list("recipient__username", "email_state"))
    assert states == {"rita": "skipped", "boss": "sent"}


# --- At most once --------------------------------------------------------------------------


def test_e_mails_go_out_after_commit_through_the_task(
    people, celery_eager, django_capture_on_commit_callbacks, mailoutbox
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        workflow.submit_for_review(summary=SummaryFactory(), user=people["rob"])
    mails = [c for c in callbacks if c.__qualname__ == f"{events.EMAIL_TASK}.delay"]
    assert mailoutbox == [] and len(mails) == 2
    for callback in mails:
        callback()
    assert sorted(m.to[0] for m in mailoutbox) == ["boss@example.com", "rita@example.com"]


def test_running_the_task_twice_sends_once(people, mailoutbox):
    notifications.summary_submitted(summary=SummaryFactory(), by=people["rob"])
    (first, _) = Notification.objects.order_by("pk")
    send_notification_email(first.pk)
    send_notification_email(first.pk)
    assert len(mailoutbox) == 1
    first.refresh_from_db()
    assert first.email_state == "sent" and first.email_attempts == 1


def test_the_same_event_recorded_twice_is_told_once(people):
    summary = written_by(people["ed"], live=True)
    assert notifications.summary_went_live(summary=summary)
    assert notifications.summary_went_live(summary=summary) == []
    assert notifications.summary_published(summary=summary, by=people["rita"]) == []
    assert Notification.objects.count() == 1


def test_the_database_refuses_a_second_notification_of_an_event_to_a_person(people):
    notifications.summary_submitted(summary=SummaryFactory(), by=people["rob"])
    first = Notification.objects.first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Notification.objects.create(
            event=first.event, recipient=first.recipient, created_at=timezone.now()
        )


def test_a_worker_lost_mid_send_never_sends_it_again(people, mailoutbox):
    """The task claims before it sends: a worker killed after sending (or after claiming)
    leaves the claim, so redeliveries and the sweeper never send it a second time."""
    notifications.summary_submitted(summary=SummaryFactory(), by=people["rob"])
    notification = Notification.objects.first()
    # What a killed worker leaves: claimed ("sending"), the send maybe done, not recorded.
    Notification.objects.filter(pk=notification.pk).update(
        email_state="sending", email_claimed_at=timezone.now() - timedelta(minutes=10)
    )
    send_notification_email(notification.pk)  # the redelivered message
    assert mailoutbox == []
    assert sweep_notifications() is None
    notification.refresh_from_db()
    assert notification.email_state == "interrupted"
    send_notification_email(notification.pk)
    assert mailoutbox == []


class WorkerKilled(BaseException):
    """What a SIGKILL looks like from inside: nothing after it runs."""


def test_a_worker_killed_after_sending_before_recording_sends_nothing_twice(
    people, mailoutbox, monkeypatch
):
    notifications.summary_submitted(summary=SummaryFactory(), by=people["rob"])
    notification = Notification.objects.first()
    record = email._finish

    def die_once_sent(n, state, **kwargs):
        if state == "sent":
            raise WorkerKilled
        return record(n, state, **kwargs)

    monkeypatch.setattr(email, "_finish", die_once_sent)
    with pytest.raises(WorkerKilled):
        send_notification_email(notification.pk)
    assert len(mailoutbox) == 1  # it went out; the worker died before writing that down
    monkeypatch.setattr(email, "_finish", record)
    send_notification_email(notification.pk)  # the message, delivered again (acks_late)
    email.sweep(now=timezone.now() + timedelta(minutes=10))
    send_notification_email(notification.pk)
    assert len(mailoutbox) == 1
    notification.refresh_from_db()
    assert notification.email_state == "interrupted"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_mail_server_down_is_tried_again_then_failed(people, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", _closed_port()
    settings.EMAIL_USE_TLS = False
    settings.NOTIFICATION_EMAIL_MAX_ATTEMPTS = 2
    notifications.summary_submitted(summary=SummaryFactory(), by=people["rob"])
    notification = Notification.objects.first()
    with pytest.raises(email.TransientEmailError):
        email.send_email(notification_id=notification.pk)
    notification.refresh_from_db()
    assert notification.email_state == "pending" and "Connection" in notification.email_error
    assert email.send_email(notification_id=notification.pk) == "failed"


def test_a_refusal_for_good_is_not_tried_again(people, monkeypatch):
    def refuse(self, messages):
        raise smtplib.SMTPRecipientsRefused({"x@example.com": (550, b"no such user")})

    monkeypatch.setattr("django.core.mail.backends.locmem.EmailBackend.send_messages", refuse)
    notifications.summary_submitted(summary=SummaryFactory(), by=people["rob"])
    notification = Notification.objects.first()
    assert email.send_email(notification_id=notification.pk) == "failed"


def test_the_sweeper_queues_e_mails_whose_message_was_lost(
    people, django_capture_on_commit_callbacks
):
    notifications.summary_submitted(summary=SummaryFactory(), by=people["rob"])
    with django_capture_on_commit_callbacks() as callbacks:
        assert email.sweep()["requeued"] == 0
    assert callbacks == []
    with django_capture_on_commit_callbacks() as callbacks:
        assert email.sweep(now=timezone.now() + timedelta(minutes=6))["requeued"] == 2
    pending = set(Notification.objects.values_list("pk", flat=True))
    assert {callback.args for callback in callbacks} == {(pk,) for pk in pending}


def test_people_without_an_address_or_no_longer_active_are_not_mailed(people, mailoutbox):
    notifications.summary_submitted(summary=SummaryFactory(), by=people["rob"])
    people["rita"].email = ""
    people["rita"].save()
    people["boss"].is_active = False
    people["boss"].save()
    send_all()
    assert mailoutbox == []
    assert set(Notification.objects.values_list("email_state", flat=True)) == {"skipped"}


# --- The e-mail ----------------------------------------------------------------------------


def test_the_e_mail_is_plain_text_and_quotes_editors_text_as_typed(people, mailoutbox):
    summary = written_by(people["ed"], status=Summary.Status.IN_REVIEW)
    summary.video.title = 'A <script>alert("x")</script>\ntitle'
    summary.video.save()
    workflow.send_back(summary=summary, user=people["rita"], note="<img src=x onerror=1>")
    send_all()
    (message,) = mailoutbox
    assert message.content_subtype == "plain" and not getattr(message, "alternatives", None)
    assert message.subject == '[Curation] Sent back: A <script>alert("x")</script> title'
    assert "<img src=x onerror=1>" in message.body
    assert f"/admin/summaries/summary/{summary.pk}/change/" in message.body
    assert message.extra_headers["Auto-Submitted"] == "auto-generated"


def test_a_summary_with_an_assigned_reviewer_is_told_to_that_reviewer_only(people):
    from summaries.editing import review

    summary = SummaryFactory(created_by=people["ed"])
    review.assign_reviewer(summary=summary, reviewer=people["rob"], user=people["ed"])
    workflow.submit_for_review(summary=summary, user=people["ed"])
    assert told() == {"rob": {"submitted"}}


def test_changes_are_told_to_the_reviewer_assigned_to_their_summary(people):
    from summaries.editing import review

    live = SummaryFactory(live=True)
    copies.edit_target(summary=live, user=people["ed"])
    review.assign_reviewer(summary=live, reviewer=people["rita"], user=people["ed"])
    workflow.submit_for_review(summary=live, user=people["ed"])
    assert told() == {"rita": {"submitted"}}


def test_an_assignee_who_may_no_longer_publish_is_not_the_only_one_told(people):
    from summaries.editing import review

    summary = SummaryFactory(created_by=people["ed"])
    review.assign_reviewer(summary=summary, reviewer=people["rob"], user=people["ed"])
    people["rob"].groups.clear()
    workflow.submit_for_review(summary=summary, user=people["ed"])
    assert told() == {"rita": {"submitted"}, "boss": {"submitted"}}


# --- Replies in a review -------------------------------------------------------------------


def test_a_reviewers_reply_is_told_to_the_editors_and_whoever_wrote_in_the_review(people):
    from summaries.editing import review

    summary = written_by(people["ed"], people["eve"])
    workflow.submit_for_review(summary=summary, user=people["ed"])
    workflow.send_back(summary=summary, user=people["rob"], note="Cite the 2.5× figure.")
    Notification.objects.all().delete()
    review.reply(summary=summary, user=people["rita"], text="Agreed: the <b>source</b> too.")
    assert told() == {"ed": {"reply"}, "eve": {"reply"}, "rob": {"reply"}}
    event = NotificationEvent.objects.get(kind="reply")
    assert "Agreed: the <b>source</b> too." in event.body and event.actor == people["rita"]


def test_an_editors_reply_while_in_review_reaches_the_reviewers_when_none_took_part(people):
    from summaries.editing import review

    summary = written_by(people["ed"])
    workflow.submit_for_review(summary=summary, user=people["ed"])
    Notification.objects.all().delete()
    review.reply(summary=summary, user=people["ed"], text="The figure is from the talk.")
    assert told() == {"rita": {"reply"}, "rob": {"reply"}, "boss": {"reply"}}


def test_an_editors_reply_reaches_the_assigned_reviewer_only_not_every_reviewer(people):
    from summaries.editing import review

    live = written_by(people["ed"], live=True)
    copies.edit_target(summary=live, user=people["eve"])
    review.assign_reviewer(summary=live, reviewer=people["rita"], user=people["ed"])
    workflow.submit_for_review(summary=live, user=people["eve"])
    Notification.objects.all().delete()
    review.reply(summary=live, user=people["eve"], text="Ready when you are.")
    assert told() == {"rita": {"reply"}, "ed": {"reply"}}


def test_replies_turned_off_are_not_told(people):
    from summaries.editing import review

    summary = written_by(people["ed"])
    NotificationPreferences.objects.create(user=people["ed"], reply=False)
    review.reply(summary=summary, user=people["rita"], text="A question.")
    assert told() == {}
