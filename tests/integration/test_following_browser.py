"""In a real browser: a reader follows a channel by e-mail at 360 px, confirms from the
mail a loopback SMTP server received, gets a digest when a summary of the channel is
published, and unsubscribes by the message's one-click link; axe-core finds nothing on the
form and the follow pages."""

import datetime
import re
from email import message_from_bytes, policy

import pytest
import time_machine
from axe_playwright_python.sync_playwright import Axe
from django.utils import timezone
from playwright.sync_api import expect

from summaries import tasks
from summaries.editing import workflow
from summaries.models import Subscription
from tests.factories import ChannelFactory, SummaryFactory, VideoFactory
from tests.integration.browser_helpers import (
    DESKTOP,
    PHONE,
    TIMEOUT_MS,
    no_horizontal_scroll,
    screenshot,
)
from tests.test_notifications_email import smtp_server  # noqa: F401 - a fixture

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]}}


def axe_findings(page, name: str) -> dict:
    """axe-core's findings on the page as shown, at 1280 and 360 px."""
    found = {}
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        results = Axe().run(page, options=AXE_OPTIONS)
        if results.violations_count:
            found[label] = results.generate_snapshot()
        if not no_horizontal_scroll(page):
            found[f"{label} width"] = "the page scrolls sideways"
        screenshot(page, f"follow-{name}-{label}")
    page.set_viewport_size(PHONE)
    return found


def received(smtp, count: int):
    """The `count`th message the loopback server received, parsed."""
    assert len(smtp.envelopes) == count, [e.content[:200] for e in smtp.envelopes]
    return message_from_bytes(smtp.envelopes[count - 1].content, policy=policy.default)


def link(message, kind: str) -> str:
    text = message.get_body(("plain",)).get_content()
    return re.search(rf"http://\S+/follow/{kind}/\S+/", text).group(0)


def test_a_reader_follows_a_channel_confirms_gets_a_digest_and_unsubscribes(
    live_server,
    page,
    smtp_server,  # noqa: F811 - the fixture
    celery_eager,
    settings,
):
    settings.SITE_URL = live_server.url
    channel = ChannelFactory(name="Speed Lab", slug="speed-lab")
    SummaryFactory(live=True, video=VideoFactory(channel=channel, title="An older video"))
    page.set_default_timeout(TIMEOUT_MS)
    page.set_viewport_size(PHONE)

    # Sign up on the channel page, at 360 px, without a login.
    page.goto(f"{live_server.url}/channels/speed-lab/")
    assert axe_findings(page, "channel") == {}
    form = page.locator(".page-header .follow-form")
    expect(form).to_contain_text("Follow Speed Lab by e-mail")
    form.get_by_label("E-mail address").fill("reader@example.com")
    form.get_by_label("How often").select_option(label="As soon as published")
    form.get_by_role("button", name="Follow").click()
    expect(page.get_by_role("heading", name="Check your e-mail")).to_be_visible()
    assert axe_findings(page, "check-your-mail") == {}

    # The confirmation arrives; following its link shows what is confirmed and a button.
    confirmation = received(smtp_server, 1)
    assert confirmation["To"] == "reader@example.com"
    page.goto(link(confirmation, "confirm"))
    expect(page.get_by_text("Channel: Speed Lab")).to_be_visible()
    assert axe_findings(page, "confirm") == {}
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("status")).to_contain_text("Confirmed")
    assert axe_findings(page, "manage") == {}
    assert Subscription.objects.get().state == Subscription.State.ACTIVE

    # A summary of the channel is published; the digest task sends it.
    summary = SummaryFactory(
        video=VideoFactory(channel=channel, title="Fast models, faster agents"),
        tldr="Speed changes what agents can do.",
    )
    workflow.publish_summary(summary=summary, user=None)
    with time_machine.travel(timezone.now() + datetime.timedelta(minutes=2)):
        tasks.send_digests()
    digest = received(smtp_server, 2)
    assert digest["Subject"] == "[Curation] Fast models, faster agents"
    assert "Speed changes what agents can do." in digest.get_body(("plain",)).get_content()
    assert digest["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    one_click = str(digest["List-Unsubscribe"]).strip().strip("<>")

    # The one-click link: a mail client POSTs it (no cookie, no token); a reader who opens
    # it gets a page with the button.
    page.goto(one_click)
    assert axe_findings(page, "unsubscribe") == {}
    page.get_by_role("button", name="Unsubscribe").click()
    expect(page.get_by_role("heading", name="You are unsubscribed")).to_be_visible()
    assert Subscription.objects.get().state == Subscription.State.ENDED
    answer = page.request.post(one_click, form={"List-Unsubscribe": "One-Click"})
    assert answer.ok
