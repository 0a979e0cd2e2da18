"""A notification's e-mail over real SMTP: a server on loopback, started and stopped here.

Submitting a summary for review queues the reviewers' e-mails for after the commit; the
Celery task (run in the test, eagerly) sends them through Django's SMTP backend to an
aiosmtpd server on a free 127.0.0.1 port, which keeps what it received.
"""

import os
import socket
import subprocess
import sys
from email import message_from_bytes, policy

import pytest
from aiosmtpd.controller import Controller
from django.conf import settings as django_settings

from summaries.editing import workflow
from summaries.models import Notification
from tests.factories import EditorFactory, ReviewerFactory, SummaryFactory

pytestmark = pytest.mark.django_db


class Received:
    """aiosmtpd handler: keeps each message's envelope."""

    def __init__(self):
        self.envelopes = []

    async def handle_DATA(self, server, session, envelope):
        self.envelopes.append(envelope)
        return "250 Message accepted for delivery"


def _free_port() -> int:
    # aiosmtpd 1.4 cannot listen on port 0 (it connects to its own port to check it is
    # up), so a free port is found first.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp_server(settings):
    received = Received()
    controller = Controller(received, hostname="127.0.0.1", port=_free_port())
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.DEFAULT_FROM_EMAIL = "Curation <curation@example.com>"
    try:
        yield received
    finally:
        controller.stop()


def test_submitting_for_review_mails_the_reviewers_over_smtp(
    smtp_server, celery_eager, django_capture_on_commit_callbacks
):
    reviewer = ReviewerFactory(username="rita", email="rita@example.com")
    summary = SummaryFactory()
    summary.video.title = "Scaling <laws> & you"
    summary.video.save()
    with django_capture_on_commit_callbacks(execute=True):
        workflow.submit_for_review(summary=summary, user=EditorFactory(username="ed"))
    (envelope,) = smtp_server.envelopes
    assert envelope.rcpt_tos == ["rita@example.com"]
    assert envelope.mail_from == "curation@example.com"
    message = message_from_bytes(envelope.content, policy=policy.default)
    assert message["Subject"] == "[Curation] Review requested: Scaling <laws> & you"
    assert message.get_content_type() == "text/plain"
    body = message.get_content()
    assert '"Scaling <laws> & you" was sent for review by ed.' in body
    assert f"/admin/summaries/summary/{summary.pk}/change/" in body
    notification = Notification.objects.get(recipient=reviewer)
    assert notification.email_state == "sent" and notification.emailed_at is not None


# --- Settings ------------------------------------------------------------------------------

EMAIL_VARIABLES = ["EMAIL_URL", "EMAIL_HOST", "EMAIL_PORT", "EMAIL_USE_TLS", "EMAIL_USE_SSL"]
SHOW = (
    "from django.conf import settings as s; "
    "print(s.EMAIL_BACKEND.rsplit('.', 2)[-2], s.EMAIL_HOST, s.EMAIL_PORT, "
    "s.EMAIL_USE_TLS, s.EMAIL_USE_SSL)"
)


def mail_settings(**variables: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in EMAIL_VARIABLES}
    return subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "manage.py", "shell", "-v", "0", "-c", SHOW],
        cwd=django_settings.BASE_DIR,
        env={**env, **variables},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({}, "console  25 False False"),
        ({"EMAIL_URL": "smtp+tls://u:p@mail.example.com:2525"}, "smtp mail.example.com 2525 True"),
        ({"EMAIL_HOST": "mail.example.com"}, "smtp mail.example.com 587 True False"),
        (
            {"EMAIL_HOST": "mail.example.com", "EMAIL_USE_SSL": "1"},
            "smtp mail.example.com 465 False True",
        ),
    ],
)
def test_mail_is_printed_unless_a_server_is_configured(variables, expected):
    result = mail_settings(**variables)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith(expected)


def test_a_malformed_email_url_stops_start_up_with_one_line():
    result = mail_settings(EMAIL_URL="carrier-pigeon://coop")
    assert result.returncode != 0
    assert "EMAIL_URL is invalid" in result.stderr and "Traceback" not in result.stderr
