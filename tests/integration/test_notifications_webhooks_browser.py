"""In a real browser: a reviewer is told in the admin inbox when an editor sends a summary
for review; a webhook endpoint's owner sends it a test event, and another editor finds
neither the endpoint nor its secret."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from summaries.models import Summary
from tests.factories import EditorFactory, SummaryFactory, reviewers_group
from tests.integration.browser_helpers import sign_in
from tests.test_webhooks_admin import editors_with_webhooks, make_endpoint

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_a_reviewer_finds_a_summary_sent_for_review_in_the_inbox(live_server, browser, page):
    summary = SummaryFactory(tldr="Ready for a look.", video__title="Speed matters")
    editor = EditorFactory(username="eddie")  # Editors only
    reviewer = EditorFactory(username="rosa")
    reviewer.groups.set([reviewers_group()])  # Reviewers only

    sign_in(page, live_server, editor)
    page.goto(live_server.url + reverse("admin:summaries_summary_change", args=[summary.pk]))
    page.click("input[name=_review]")
    expect(page.locator("ul.messagelist")).to_contain_text("Sent for review")
    assert Summary.objects.get(pk=summary.pk).status == Summary.Status.IN_REVIEW
    expect(page.locator(".inbox-link")).to_contain_text("Inbox (0)")  # not told of her own

    context = browser.new_context()
    try:
        review = context.new_page()
        sign_in(review, live_server, reviewer)
        inbox = review.locator(".inbox-link")
        expect(inbox).to_contain_text("Inbox (1)")
        inbox.click()
        row = review.locator("#result_list tbody tr").first
        expect(row).to_contain_text("Speed matters")
        row.locator("a").first.click()
        review.goto(live_server.url + reverse("admin:index"))
        expect(review.locator(".inbox-link")).to_contain_text("Inbox (0)")
    finally:
        context.close()


def test_an_endpoints_owner_sends_a_test_event_and_another_editor_cannot_reach_it(
    live_server, browser, page
):
    editors_with_webhooks()
    owner = EditorFactory(username="olga")
    endpoint = make_endpoint(owner=owner, url="http://127.0.0.1:9/hooks", description="Olga's")
    change = live_server.url + reverse("admin:summaries_webhookendpoint_change", args=[endpoint.pk])

    sign_in(page, live_server, owner)
    page.goto(change)
    expect(page.locator("body")).to_contain_text(endpoint.secret)
    page.click("input[value='Send a test event']")
    expect(page.locator("ul.messagelist")).to_contain_text("A test event is on its way")

    context = browser.new_context()
    try:
        other = context.new_page()
        sign_in(other, live_server, EditorFactory(username="oscar"))
        other.goto(live_server.url + reverse("admin:summaries_webhookendpoint_changelist"))
        expect(other.locator("body")).not_to_contain_text("Olga's")
        other.goto(change)
        expect(other.locator("body")).not_to_contain_text(endpoint.secret)
    finally:
        context.close()
