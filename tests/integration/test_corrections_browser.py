"""In a real browser: a reviewer publishes an editor's change as a correction with a note;
readers see the dated note and what changed on the summary page, on /corrections/ and in
its feed; the API lists it and webhook endpoints are sent a summary.corrected event."""

import pytest
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from summaries.models import Correction, WebhookDelivery, WebhookEndpoint
from tests.factories import EditorFactory, ReviewerFactory, SummaryFactory
from tests.integration.browser_helpers import screenshot, sign_in

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

NOTE = "The summary said the model wins every benchmark; it wins most of them."


def test_a_reviewer_publishes_a_correction_that_readers_and_clients_see(live_server, browser, page):
    live = SummaryFactory(live=True, tldr="The model wins every benchmark.")
    slug = live.video.slug
    endpoint = WebhookEndpoint.objects.create(
        url="http://127.0.0.1:9/hooks", events=["summary.corrected"]
    )
    change_url = live_server.url + reverse("admin:summaries_summary_change", args=[live.pk])

    # An editor (Editors only) fixes the text and sends the change to review.
    sign_in(page, live_server, EditorFactory(username="eddie"))
    page.goto(change_url)
    expect(page.locator("input[name=change_kind]")).to_have_count(0)  # may not publish
    page.fill("#id_tldr", "The model wins most benchmarks.")
    page.click("input[name=_review]")
    expect(page.locator("ul.messagelist")).to_contain_text("Sent for review")

    # A reviewer publishes it as a correction, with the note readers will see.
    context = browser.new_context()
    try:
        review = context.new_page()
        sign_in(review, live_server, ReviewerFactory(username="rosa"))
        review.goto(change_url)
        review.check("input[name=change_kind][value=correction]")
        review.click("input[name=_publish]")
        expect(review.locator("#content")).to_contain_text("A correction needs a public note")
        review.check("input[name=change_kind][value=correction]")
        review.fill("#id_change_note", NOTE)
        review.click("input[name=_publish]")
        expect(review.locator("ul.messagelist")).to_contain_text("Published")
    finally:
        context.close()
    correction = Correction.objects.get()
    assert correction.kind == "correction" and correction.note == NOTE

    # A reader sees the dated note and, behind a disclosure, what changed.
    reader = browser.new_context()
    try:
        visit = reader.new_page()
        visit.goto(f"{live_server.url}/videos/{slug}/")
        notes = visit.locator("section.corrections")
        day = timezone.localtime(correction.published_at).strftime("%-d %b %Y")
        expect(notes).to_contain_text(f"Correction, {day}: {NOTE}")
        expect(notes.locator("ins").first).not_to_be_visible()
        notes.locator("summary", has_text="What changed").click()
        expect(notes.locator("ins").first).to_have_text("most")
        expect(notes.locator("del").first).to_have_text("every")
        screenshot(visit, "corrections-summary-page")

        visit.click("text=All updates and corrections")
        expect(visit.locator("h1")).to_have_text("Updates and corrections")
        expect(visit.locator(".corrections-list")).to_contain_text(NOTE)
        feed = visit.request.get(f"{live_server.url}/corrections/atom/")
        assert feed.ok and NOTE in feed.text()

        api = visit.request.get(f"{live_server.url}/api/v1/summaries/{slug}/corrections/")
        assert api.ok
        (item,) = api.json()
        assert item["kind"] == "correction" and item["note"] == NOTE
    finally:
        reader.close()

    # Endpoints that asked for it are sent the event, once.
    (delivery,) = WebhookDelivery.objects.filter(endpoint=endpoint)
    assert delivery.event.type == "summary.corrected"
    assert f'"note":"{NOTE}"' in delivery.event.body
