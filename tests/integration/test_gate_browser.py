"""In a real browser: an Editors-only user tries the roads around review, and a reader in
another browser sees nothing of it until a Reviewers-only user publishes the changes."""

import pytest
import reversion
from django.urls import reverse
from playwright.sync_api import expect

from summaries.editing import restore
from summaries.models import Summary, Video
from tests.factories import ChapterFactory, EditorFactory, SummaryFactory, reviewers_group
from tests.integration.browser_helpers import sign_in

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def test_an_editors_restore_and_video_edit_reach_readers_only_through_review(
    live_server, browser, page, reader
):
    summary = SummaryFactory(live=True, tldr="The reviewed words.", video__title="Reviewed title")
    ChapterFactory(summary=summary, position=1, title="Chapter", body="Text.")
    with reversion.create_revision():
        summary.tldr = "An old, unreviewed text."
        Summary.objects.filter(pk=summary.pk).update(tldr=summary.tldr)
        reversion.add_to_revision(summary)
    Summary.objects.filter(pk=summary.pk).update(tldr="The reviewed words.")
    old = restore.history_versions(summary).first()
    public = live_server.url + summary.get_absolute_url()

    editor = EditorFactory(username="edna")  # Editors only: may not publish
    sign_in(page, live_server, editor)
    history = reverse("admin:summaries_summary_revision", args=[summary.pk, old.pk])
    page.goto(live_server.url + history)
    page.click("input[value='Restore this version']")
    expect(page.locator("ul.messagelist")).to_contain_text("as unpublished changes")
    expect(page.locator("input[name=_publish]")).to_have_count(0)  # no publish button for her

    page.goto(live_server.url + reverse("admin:summaries_video_change", args=[summary.video_id]))
    page.fill("#id_title", "A title nobody reviewed")
    page.click("input[name=_save]")
    expect(page.locator("ul.messagelist")).to_contain_text("unpublished changes")

    reader.goto(public)
    expect(reader.locator("body")).to_contain_text("The reviewed words.")
    expect(reader.locator("body")).to_contain_text("Reviewed title")
    expect(reader.locator("body")).not_to_contain_text("unreviewed")
    expect(reader.locator("body")).not_to_contain_text("nobody reviewed")

    reviewer = EditorFactory(username="rhea")
    reviewer.groups.set([reviewers_group()])  # Reviewers only
    context = browser.new_context()
    try:
        review = context.new_page()
        sign_in(review, live_server, reviewer)
        review.goto(live_server.url + reverse("admin:summaries_summary_change", args=[summary.pk]))
        review.click("input[name=_publish]")
        expect(review.locator("ul.messagelist")).to_contain_text("Published")
    finally:
        context.close()

    reader.reload()
    expect(reader.locator("body")).to_contain_text("An old, unreviewed text.")
    expect(reader.locator("body")).to_contain_text("A title nobody reviewed")
    assert Video.objects.get(pk=summary.video_id).title == "A title nobody reviewed"
