"""In a real browser: an editor imports a YouTube auto-caption transcript on the summary page,
pins each statement to the words a suggestion offers, and sees a changed number refused at
publishing; a reviewer tries to publish, is told which statement, overrides its pin with a
note and publishes; History keeps the note. axe-core finds nothing on the Receipts panel,
a statement's page and the import page, at 1280 and 360 px."""

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse
from playwright.sync_api import expect

from summaries.models import KeyPoint, Summary, Transcript
from tests.factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    SummaryFactory,
    UserFactory,
    reviewers_group,
)
from tests.integration.browser_helpers import DESKTOP, PHONE, screenshot, sign_in
from tests.receipts_factories import CONTRADICTED_POINT, OPENING, SPEECH, VERBATIM_POINT

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

AXE_OPTIONS = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "best-practice"]}}
NOTE = "The slide at 0:09 corrects the speaker: four times, not two and a half."


def clock(seconds: float) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"00:{int(minutes):02d}:{rest:06.3f}"


def auto_captions(lines) -> bytes:
    """`lines` as YouTube writes auto-captions: each line a cue showing the line before it
    above the new one with a time for each word, then a 10 ms cue of the finished line."""
    out, previous = ["WEBVTT", "Kind: captions", "Language: en", ""], " "
    for start, end, text in lines:
        words = text.split()
        step = (end - start - 0.01) / len(words)
        timed = words[0] + "".join(
            f"<{clock(start + step * index)}><c> {word}</c>"
            for index, word in enumerate(words[1:], start=1)
        )
        settings = "align:start position:0%"
        out += [f"{clock(start)} --> {clock(end - 0.01)} {settings}", previous, timed, ""]
        out += [f"{clock(end - 0.01)} --> {clock(end)} {settings}", text, " ", ""]
        previous = text
    return "\n".join(out).encode()


@pytest.fixture
def summary():
    """A draft of a one-minute video: a point said word for word, one whose number the
    speaker did not say, and a chapter opening with the first words of the video."""
    summary = SummaryFactory(
        tldr="The new model is faster and cheap.",
        video__duration_seconds=60,
        video__title="Model release",
    )
    KeyPointFactory(summary=summary, position=1, title="Price", body=VERBATIM_POINT, time=22)
    KeyPointFactory(summary=summary, position=2, title="Faster", body=CONTRADICTED_POINT, time=6)
    ChapterFactory(summary=summary, position=1, title="Opening", start_time=0, body=OPENING)
    return summary


def change_url(live_server, summary) -> str:
    return live_server.url + reverse("admin:summaries_summary_change", args=[summary.pk])


def row(page, part):
    return page.locator(f"#pin-{type(part).__name__.lower()}-{part.pk}")


def pin_to_the_first_suggestion(page, name: str) -> None:
    """From the Receipts panel: a statement's suggestions, and its first one accepted."""
    page.get_by_role("link", name=f"Suggest words to pin for {name}").click()
    expect(page.get_by_role("heading", name="Where the transcript says it")).to_be_visible()
    page.get_by_role("button", name="Pin to these words").first.click()
    expect(page.locator("ul.messagelist")).to_contain_text(f"Pinned {name}")


def fits(page, selector: str) -> bool:
    """Whether the element is as wide as its content (nothing scrolls sideways)."""
    return page.evaluate(
        "(selector) => { const e = document.querySelector(selector);"
        " return e.scrollWidth <= e.clientWidth + 1; }",
        selector,
    )


def axe_violations(browser, live_server, user, url: str, context: str | None = None) -> dict:
    """axe-core's findings on `url` at 1280 and 360 px, in light and dark colours."""
    found = {}
    for scheme in ("light", "dark"):
        for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
            browser_context = browser.new_context(
                bypass_csp=True, viewport=DESKTOP, color_scheme=scheme
            )
            try:
                page = browser_context.new_page()
                sign_in(page, live_server, user)
                page.set_viewport_size(viewport)
                page.goto(url)
                results = Axe().run(page, context=context, options=AXE_OPTIONS)
                if results.violations_count:
                    found[f"{scheme} {label}"] = results.generate_snapshot()
                if not fits(page, context or "html"):
                    found[f"{scheme} {label} width"] = f"{context or 'the page'} scrolls sideways"
                screenshot(page, f"receipts-{url.rstrip('/').rsplit('/', 1)[-1]}-{scheme}-{label}")
            finally:
                browser_context.close()
    return found


def test_an_editor_pins_a_reviewer_overrides_and_publishes(live_server, page, browser, summary):
    editor = EditorFactory(username="eddie")
    sign_in(page, live_server, editor)
    page.goto(change_url(live_server, summary))
    panel = page.locator("#receipts")
    expect(panel).to_contain_text("This video has no transcript yet")

    # Import: the auto-caption file, in the video's language.
    panel.get_by_role("link", name="Import transcript").click()
    expect(page.locator("#id_language")).to_have_value("en")
    page.set_input_files(
        "#id_transcript_file",
        files=[{"name": "release.en.vtt", "mimeType": "text/vtt", "buffer": auto_captions(SPEECH)}],
    )
    page.get_by_role("button", name="Import transcript").click()
    expect(page.locator("ul.messagelist")).to_contain_text("Imported the transcript")
    transcript = Transcript.objects.get(video=summary.video)
    assert transcript.format == "vtt" and transcript.word_count == sum(
        len(text.split()) for _, _, text in SPEECH
    )
    expect(panel).to_contain_text("Pinned against the English transcript")

    # Each statement pinned where the transcript best says it.
    for name in ("Key point 1", "Key point 2", "Chapter 1"):
        pin_to_the_first_suggestion(page, name)
    price = KeyPoint.objects.get(summary=summary, title="Price")
    faster = KeyPoint.objects.get(summary=summary, title="Faster")
    expect(row(page, price).locator(".pin-status")).to_have_text("✓ Verbatim")
    expect(row(page, price)).to_contain_text("Pricing starts at twenty dollars a month")
    expect(row(page, price).locator(".receipts-when")).to_contain_text("0:22")
    expect(row(page, faster).locator(".pin-status")).to_have_text("≠ Contradicted")
    expect(row(page, faster)).to_contain_text("two and a half")
    screenshot(page, "receipts-editor-pinned")

    # The changed number keeps the summary from being published: said in Things to check;
    # an editor has no Publish button and no override.
    things = page.locator("#things-to-check")
    expect(things).to_contain_text("Publishing is refused")
    expect(things).to_contain_text("Faster")
    expect(page.locator("input[name=_publish]")).to_have_count(0)
    expect(row(page, faster).get_by_role("button", name="Override with this note")).to_have_count(0)
    page.click("input[name=_review]")
    expect(page.locator("ul.messagelist")).to_contain_text("Sent for review")

    # A reviewer (only a reviewer) is refused at Publish, told which statement and why.
    reviewer = UserFactory(username="rita", is_staff=True)
    reviewer.groups.add(reviewers_group())
    reviewer.save()
    context = browser.new_context(viewport=DESKTOP)
    try:
        review = context.new_page()
        sign_in(review, live_server, reviewer)
        review.goto(change_url(live_server, summary))
        review.click("input[name=_publish]")
        refusal = review.locator("ul.messagelist .error")
        expect(refusal).to_contain_text("The transcript does not support these statements")
        expect(refusal).to_contain_text("Key point “Faster”")
        expect(refusal).to_contain_text("contradicted")
        assert Summary.objects.get(pk=summary.pk).status != Summary.Status.PUBLISHED

        # The override, with its note; then the summary publishes.
        review.goto(change_url(live_server, summary))
        faster_row = row(review, faster)
        faster_row.get_by_label("Why it may be published as it is").fill(NOTE)
        faster_row.get_by_role("button", name="Override with this note").click()
        expect(review.locator("ul.messagelist")).to_contain_text("Overrode the pin of Key point 2")
        expect(row(review, faster)).to_contain_text(f"overridden by rita: “{NOTE}”")
        expect(review.locator("#things-to-check")).not_to_contain_text("Publishing is refused")
        screenshot(review, "receipts-reviewer-overridden")
        review.click("input[name=_publish]")
        expect(review.locator("ul.messagelist")).to_contain_text("Published")
        assert Summary.objects.get(pk=summary.pk).status == Summary.Status.PUBLISHED
        assert Transcript.objects.get(video=summary.video).state == Transcript.State.LIVE

        review.goto(live_server.url + reverse("admin:summaries_summary_history", args=[summary.pk]))
        expect(review.locator("#change-history")).to_contain_text(NOTE)
        expect(review.locator("#change-history")).to_contain_text("Pinned “Price”")
    finally:
        context.close()


def test_no_axe_violations_on_the_receipts_pages(live_server, browser, summary):
    reviewer = UserFactory(username="rita", is_staff=True)
    reviewer.groups.add(reviewers_group())
    reviewer.save()
    from summaries.editing import pinning

    pinning.import_transcript(
        video=summary.video, data=auto_captions(SPEECH), user=None, filename="release.vtt"
    )
    for part in KeyPoint.objects.filter(summary=summary):
        best = pinning.suggestions(summary=summary, part=part, limit=1)[0]
        pinning.set_pin(
            summary=summary, part=part, first=best.first_word, end=best.end_word, user=None
        )
    faster = KeyPoint.objects.get(summary=summary, title="Faster")
    pages = {
        change_url(live_server, summary): "#receipts",
        live_server.url
        + reverse(
            "admin:summaries_summary_pin_part", args=[summary.pk, f"keypoint-{faster.pk}"]
        ): None,
        live_server.url
        + reverse("admin:summaries_summary_transcript_import", args=[summary.pk]): None,
    }
    found = {}
    for url, context in pages.items():
        for where, violations in axe_violations(
            browser, live_server, reviewer, url, context
        ).items():
            found[f"{url} {where}"] = violations
    assert found == {}
