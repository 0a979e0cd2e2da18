"""Following by e-mail: double opt-in, digests at most once per period, one-click
unsubscribe, the manage page, bounces, and what editors see."""

import datetime
import io
import re
import threading
from email import message_from_bytes, policy

import pytest
import time_machine
from django.core import signing
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token

from summaries import tasks
from summaries.following import digests, signup, tokens
from summaries.following.mail import TransientMailError
from summaries.models import Digest, Subscriber, Subscription, Summary
from summaries.pagecache import middleware
from tests.factories import (
    AppearanceFactory,
    ChannelFactory,
    EditorFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
    UserFactory,
    VideoFactory,
)
from tests.test_notifications_email import smtp_server  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

UTC = datetime.UTC
MONDAY = datetime.datetime(2026, 12, 7, 8, 0, tzinfo=UTC)  # after FOLLOW_DIGEST_HOUR (7)
Frequency = Subscription.Frequency
State = Subscription.State


def follower(email, *, kind="all", obj=None, frequency=Frequency.DAILY, at=None):
    """A confirmed follow of `obj` (or everything) by `email`, from `at`."""
    at = at or MONDAY - datetime.timedelta(days=1)
    target = signup.Target(kind=kind, **({kind: obj} if obj is not None else {}))
    signup.request_subscription(email=email, target=target, frequency=frequency, now=at)
    subscriber = Subscriber.objects.get(email=email)
    signup.confirm(subscriber_id=subscriber.pk, now=at)
    return subscriber


def published(*, at, channel=None, tldr="What it says, in thirty seconds.", title=None, **video):
    """A summary first published (live) at `at`."""
    if channel is not None:
        video["channel"] = channel
    if title is not None:
        video["title"] = title
    return SummaryFactory(
        video=VideoFactory(**video),
        tldr=tldr,
        status=Summary.Status.PUBLISHED,
        publish_at=at,
        first_published_at=at,
    )


def sign_up(client, email="reader@example.com", kind="all", slug="", frequency="daily", **extra):
    data = {"email": email, "kind": kind, "slug": slug, "frequency": frequency}
    return client.post(reverse("summaries:follow"), data, **extra)


def link_in(text, kind):
    """The path of the first /follow/<kind>/… link in `text`."""
    return re.search(rf"http://testserver(/follow/{kind}/[^/\s]+/)", text).group(1)


def digest_to(outbox, email):
    return [message for message in outbox if message.to == [email]]


# --- Double opt-in -------------------------------------------------------------------------


def test_a_sign_up_mails_one_confirmation_and_follows_nothing_until_confirmed(
    client, mailoutbox, celery_eager, django_capture_on_commit_callbacks
):
    channel = ChannelFactory(name="Speed Lab", slug="speed-lab")
    with django_capture_on_commit_callbacks(execute=True):
        answer = sign_up(client, "Reader@Example.com", kind="channel", slug="speed-lab")
    assert answer.status_code == 200
    (confirmation,) = mailoutbox
    assert confirmation.to == ["reader@example.com"]
    assert "Speed Lab" in confirmation.body and "/follow/confirm/" in confirmation.body
    follow = Subscription.objects.get()
    assert follow.state == State.PENDING and follow.channel == channel

    # Pending: a summary of the channel goes out to nobody.
    published(at=MONDAY - datetime.timedelta(hours=1), channel=channel)
    assert digests.send_digests(now=MONDAY) == {"immediate": 0, "daily": 0, "weekly": 0}
    assert len(mailoutbox) == 1

    path = link_in(confirmation.body, "confirm")
    page = client.get(path)
    assert page.status_code == 200 and "Speed Lab" in page.content.decode()
    assert Subscription.objects.get().state == State.PENDING  # a GET confirms nothing
    confirmed = client.post(path)
    assert confirmed.status_code == 302 and "/follow/manage/" in confirmed["Location"]
    assert Subscription.objects.get().state == State.ACTIVE


def test_no_second_confirmation_to_an_address_within_an_hour(
    mailoutbox, celery_eager, django_capture_on_commit_callbacks
):
    first, second = TopicFactory(), TopicFactory()

    def ask(topic, minutes):
        with django_capture_on_commit_callbacks(execute=True):
            signup.request_subscription(
                email="reader@example.com",
                target=signup.Target(kind="topic", topic=topic),
                frequency=Frequency.DAILY,
                now=MONDAY + datetime.timedelta(minutes=minutes),
            )

    ask(first, 0)
    ask(second, 59)
    assert len(mailoutbox) == 1
    ask(second, 61)
    assert len(mailoutbox) == 2
    # The later confirmation names both: one link confirms every pending follow.
    assert first.name in mailoutbox[1].body and second.name in mailoutbox[1].body


def test_the_confirmation_task_sends_once_however_often_it_runs(mailoutbox, celery_eager):
    signup.request_subscription(
        email="reader@example.com", target=signup.Target(kind="all"), frequency="daily"
    )
    subscriber = Subscriber.objects.get()
    tasks.send_follow_confirmation(subscriber.pk)
    tasks.send_follow_confirmation(subscriber.pk)
    assert len(mailoutbox) == 1


def test_the_answer_is_the_same_for_a_new_a_pending_and_a_confirmed_address(client):
    follower("known@example.com")
    sign_up(client, "pending@example.com")
    answers = [sign_up(client, email) for email in ("new@example.com", "pending@example.com")]
    answers.append(sign_up(client, "known@example.com"))
    assert {answer.status_code for answer in answers} == {200}
    assert len({answer.content for answer in answers}) == 1
    assert "Check your e-mail" in answers[0].content.decode()


def test_a_confirmed_follow_keeps_its_frequency_when_someone_signs_it_up_again(client):
    follower("known@example.com", frequency=Frequency.WEEKLY)
    sign_up(client, "known@example.com", frequency="immediate")
    follow = Subscription.objects.get()
    assert (follow.state, follow.frequency) == (State.ACTIVE, Frequency.WEEKLY)


def test_an_invalid_address_is_a_form_error(client):
    answer = sign_up(client, "not an address")
    assert answer.status_code == 400
    assert "Enter a valid email address." in answer.content.decode()
    assert not Subscriber.objects.exists()


def test_following_something_that_does_not_exist_is_a_form_error(client):
    answer = sign_up(client, kind="channel", slug="no-such-channel")
    assert answer.status_code == 400
    assert "nothing to follow here" in answer.content.decode()
    assert sign_up(client, kind="planet", slug="mars").status_code == 400


def test_a_flood_of_sign_ups_from_one_client_is_answered_429(client, settings):
    settings.FOLLOW_RATE_IP = "3/h"
    answers = [sign_up(client, f"reader{n}@example.com").status_code for n in range(4)]
    assert answers == [200, 200, 200, 429]
    limited = sign_up(client, "another@example.com")
    assert limited.status_code == 429
    assert "try again later" in limited.content.decode()
    assert Subscriber.objects.count() == 3


def test_sign_ups_for_one_address_are_limited_from_any_client(client, settings):
    settings.FOLLOW_RATE_EMAIL = "2/h"
    statuses = [
        sign_up(client, "target@example.com", REMOTE_ADDR=f"10.0.0.{n}").status_code
        for n in range(3)
    ]
    assert statuses == [200, 200, 429]


def test_the_sign_up_form_needs_no_csrf_token():
    strict = Client(enforce_csrf_checks=True)
    assert sign_up(strict).status_code == 200


# --- Links: expired, tampered ------------------------------------------------------------


def test_an_expired_confirmation_link_is_a_friendly_410(client, settings):
    subscriber = Subscriber.objects.create(email="reader@example.com", created_at=MONDAY)
    token = tokens.confirm_token(subscriber.pk)
    settings.FOLLOW_CONFIRM_MAX_AGE = -1
    for method in (client.get, client.post):
        answer = method(reverse("summaries:follow-confirm", args=[token]))
        assert answer.status_code == 410
        assert "This link has expired" in answer.content.decode()


@pytest.mark.parametrize("name", ["follow-confirm", "follow-manage", "follow-unsubscribe"])
def test_a_tampered_link_is_a_friendly_400(client, name):
    subscriber = follower("reader@example.com")
    good = {
        "follow-confirm": tokens.confirm_token(subscriber.pk),
        "follow-manage": tokens.manage_token(subscriber.pk),
        "follow-unsubscribe": tokens.unsubscribe_token(subscriber.pk, [1]),
    }[name]
    for token in (good[:-1] + ("A" if good[-1] != "A" else "B"), "x", "1:2:3"):
        for method in (client.get, client.post):
            answer = method(reverse(f"summaries:{name}", args=[token]))
            assert answer.status_code == 400
            assert "This link does not work" in answer.content.decode()
    assert Subscription.objects.get().state == State.ACTIVE


def test_a_link_of_one_kind_does_not_work_as_another(client):
    subscriber = follower("reader@example.com")
    confirm = tokens.confirm_token(subscriber.pk)
    assert client.get(reverse("summaries:follow-manage", args=[confirm])).status_code == 400


# --- Unsubscribe and manage ----------------------------------------------------------------


def test_one_click_unsubscribe_is_a_post_without_csrf_or_confirmation():
    subscriber = follower("reader@example.com")
    follow = Subscription.objects.get()
    url = reverse(
        "summaries:follow-unsubscribe", args=[tokens.unsubscribe_token(subscriber.pk, [follow.pk])]
    )
    strict = Client(enforce_csrf_checks=True)
    page = strict.get(url)
    assert page.status_code == 200 and "<button" in page.content.decode()
    assert Subscription.objects.get().state == State.ACTIVE  # the GET only shows a button
    answer = strict.post(url, {"List-Unsubscribe": "One-Click"})
    assert answer.status_code == 200 and "You are unsubscribed" in answer.content.decode()
    assert Subscription.objects.get().state == State.ENDED


def test_the_manage_page_lists_the_follows_of_its_address_only(client):
    channel, topic = ChannelFactory(name="Speed Lab"), TopicFactory(name="Agents")
    subscriber = follower("reader@example.com", kind="channel", obj=channel)
    follower("reader@example.com", kind="topic", obj=topic)
    follower("other@example.com", kind="channel", obj=ChannelFactory(name="Other Channel"))
    url = reverse("summaries:follow-manage", args=[tokens.manage_token(subscriber.pk)])
    page = client.get(url).content.decode()
    assert "Speed Lab" in page and "Agents" in page and "Other Channel" not in page

    mine = Subscription.objects.get(subscriber=subscriber, kind="topic")
    other = Subscription.objects.get(subscriber__email="other@example.com")
    client.post(url, {"subscription": mine.pk, "frequency": "weekly", "action": "save"})
    client.post(url, {"subscription": other.pk, "frequency": "weekly", "action": "save"})
    assert Subscription.objects.get(pk=mine.pk).frequency == Frequency.WEEKLY
    assert Subscription.objects.get(pk=other.pk).frequency == Frequency.DAILY  # not theirs
    client.post(url, {"subscription": mine.pk, "frequency": "weekly", "action": "unsubscribe"})
    assert Subscription.objects.get(pk=mine.pk).state == State.ENDED
    client.post(url, {"action": "unsubscribe-all"})
    assert set(subscriber.subscriptions.values_list("state", flat=True)) == {State.ENDED}
    assert Subscription.objects.get(pk=other.pk).state == State.ACTIVE


def test_an_expired_manage_link_is_a_friendly_410(client, settings):
    subscriber = follower("reader@example.com")
    token = tokens.manage_token(subscriber.pk)
    settings.FOLLOW_MANAGE_MAX_AGE = -1
    assert client.get(reverse("summaries:follow-manage", args=[token])).status_code == 410


def test_follow_pages_are_never_cached_and_say_so(client, settings):
    subscriber = follower("reader@example.com", kind="topic", obj=TopicFactory(name="Agents"))
    manage = reverse("summaries:follow-manage", args=[tokens.manage_token(subscriber.pk)])
    follow = Subscription.objects.get()
    unsubscribe = reverse(
        "summaries:follow-unsubscribe", args=[tokens.unsubscribe_token(subscriber.pk, [follow.pk])]
    )
    for response in (
        client.get(manage),
        client.get(unsubscribe),
        client.get(reverse("summaries:follow")),
        sign_up(client),
    ):
        directives = {d.strip() for d in response["Cache-Control"].split(",")}
        assert {"private", "no-store"} <= directives
        assert getattr(response, middleware.CACHEABLE_ATTRIBUTE, None) is None
    # Changed behind any cache's back: the next visit shows it.
    Subscription.objects.update(state=State.ENDED)
    assert "You follow nothing" in client.get(manage).content.decode()


def test_the_channel_page_with_its_form_stays_cacheable(client):
    channel = ChannelFactory(slug="speed-lab")
    first = client.get(channel.get_absolute_url())
    page = first.content.decode()
    assert 'class="follow-form"' in page and 'name="kind" value="channel"' in page
    assert "csrfmiddlewaretoken" not in page and not first.cookies
    assert "public" in first["Cache-Control"]


# --- Digests -------------------------------------------------------------------------------


def test_a_digest_holds_the_new_summaries_of_what_the_address_follows(mailoutbox):
    channel, topic, person = ChannelFactory(name="Speed Lab"), TopicFactory(), PersonFactory()
    follower("channel@example.com", kind="channel", obj=channel)
    follower("topic@example.com", kind="topic", obj=topic)
    follower("person@example.com", kind="person", obj=person)
    follower("all@example.com")
    before = MONDAY - datetime.timedelta(hours=2)
    of_channel = published(at=before, channel=channel, title="Channel news", tldr="Fast models.")
    of_topic = published(at=before, title="Topic news")
    of_topic.video.topics.add(topic)
    of_person = published(at=before, title="Person news")
    AppearanceFactory(video=of_person.video, person=person)
    published(at=before, title="Unrelated news")

    assert digests.send_digests(now=MONDAY)["daily"] == 4
    (to_channel,) = digest_to(mailoutbox, "channel@example.com")
    assert "Channel news" in to_channel.body and "Fast models." in to_channel.body
    assert "http://testserver" + of_channel.video.get_absolute_url() in to_channel.body
    assert "Topic news" not in to_channel.body and "Unrelated news" not in to_channel.body
    (to_topic,) = digest_to(mailoutbox, "topic@example.com")
    assert "Topic news" in to_topic.body and "Channel news" not in to_topic.body
    (to_person,) = digest_to(mailoutbox, "person@example.com")
    assert "Person news" in to_person.body and "Topic news" not in to_person.body
    (to_all,) = digest_to(mailoutbox, "all@example.com")
    for title in ("Channel news", "Topic news", "Person news", "Unrelated news"):
        assert title in to_all.body
    assert to_all.subject == "[Curation] 4 new summaries"


def test_each_frequency_is_sent_in_its_own_periods(mailoutbox):
    follower("now@example.com", frequency=Frequency.IMMEDIATE)
    follower("daily@example.com", frequency=Frequency.DAILY)
    follower("weekly@example.com", frequency=Frequency.WEEKLY)
    published(at=MONDAY - datetime.timedelta(hours=3))
    early = MONDAY.replace(hour=6)  # before FOLLOW_DIGEST_HOUR: only "as soon as published"
    assert digests.send_digests(now=early) == {"immediate": 1}
    assert digests.send_digests(now=MONDAY) == {"immediate": 0, "daily": 1, "weekly": 1}

    tuesday = MONDAY + datetime.timedelta(days=1)
    published(at=tuesday - datetime.timedelta(hours=1))
    assert digests.send_digests(now=tuesday) == {"immediate": 1, "daily": 1, "weekly": 0}
    next_monday = MONDAY + datetime.timedelta(days=7)
    assert digests.send_digests(now=next_monday) == {"immediate": 0, "daily": 0, "weekly": 1}
    assert len(digest_to(mailoutbox, "weekly@example.com")) == 2


def test_nothing_unpublished_is_ever_in_a_digest(mailoutbox):
    channel = ChannelFactory()
    follower("reader@example.com", kind="channel", obj=channel)
    before = MONDAY - datetime.timedelta(hours=1)
    SummaryFactory(video=VideoFactory(channel=channel, title="A draft"))
    SummaryFactory(
        video=VideoFactory(channel=channel, title="In review"), status=Summary.Status.IN_REVIEW
    )
    scheduled = MONDAY + datetime.timedelta(hours=1)
    published(at=scheduled, channel=channel, title="Scheduled for later")
    unpublished = published(at=before, channel=channel, title="Taken down")
    Summary.objects.filter(pk=unpublished.pk).update(status=Summary.Status.DRAFT)
    live = published(at=before, channel=channel, title="Live one", tldr="Live words.")
    SummaryFactory(
        video=None, working_copy_of=live, tldr="Unreviewed change.", status=Summary.Status.DRAFT
    )

    digests.send_digests(now=MONDAY)
    (digest,) = mailoutbox
    body = digest.body + digest.alternatives[0][0]
    assert "Live one" in body and "Live words." in body
    for hidden in ("A draft", "In review", "Scheduled for later", "Taken down", "Unreviewed"):
        assert hidden not in body

    # The scheduled one is in the first digest after it goes live, once.
    tuesday = MONDAY + datetime.timedelta(days=1)
    digests.send_digests(now=tuesday)
    assert "Scheduled for later" in mailoutbox[1].body and "Live one" not in mailoutbox[1].body


def test_a_summary_published_before_the_follow_was_confirmed_is_not_sent(mailoutbox):
    published(at=MONDAY - datetime.timedelta(days=2))
    follower("reader@example.com", at=MONDAY - datetime.timedelta(days=1))
    assert digests.send_digests(now=MONDAY)["daily"] == 0


def test_a_digest_is_sent_at_most_once_per_period_when_the_task_runs_twice(mailoutbox):
    follower("reader@example.com")
    published(at=MONDAY - datetime.timedelta(hours=1))
    with time_machine.travel(MONDAY, tick=False):
        tasks.send_digests()
        tasks.send_digests()
    assert len(mailoutbox) == 1
    assert Digest.objects.get().state == Digest.State.SENT


def test_a_period_claimed_by_another_run_is_not_sent_again(mailoutbox):
    subscriber = follower("reader@example.com")
    published(at=MONDAY - datetime.timedelta(hours=1))
    # Another worker claimed today's digest (it is sending it, or was lost doing so).
    Digest.objects.create(
        subscriber=subscriber, frequency="daily", period="2026-12-07", created_at=MONDAY
    )
    assert digests.send_digests(now=MONDAY)["daily"] == 0
    assert mailoutbox == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(connection.vendor != "postgresql", reason="SQLite runs one writer at a time")
def test_concurrent_runs_send_each_digest_once(mailoutbox):
    follower("reader@example.com", frequency=Frequency.IMMEDIATE)
    published(at=MONDAY - datetime.timedelta(hours=1))
    start, errors = threading.Barrier(3), []

    def run():
        try:
            start.wait()
            digests.send_digests(now=MONDAY)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(mailoutbox) == 1 and Digest.objects.count() == 1


def test_claims_of_periods_long_past_are_dropped():
    subscriber = follower("reader@example.com")
    old = MONDAY - datetime.timedelta(days=31)
    Digest.objects.create(subscriber=subscriber, frequency="daily", period="old", created_at=old)
    Digest.objects.create(subscriber=subscriber, frequency="weekly", period="w", created_at=MONDAY)
    digests.send_digests(now=MONDAY)
    assert list(Digest.objects.values_list("period", flat=True)) == ["w"]


def test_a_claim_is_refused_for_a_period_already_claimed():
    subscriber = follower("reader@example.com")
    published(at=MONDAY - datetime.timedelta(hours=1))
    claim = {"subscriber_id": subscriber.pk, "frequency": "daily", "period": "2026-12-07"}
    end = MONDAY - digests.SETTLE
    assert digests.claim(**claim, end=end, now=MONDAY) is not None
    Subscription.objects.update(digest_from=MONDAY - datetime.timedelta(days=1))
    assert digests.claim(**claim, end=end, now=MONDAY) is None


def test_a_mail_server_that_cannot_be_reached_gives_the_claim_back(settings, mailoutbox):
    follower("reader@example.com")
    published(at=MONDAY - datetime.timedelta(hours=1))
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", 9  # nothing listens
    with pytest.raises(TransientMailError):
        digests.send_digests(now=MONDAY)
    assert not Digest.objects.exists()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert digests.send_digests(now=MONDAY + datetime.timedelta(minutes=2))["daily"] == 1


def test_a_bounced_address_gets_nothing(mailoutbox):
    follower("reader@example.com")
    published(at=MONDAY - datetime.timedelta(hours=1))
    signup.record_bounce(email="Reader@example.com")
    assert digests.send_digests(now=MONDAY)["daily"] == 0
    assert set(Subscription.objects.values_list("state", flat=True)) == {State.ENDED}


# --- Over real SMTP ------------------------------------------------------------------------


def test_a_digest_over_smtp_has_both_parts_one_click_unsubscribe_and_no_images(
    smtp_server,  # noqa: F811 - the fixture
    client,
):
    channel = ChannelFactory(name="Speed Lab")
    subscriber = follower("reader@example.com", kind="channel", obj=channel)
    published(
        at=MONDAY - datetime.timedelta(hours=1),
        channel=channel,
        title="Fast <models> & agents",
        tldr="Speed <matters>.",
    )
    assert digests.send_digests(now=MONDAY)["daily"] == 1
    (envelope,) = smtp_server.envelopes
    assert envelope.rcpt_tos == ["reader@example.com"]
    message = message_from_bytes(envelope.content, policy=policy.default)
    assert message["Subject"] == "[Curation] Fast <models> & agents"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    unsubscribe = str(message["List-Unsubscribe"]).strip()
    assert unsubscribe.startswith("<http://testserver/follow/unsubscribe/")
    assert message.get_content_type() == "multipart/alternative"
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "Speed <matters>." in text and "Speed &lt;matters&gt;." in html
    assert "<img" not in html.lower() and "/follow/manage/" in html and "/follow/manage/" in text

    # The header's link unsubscribes with one POST, as a mail client sends it.
    path = unsubscribe.strip("<>").removeprefix("http://testserver")
    strict = Client(enforce_csrf_checks=True)
    assert strict.post(path, {"List-Unsubscribe": "One-Click"}).status_code == 200
    assert not subscriber.subscriptions.filter(state=State.ACTIVE).exists()


def test_the_confirmation_over_smtp_carries_the_unsubscribe_headers(
    smtp_server,  # noqa: F811 - the fixture
    celery_eager,
    django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True):
        signup.request_subscription(
            email="reader@example.com", target=signup.Target(kind="all"), frequency="daily"
        )
    (envelope,) = smtp_server.envelopes
    message = message_from_bytes(envelope.content, policy=policy.default)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert (
        str(message["List-Unsubscribe"])
        .strip()
        .startswith("<http://testserver/follow/unsubscribe/")
    )
    assert message.get_body(("html",)) is not None and message.get_body(("plain",)) is not None


# --- Bounces -------------------------------------------------------------------------------


def test_the_bounce_command_takes_addresses_as_arguments_or_on_stdin(monkeypatch):
    follower("one@example.com")
    follower("two@example.com")
    follower("three@example.com")
    out = io.StringIO()
    call_command("record_bounce", "ONE@example.com", stdout=out)
    assert "1 follow(s) ended" in out.getvalue()
    monkeypatch.setattr("sys.stdin", io.StringIO("two@example.com\n\n# a comment\n"))
    call_command("record_bounce", stdout=io.StringIO())
    states = dict(Subscription.objects.values_list("subscriber__email", "state"))
    assert states == {
        "one@example.com": State.ENDED,
        "two@example.com": State.ENDED,
        "three@example.com": State.ACTIVE,
    }
    assert Subscriber.objects.get(email="one@example.com").bounced_at is not None


def test_the_bounce_command_refuses_what_is_not_an_address():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="Not an e-mail address: nope"):
        call_command("record_bounce", "nope")


def test_the_bounce_endpoint_needs_its_permission(client):
    from django.contrib.auth.models import Permission

    follower("reader@example.com")
    url = "/api/v1/follow-bounces/"
    body = {"email": "reader@example.com"}
    assert client.post(url, body, content_type="application/json").status_code == 401
    editor = EditorFactory()
    token = Token.objects.create(user=editor)
    auth = {"HTTP_AUTHORIZATION": f"Token {token.key}"}
    assert client.post(url, body, content_type="application/json", **auth).status_code == 403
    assert Subscription.objects.get().state == State.ACTIVE

    editor.user_permissions.add(Permission.objects.get(codename="record_bounces"))
    bad = client.post(url, {"email": "nope"}, content_type="application/json", **auth)
    assert bad.status_code == 400 and "email" in bad.json()["error"]["fields"]
    answer = client.post(url, body, content_type="application/json", **auth)
    assert answer.status_code == 202
    assert Subscription.objects.get().state == State.ENDED
    unknown = client.post(
        url, {"email": "nobody@example.com"}, content_type="application/json", **auth
    )
    assert unknown.status_code == 202  # the same answer for an address nobody knows


# --- Editors -------------------------------------------------------------------------------


def test_editors_see_follower_counts_but_not_addresses(client):
    from django.contrib.auth.models import Permission

    channel = ChannelFactory(name="Speed Lab")
    follower("a@example.com", kind="channel", obj=channel)
    follower("b@example.com", kind="channel", obj=channel)
    follower("c@example.com")
    signup.request_subscription(  # pending: not counted
        email="d@example.com",
        target=signup.Target(kind="channel", channel=channel),
        frequency="daily",
    )
    url = reverse("admin:summaries_subscription_changelist")
    editor = EditorFactory()
    client.force_login(editor)
    page = client.get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert "<td>Speed Lab</td><td>2</td>" in text and "<td>Everything</td><td>1</td>" in text
    assert "@example.com" not in text

    editor.user_permissions.add(Permission.objects.get(codename="view_subscriber_addresses"))
    client.force_login(type(editor).objects.get(pk=editor.pk))
    text = client.get(url).content.decode()
    assert "a@example.com" in text and "c@example.com" in text
    assert "d@example.com" not in text  # not confirmed


def test_staff_without_the_view_permission_see_no_counts(client):
    follower("a@example.com", kind="channel", obj=ChannelFactory(name="Speed Lab"))
    client.force_login(UserFactory(is_staff=True))
    page = client.get(reverse("admin:summaries_subscription_changelist"), follow=True)
    assert page.status_code in (200, 403) and "Speed Lab" not in page.content.decode()


def test_there_is_no_admin_page_of_one_follow(client):
    follower("a@example.com")
    follow = Subscription.objects.get()
    client.force_login(EditorFactory())
    page = client.get(f"/admin/summaries/subscription/{follow.pk}/change/", follow=True)
    assert "a@example.com" not in page.content.decode()


def test_not_even_a_superuser_adds_changes_or_deletes_a_follow(admin_client, admin_user, rf):
    from django.contrib import admin

    follower("a@example.com")
    follow = Subscription.objects.get()
    request = rf.get("/admin/")
    request.user = admin_user
    model_admin = admin.site.get_model_admin(Subscription)
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, follow)
    assert not model_admin.has_delete_permission(request, follow)
    listing = reverse("admin:summaries_subscription_changelist")
    bulk = {"action": "delete_selected", "_selected_action": [follow.pk], "post": "yes"}
    admin_client.post(listing, bulk)
    admin_client.post(f"{listing}{follow.pk}/delete/", {"post": "yes"})
    assert Subscription.objects.filter(pk=follow.pk).exists()
    assert "delete_selected" not in admin_client.get(listing).content.decode()


def test_unsubscribe_tokens_never_expire():
    token = tokens.unsubscribe_token(5, [3, 1])
    assert tokens.read_unsubscribe_token(token) == tokens.Unsubscribe(5, (1, 3))
    with pytest.raises(tokens.BadToken):
        tokens.read_unsubscribe_token(signing.dumps([5, [1]], salt="another"))


def test_the_manage_page_and_a_sign_up_cost_few_queries(client, django_assert_num_queries):
    subscriber = follower("reader@example.com", kind="topic", obj=TopicFactory())
    follower("reader@example.com")
    url = reverse("summaries:follow-manage", args=[tokens.manage_token(subscriber.pk)])
    # The page cache's generation (read for every anonymous GET), the follows with their
    # channels, people and topics.
    with django_assert_num_queries(2):
        assert client.get(url).status_code == 200
    # Already following everything: the address (get_or_create, then locked), its follow.
    with django_assert_num_queries(5):
        assert sign_up(client).status_code == 200


def test_only_summaries_of_the_last_eight_days_are_new(mailoutbox):
    channel = ChannelFactory()
    # Confirmed long ago; nothing it follows was published since, so its window is old.
    follower(
        "reader@example.com", kind="channel", obj=channel, at=MONDAY - datetime.timedelta(days=60)
    )
    published(at=MONDAY - datetime.timedelta(days=10), channel=channel, title="Ten days old")
    published(at=MONDAY - datetime.timedelta(days=1), channel=channel, title="A day old")
    digests.send_digests(now=MONDAY)
    (digest,) = mailoutbox
    assert "A day old" in digest.body and "Ten days old" not in digest.body


# --- Addresses that follow nothing are forgotten -----------------------------------------

DAY = datetime.timedelta(days=1)


def test_an_address_that_has_followed_nothing_for_the_retention_period_is_deleted(
    settings, celery_eager
):
    settings.FOLLOW_FORGET_AFTER = 30 * 24 * 3600
    gone = follower("gone@example.com", at=MONDAY - 60 * DAY)
    signup.unsubscribe(subscriber_id=gone.pk, now=MONDAY - 31 * DAY)
    recent = follower("recent@example.com", at=MONDAY - 60 * DAY)
    signup.unsubscribe(subscriber_id=recent.pk, now=MONDAY - 5 * DAY)  # may follow again
    follower("active@example.com", at=MONDAY - 60 * DAY)
    never_confirmed = signup.Target(kind="all")
    signup.request_subscription(
        email="pending@example.com",
        target=never_confirmed,
        frequency="daily",
        now=MONDAY - 40 * DAY,
    )
    Subscriber.objects.filter(email="pending@example.com").update(confirmation_sent_at=None)
    bounced = follower("bounced@example.com", at=MONDAY - 60 * DAY)
    signup.record_bounce(email=bounced.email, now=MONDAY - 45 * DAY)

    with time_machine.travel(MONDAY, tick=False):
        tasks.forget_unfollowed_addresses.delay()  # run eagerly, as a worker would

    left = set(Subscriber.objects.values_list("email", flat=True))
    assert left == {"recent@example.com", "active@example.com"}
    assert not Subscription.objects.filter(subscriber__email="gone@example.com").exists()
    assert signup.forget_unfollowed(now=MONDAY) == 0  # nothing twice


def test_a_forgotten_address_can_sign_up_again(client, settings, mailoutbox):
    settings.FOLLOW_FORGET_AFTER = 0
    gone = follower("again@example.com", at=MONDAY - 60 * DAY)
    signup.unsubscribe(subscriber_id=gone.pk, now=MONDAY - 31 * DAY)
    assert signup.forget_unfollowed(now=MONDAY) == 1
    assert sign_up(client, email="again@example.com").status_code == 200
    assert Subscriber.objects.filter(email="again@example.com").exists()


@pytest.mark.parametrize("address", ["a@[127.0.0.1]", "a@localhost", "a@example.localhost"])
def test_an_address_at_an_ip_literal_or_a_local_name_is_a_form_error(client, address, mailoutbox):
    answer = sign_up(client, address)
    assert answer.status_code == 400
    assert "Enter an address at a public domain name" in answer.content.decode()
    assert not Subscriber.objects.exists() and mailoutbox == []


@pytest.mark.parametrize(
    "address", ["a@[127.0.0.1]", "a@[IPv6:::1]", "a@localhost", "a@intranet", "a@x.localhost."]
)
def test_the_sign_up_service_refuses_ip_literals_and_single_label_domains(address):
    with pytest.raises(signup.AddressRefused):
        signup.request_subscription(
            email=address, target=signup.Target(kind="all"), frequency="daily"
        )
    assert not Subscriber.objects.exists()
