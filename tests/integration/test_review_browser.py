"""In a real browser: a reviewer sees what a live summary's changes change, and the editor
and the reviewer talk it over in the summary's review conversation."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from summaries.editing import copies, save, workflow
from summaries.models import Chapter, ReviewMessage, Summary
from tests.factories import ChapterFactory, EditorFactory, SummaryFactory, UserFactory
from tests.factories import reviewers_group as make_reviewers_group
from tests.integration.browser_helpers import DESKTOP, screenshot, sign_in

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


@pytest.fixture
def changes_in_review():
    """A live summary whose changes an editor sent for review with a message."""
    editor = EditorFactory(username="eddie")
    live = SummaryFactory(live=True, tldr="Speed matters for agents.")
    ChapterFactory(summary=live, position=1, title="Opening", body="The first chapter.")
    ChapterFactory(summary=live, position=2, title="Closing", body="The last chapter.")
    copy, _ids, _made = copies.edit_target(summary=live, user=editor)
    copy.tldr = "Speed matters a lot for coding agents."
    opening, closing = Chapter.objects.filter(summary=copy).order_by("position")
    opening.body = "The opening chapter, rewritten."
    new = Chapter(title="Aside", body="A new chapter.")
    save.save_summary(summary=copy, parts={Chapter: [closing, opening, new]}, user=editor)
    workflow.submit_for_review(summary=live, user=editor, message="Reordered the chapters.")
    return live, editor


def test_a_reviewer_sees_what_changed_and_the_editor_replies(
    live_server, page, browser, changes_in_review
):
    live, editor = changes_in_review
    reviewer = UserFactory(username="rita", is_staff=True)  # a reviewer, not an editor
    reviewer.groups.add(make_reviewers_group())
    reviewer.save()
    sign_in(page, live_server, reviewer)

    # From the dashboard's "awaiting your review" entry to what changed.
    page.goto(live_server.url + reverse("admin:index"))
    page.get_by_role("link", name="what changed").click()
    expect(page.locator("h1")).to_contain_text("What changed")
    expect(page.locator("ins").first).to_be_visible()
    expect(page.locator(".revision-compare")).to_contain_text("a lot")
    expect(page.locator(".badge.added")).to_have_count(1)
    expect(page.locator(".badge.moved")).to_have_count(1)
    expect(page.locator("ins", has_text="opening")).to_be_visible()
    expect(page.locator(".review-thread")).to_contain_text("Reordered the chapters.")
    screenshot(page, "review-what-changed")

    # Back on the changes: the link beside Publish, then a reply.
    page.get_by_role("link", name="Back to the changes").first.click()
    expect(page.locator("a.what-changed")).to_be_visible()
    page.fill("#id_review_reply", "Why is the aside <here>?")
    page.get_by_role("button", name="Add reply").click()
    expect(page.locator("ul.messagelist")).to_contain_text("reply was added")
    expect(page.locator(".review-messages li").last).to_contain_text("Why is the aside <here>?")

    page.fill("#id_review_note", "Move the aside after the closing chapter.")
    page.click("input[name=_send_back]")
    expect(page.locator("ul.messagelist")).to_contain_text("Sent back")

    # The editor, in a browser of their own, reads the whole conversation and answers.
    context = browser.new_context(viewport=DESKTOP)
    try:
        editor_page = context.new_page()
        sign_in(editor_page, live_server, editor)
        editor_page.goto(
            live_server.url + reverse("admin:summaries_summary_change", args=[live.pk])
        )
        thread = editor_page.locator(".review-messages li")
        expect(thread).to_have_count(3)
        expect(thread.nth(0)).to_contain_text("Reordered the chapters.")
        expect(thread.nth(1)).to_contain_text("Why is the aside <here>?")
        expect(thread.nth(2)).to_contain_text("Move the aside after the closing chapter.")
        editor_page.fill("#id_review_reply", "Done.")
        editor_page.get_by_role("button", name="Add reply").click()
        expect(editor_page.locator(".review-messages li").last).to_contain_text("Done.")
        # A reply is not an unsaved edit of the summary: nothing is offered back.
        expect(editor_page.locator(".draft-offer")).to_have_count(0)
        screenshot(editor_page, "review-conversation")
    finally:
        context.close()

    kinds = list(ReviewMessage.objects.values_list("kind", flat=True))
    assert kinds == ["submitted", "reply", "sent_back", "reply"]
    assert Summary.objects.get(working_copy_of=live).status == Summary.Status.DRAFT
