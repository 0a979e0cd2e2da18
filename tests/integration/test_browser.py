"""In a real browser: an editor revises and republishes the demo summary; readers see it."""

import io
import re

import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from summaries.models import Summary
from tests.factories import SummaryFactory, editors_group, reviewers_group
from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, PHONE, TIMEOUT_MS

# Transactional (the live server reads what the test writes); serialized rollback restores the
# migrated data, such as the Editors group, for the tests that run after these.
pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

DEMO_SLUG = "speed-maxis-unite-why-fast-ai-models-matter-for-agents"


@pytest.fixture
def demo_summary():
    call_command("load_demo", stdout=io.StringIO())
    return Summary.objects.select_related("video").get(video__slug=DEMO_SLUG)


@pytest.fixture
def editor_login(settings, tmp_path):
    """The `make run` editor account, made by create_demo_editor (password file in tmp)."""
    settings.VAR_DIR = tmp_path
    # The groups as their migrations make them, even after an earlier transactional test
    # emptied them (create_demo_editor only adds the user to them).
    editors_group(), reviewers_group()
    out = io.StringIO()
    call_command("create_demo_editor", stdout=out)
    username, password = re.search(r"Editor login: (\S+) / (\S+)", out.getvalue()).groups()
    return username, password


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.screenshot(path=ARTIFACTS / f"{name}-{label}-{viewport['width']}.png", full_page=True)
    page.set_viewport_size(DESKTOP)


def test_editor_revises_and_republishes_the_demo_summary(
    live_server, page, reader, demo_summary, editor_login
):
    page.set_default_timeout(TIMEOUT_MS)
    page.set_viewport_size(DESKTOP)
    username, password = editor_login

    page.goto(f"{live_server.url}/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text(username.upper(), ignore_case=True)

    page.goto(live_server.url + reverse("admin:summaries_summary_changelist"))
    page.get_by_role("link", name=demo_summary.video.title).click()
    expect(page.locator("#id_tldr")).to_have_value(demo_summary.tldr)

    # The whole summary is on one page: its chapters and the citations found in their text.
    chapter_titles = "input[name^='chapters-'][name$='-title']:not([name*='__prefix__'])"
    titles = page.locator(chapter_titles).evaluate_all("inputs => inputs.map(input => input.value)")
    # Each saved chapter, then the empty row that adds one without JavaScript.
    assert titles == [*demo_summary.chapters.values_list("title", flat=True), ""]
    assert len(titles) == 3
    citations = page.locator("body")
    for citation in demo_summary.citations.select_related("source"):
        expect(citations).to_contain_text(citation.link_text)
        expect(citations).to_contain_text(citation.source.host)
    screenshot(page, "admin-summary-change")

    new_tldr = "Speed matters for agents: revised in a real browser."
    page.fill("#id_tldr", new_tldr)
    page.click("input[name=_publish]")
    expect(page.locator("ul.messagelist")).to_contain_text("Published")

    demo_summary.refresh_from_db()
    assert demo_summary.tldr == new_tldr
    assert demo_summary.is_live()

    response = reader.goto(f"{live_server.url}/videos/{DEMO_SLUG}/")
    assert response.status == 200
    expect(reader.locator("body")).to_contain_text(new_tldr)
    expect(reader.locator("body")).to_contain_text(demo_summary.video.title)
    screenshot(reader, "reader-summary")


def test_a_draft_summary_is_not_found_by_readers(live_server, reader):
    draft = SummaryFactory(tldr="Not for readers yet.")
    assert draft.status == Summary.Status.DRAFT

    response = reader.goto(f"{live_server.url}/videos/{draft.video.slug}/")

    assert response.status == 404
    expect(reader.locator("body")).not_to_contain_text("Not for readers yet.")
