"""The inbox, the notification settings page and the password reset on the admin login."""

import re

import pytest
from django.core.cache import cache
from django.urls import reverse

from summaries import notifications
from summaries.models import Notification, NotificationPreferences
from summaries.notifications import inbox
from tests.factories import EditorFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db

INBOX = reverse("admin:summaries_notification_changelist")
SETTINGS = reverse("admin:summaries_notificationpreferences_changelist")


def notification_url(notification):
    return reverse("admin:summaries_notification_change", args=[notification.pk])


@pytest.fixture
def reviewers():
    """Two reviewers, each told of one summary sent for review by an editor."""
    rita, rob = ReviewerFactory(username="rita"), ReviewerFactory(username="rob")
    notifications.summary_submitted(summary=SummaryFactory(), by=EditorFactory(username="ed"))
    return rita, rob


def test_the_header_shows_the_unread_count_and_the_inbox_lists_own_notifications(client, reviewers):
    rita, rob = reviewers
    notifications.summary_submitted(summary=SummaryFactory(), by=rob)  # rita's second
    client.force_login(rita)
    page = client.get(reverse("admin:index")).content.decode()
    assert f'href="{INBOX}"' in page and "Inbox (2)" in page
    response = client.get(INBOX)
    assert response.status_code == 200
    shown = {n.pk for n in response.context["cl"].result_list}
    assert shown == set(Notification.objects.filter(recipient=rita).values_list("pk", flat=True))
    assert "Inbox (2 unread)" in response.content.decode()


def test_opening_a_notification_marks_it_read(client, reviewers):
    rita, _ = reviewers
    notification = Notification.objects.get(recipient=rita)
    client.force_login(rita)
    response = client.get(notification_url(notification))
    assert response.status_code == 200
    content = response.content.decode()
    assert "sent for review by ed" in content and "Go to the summary" in content
    notification.refresh_from_db()
    assert notification.read_at is not None
    assert "Inbox (0)" in client.get(reverse("admin:index")).content.decode()


def test_another_persons_notification_is_never_shown_or_marked(client, reviewers):
    rita, rob = reviewers
    robs = Notification.objects.get(recipient=rob)
    client.force_login(rita)
    response = client.get(notification_url(robs), follow=True)
    assert robs.event.subject not in response.content.decode()
    assert response.redirect_chain[-1][0] == reverse("admin:index")
    client.post(INBOX, {"action": "mark_read", "_selected_action": [robs.pk]})
    assert inbox.mark_read(user=rita, notification_ids=[robs.pk]) == 0
    robs.refresh_from_db()
    assert robs.read_at is None


def test_the_inbox_escapes_what_editors_typed(client):
    rita = ReviewerFactory(username="rita")
    summary = SummaryFactory()
    summary.video.title = "<script>alert(1)</script>"
    summary.video.save()
    notifications.summary_submitted(summary=summary, by=EditorFactory(username="ed"))
    client.force_login(rita)
    for url in (INBOX, notification_url(Notification.objects.get())):
        content = client.get(url).content.decode()
        assert "<script>alert(1)</script>" not in content
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in content


def test_the_mark_actions_change_own_notifications(client, reviewers):
    rita, _ = reviewers
    own = Notification.objects.get(recipient=rita)
    client.force_login(rita)
    client.post(INBOX, {"action": "mark_read", "_selected_action": [own.pk]})
    own.refresh_from_db()
    assert own.read_at is not None
    client.post(INBOX, {"action": "mark_unread", "_selected_action": [own.pk]})
    own.refresh_from_db()
    assert own.read_at is None


def test_non_staff_have_no_inbox(client, reviewers):
    assert inbox.unread_count(user=None) == 0
    response = client.get(INBOX)
    assert response.status_code == 302 and "login" in response.url


# --- Settings ------------------------------------------------------------------------------


def test_the_settings_page_is_each_persons_own(client):
    ed, eve = EditorFactory(username="ed"), EditorFactory(username="eve")
    eves = NotificationPreferences.objects.create(user=eve)
    client.force_login(ed)
    response = client.get(SETTINGS)
    own = NotificationPreferences.objects.get(user=ed)
    assert response.status_code == 302
    change = reverse("admin:summaries_notificationpreferences_change", args=[own.pk])
    assert response.url == change
    response = client.post(
        change, {"submitted": "on", "published": "on", "went_live": "on"}, follow=True
    )
    assert "Your notification settings were saved." in response.content.decode()
    own.refresh_from_db()
    assert (own.sent_back, own.source_problem, own.published) == (False, False, True)
    others = reverse("admin:summaries_notificationpreferences_change", args=[eves.pk])
    assert client.post(others, {}, follow=True).redirect_chain[-1][0] == reverse("admin:index")
    eves.refresh_from_db()
    assert eves.sent_back is True


# --- Password reset ------------------------------------------------------------------------

RESET = reverse("admin_password_reset")


@pytest.fixture
def reset_mail(celery_eager, django_capture_on_commit_callbacks):
    """Run the reset task in the test, as a worker would after the request."""

    def post(client, address, **extra):
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(RESET, {"email": address}, **extra)

    cache.clear()
    yield post
    cache.clear()


def test_the_login_page_offers_a_reset(client):
    content = client.get(reverse("admin:login")).content.decode()
    assert f'href="{RESET}"' in content and "Forgotten your login credentials?" in content


def test_a_reset_link_arrives_and_sets_a_new_password(client, reset_mail, mailoutbox):
    EditorFactory(username="ed", email="ed@example.com")
    response = reset_mail(client, "ED@example.com")
    assert response.status_code == 302 and response.url == reverse("password_reset_done")
    (message,) = mailoutbox
    assert message.to == ["ed@example.com"]
    link = re.search(r"http://testserver(/admin/reset/\S+/)", message.body).group(1)
    form = client.get(link, follow=True)
    assert form.status_code == 200
    done = client.post(
        form.redirect_chain[-1][0],
        {"new_password1": "a new long passphrase", "new_password2": "a new long passphrase"},
        follow=True,
    )
    assert done.redirect_chain[-1][0] == reverse("password_reset_complete")
    assert client.login(username="ed", password="a new long passphrase")


def test_an_unknown_address_gets_the_same_answer_and_no_mail(client, reset_mail, mailoutbox):
    response = reset_mail(client, "nobody@example.com")
    assert response.status_code == 302 and response.url == reverse("password_reset_done")
    assert mailoutbox == []


@pytest.mark.parametrize("address", ["ed@example.com", "nobody@example.com"])
def test_past_the_limit_per_address_a_429_that_tells_nothing(
    client, reset_mail, mailoutbox, settings, address
):
    settings.PASSWORD_RESET_RATE_EMAIL = "2/h"
    EditorFactory(username="ed", email="ed@example.com")
    answers = [reset_mail(client, address) for _ in range(3)]
    assert [a.status_code for a in answers] == [302, 302, 429]
    content = answers[-1].content.decode()
    assert "Too many password reset requests" in content
    assert "ed@example.com" not in content.replace(f'value="{address}"', "")
    assert len(mailoutbox) == (2 if address == "ed@example.com" else 0)


def test_past_the_limit_per_client_address_a_429(client, reset_mail, settings):
    settings.PASSWORD_RESET_RATE_IP = "2/h"
    answers = [
        reset_mail(client, f"someone{n}@example.com", REMOTE_ADDR="192.0.2.7") for n in range(3)
    ]
    assert [a.status_code for a in answers] == [302, 302, 429]
    other = reset_mail(client, "someone9@example.com", REMOTE_ADDR="192.0.2.8")
    assert other.status_code == 302


def test_the_reset_link_is_on_site_url_whatever_host_the_request_named(
    client, reset_mail, mailoutbox, settings
):
    settings.SITE_URL = "https://curation.example"
    settings.ALLOWED_HOSTS = ["testserver", "127.0.0.1"]
    EditorFactory(username="ed", email="ed@example.com")
    reset_mail(client, "ed@example.com", HTTP_HOST="127.0.0.1:9999")
    (message,) = mailoutbox
    assert re.search(r"https://curation\.example/admin/reset/\S+/", message.body)
    assert "9999" not in message.body and "127.0.0.1" not in message.body
