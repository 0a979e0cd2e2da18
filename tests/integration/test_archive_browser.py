"""In a real browser: a citation whose page died is shown with its verified archived copy
("Archived copy, 3 Dec 2026", a link to the copy and Robust Links attributes on its links,
in the text and in the list of sources, dated when it was cited); a citation whose page
works again shows its live label, whatever copy is kept."""

from datetime import UTC, datetime

import pytest
from django.core.cache import cache
from playwright.sync_api import expect

from summaries.models import ArchivedCopy, Citation
from tests.integration.browser_helpers import ARTIFACTS
from tests.test_source_labels import summary_citing

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]

CAPTURED = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
CONFIRMED = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
SNAPSHOT = "https://web.archive.org/web/20261203120000/https://{}.example.org/"


def keep_copy(summary, name: str) -> None:
    citation = Citation.objects.get(summary=summary, url=f"https://{name}.example.org/")
    ArchivedCopy.objects.create(
        citation=citation,
        url=SNAPSHOT.format(name),
        captured_at=CAPTURED,
        key_phrase=citation.key_phrase,
        verified_at=CAPTURED,
        matched_by="digest",
        looked_up_at=CAPTURED,
        shown=True,
    )


@pytest.fixture
def summary_url(live_server):
    summary = summary_citing(
        {
            "gone": {"state": "broken", "error_class": "http", "status_code": 404},
            "back": {"state": "ok", "status_code": 200},
        },
        verdicts={"gone": "unavailable", "back": "supported"},
    )
    Citation.objects.filter(summary=summary).update(confirmed_at=CONFIRMED)
    keep_copy(summary, "gone")
    keep_copy(summary, "back")  # its page works again: the copy is not shown
    cache.clear()
    return live_server.url + summary.get_absolute_url()


def test_readers_see_the_archived_copy_label_and_robust_links(reader, summary_url):
    reader.goto(summary_url)
    sources = reader.locator('section[aria-labelledby="sources"]')
    gone = sources.locator("li").filter(has=reader.get_by_role("link", name="gone", exact=True))
    expect(gone.locator(".source-label-name")).to_have_text("Archived copy, 3 Dec 2026")
    link = gone.get_by_role("link", name="gone", exact=True)
    expect(link).to_have_attribute("data-originalurl", "https://gone.example.org/")
    expect(link).to_have_attribute("data-versionurl", SNAPSHOT.format("gone"))
    expect(link).to_have_attribute("data-versiondate", "2026-06-01")
    chapters = reader.locator('section[aria-labelledby="chapters"]')
    in_text = chapters.get_by_role("link", name="gone", exact=True)
    expect(in_text).to_have_attribute("data-versionurl", SNAPSHOT.format("gone"))
    expect(in_text).to_have_attribute("data-versiondate", "2026-06-01")
    copy = gone.get_by_role("link", name="Open the archived copy")
    expect(copy).to_have_attribute("href", SNAPSHOT.format("gone"))

    back = sources.locator("li").filter(has=reader.get_by_role("link", name="back", exact=True))
    expect(back.locator(".source-label-name")).to_have_text("Checked 3 Dec 2026")
    back_link = back.get_by_role("link", name="back", exact=True)
    assert back_link.get_attribute("data-versionurl") is None
    expect(back.get_by_role("link", name="Open the archived copy")).to_have_count(0)
    ARTIFACTS.mkdir(exist_ok=True)
    sources.screenshot(path=ARTIFACTS / "archived-copy-label.png")
