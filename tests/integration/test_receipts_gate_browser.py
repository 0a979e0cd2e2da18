"""In a real browser, the publish gate as editors meet it: an editor imports the video's
transcript on the summary page, pins a key point to the words a suggestion offers and sees
it is a paraphrase; a reviewer's Publish is refused with a message linking to that
statement's row; the editor approves the paraphrase (the panel names them), the reviewer
publishes, and a reader sees the statement's "▶ 0:06"."""

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from summaries.models import Chapter, KeyPoint, Summary, Transcript
from tests.factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    ReviewerFactory,
    SummaryFactory,
)
from tests.integration.browser_helpers import DESKTOP, screenshot, sign_in
from tests.receipts_factories import OPENING, PARAPHRASED_POINT, SPEECH, vtt

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

WATCH = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"


@pytest.fixture
def summary():
    """A draft of a one-minute video: a key point that paraphrases what is said at 0:06,
    and a chapter opening with the video's first words."""
    summary = SummaryFactory(
        tldr="The new model is faster.",
        video__duration_seconds=60,
        video__title="Model release",
        video__source_url=WATCH,
    )
    KeyPointFactory(summary=summary, position=1, title="Speed", body=PARAPHRASED_POINT, time=6)
    ChapterFactory(summary=summary, position=1, title="Opening", start_time=0, body=OPENING)
    return summary


def change_url(live_server, summary) -> str:
    return live_server.url + reverse("admin:summaries_summary_change", args=[summary.pk])


def anchor(part) -> str:
    return f"pin-{type(part).__name__.lower()}-{part.pk}"


def pin_to_the_first_suggestion(page, name: str) -> None:
    page.get_by_role("link", name=f"Suggest words to pin for {name}").click()
    expect(page.get_by_role("heading", name="Where the transcript says it")).to_be_visible()
    page.get_by_role("button", name="Pin to these words").first.click()
    expect(page.locator("ul.messagelist")).to_contain_text(f"Pinned {name}")


def test_a_paraphrase_is_refused_until_an_editor_approves_it(live_server, page, browser, summary):
    editor = EditorFactory(username="eddie")
    sign_in(page, live_server, editor)
    page.goto(change_url(live_server, summary))
    panel = page.locator("#receipts")

    # The transcript, imported from the summary's own page.
    panel.get_by_role("link", name="Import transcript").click()
    page.set_input_files(
        "#id_transcript_file",
        files=[{"name": "release.vtt", "mimeType": "text/vtt", "buffer": vtt(SPEECH)}],
    )
    page.get_by_role("button", name="Import transcript").click()
    expect(page.locator("ul.messagelist")).to_contain_text("Imported the transcript")
    assert Transcript.objects.filter(video=summary.video).count() == 1

    # The key point and the chapter's start pinned at the first suggestion.
    pin_to_the_first_suggestion(page, "Key point 1")
    pin_to_the_first_suggestion(page, "Chapter 1")
    point = KeyPoint.objects.get(summary=summary)
    chapter = Chapter.objects.get(summary=summary)
    point_row = page.locator(f"#{anchor(point)}")
    expect(point_row.locator(".pin-status")).to_have_text("≈ Paraphrase")
    expect(point_row).to_contain_text("two and a half times faster")
    expect(page.locator(f"#{anchor(chapter)} .pin-status")).to_have_text("✓ Verbatim")
    # Things to check links the statement that keeps the summary from being published.
    things = page.locator("#things-to-check")
    expect(things).to_contain_text("Publishing is refused")
    expect(things.locator(f'a[href="#{anchor(point)}"]')).to_contain_text(
        "no editor approved it as a paraphrase"
    )
    page.click("input[name=_review]")
    expect(page.locator("ul.messagelist")).to_contain_text("Sent for review")

    reviewer = ReviewerFactory(username="rita")
    context = browser.new_context(viewport=DESKTOP)
    try:
        review = context.new_page()
        sign_in(review, live_server, reviewer)
        review.goto(change_url(live_server, summary))
        review.click("input[name=_publish]")
        refusal = review.locator("ul.messagelist .error")
        expect(refusal).to_contain_text("The transcript does not support these statements")
        statement = refusal.get_by_role("link", name="Key point “")
        expect(statement).to_contain_text("(at 0:06) is not word for word")
        screenshot(review, "receipts-gate-refused")
        statement.click()  # to the statement's row of the Receipts panel
        assert review.url.endswith(f"#{anchor(point)}")
        expect(review.locator(f"#{anchor(point)}")).to_be_in_viewport()
        assert Summary.objects.get(pk=summary.pk).status != Summary.Status.PUBLISHED

        # The editor approves the paraphrase: the panel names who did.
        page.goto(change_url(live_server, summary))
        page.locator(f"#{anchor(point)}").get_by_role(
            "button", name="Approve the paraphrase"
        ).click()
        expect(page.locator("ul.messagelist")).to_contain_text("Approved the paraphrase")
        expect(page.locator(f"#{anchor(point)}")).to_contain_text("approved by eddie")
        expect(page.locator("#things-to-check")).not_to_contain_text("Publishing is refused")

        # The reviewer publishes; the transcript goes live with the summary.
        review.goto(change_url(live_server, summary))
        review.click("input[name=_publish]")
        expect(review.locator("ul.messagelist")).to_contain_text("Published")
        assert Summary.objects.get(pk=summary.pk).status == Summary.Status.PUBLISHED
        assert Transcript.objects.get(video=summary.video).state == Transcript.State.LIVE
    finally:
        context.close()

    # A reader sees where the statement is said.
    reader = browser.new_context(viewport=DESKTOP)
    try:
        article = reader.new_page()
        article.goto(live_server.url + Summary.objects.get(pk=summary.pk).get_absolute_url())
        receipt = article.get_by_role("link", name="Play from 0:06, where this is said")
        expect(receipt.first).to_have_text("▶ 0:06")
        screenshot(article, "receipts-gate-reader")
    finally:
        reader.close()
