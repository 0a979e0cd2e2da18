"""What readers see of updates and corrections: on the summary page, in its structured
data, in the feeds and on the site-wide /corrections/ page."""

import datetime
import json
import re
import xml.etree.ElementTree as ET

import pytest
import time_machine
from django.urls import reverse

from summaries.editing import copies, corrections, save, workflow
from summaries.models import Correction

from .factories import SummaryFactory

pytestmark = pytest.mark.django_db

ATOM = "{http://www.w3.org/2005/Atom}"
PUBLISHED = datetime.datetime(2026, 12, 1, 9, 0, tzinfo=datetime.UTC)
CORRECTED = datetime.datetime(2026, 12, 3, 10, 30, tzinfo=datetime.UTC)


@pytest.fixture
def live():
    with time_machine.travel(PUBLISHED, tick=False):
        summary = SummaryFactory(tldr="The model is fast on every benchmark.")
        workflow.publish_summary(summary=summary, user=None)
    return summary


def publish(
    live, reviewer, *, kind, note="", tldr="The model is fast on most benchmarks.", at=CORRECTED
):
    copy, _ids, _made = copies.edit_target(summary=live, user=None)
    copy.tldr = tldr
    save.save_summary(summary=copy, parts={}, user=None)
    with time_machine.travel(at, tick=False):
        workflow.publish_summary(summary=live, user=reviewer, change_kind=kind, note=note)


def page(client, summary) -> str:
    response = client.get(summary.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def jsonld(content: str) -> dict:
    found = re.search(r'<script type="application/ld\+json">(.*?)</script>', content, re.S)
    return json.loads(found.group(1))


def test_the_page_shows_a_dated_correction_and_what_changed_right_after_publishing(
    client, live, reviewer
):
    assert "Updates and corrections" not in page(client, live)  # cached now
    publish(live, reviewer, kind="correction", note="It is fast on most, not all, benchmarks.")
    content = page(client, live)
    assert "Correction, <time" in content and ">3 Dec 2026</time>" in content
    assert "It is fast on most, not all, benchmarks." in content
    assert "<summary>What changed</summary>" in content
    assert "<del>every</del>" in content and "<ins>most</ins>" in content


def test_an_update_says_updated_and_a_typo_fix_shows_nothing(client, live, reviewer):
    publish(live, reviewer, kind="typo", tldr="The model is fast on every benchmark!")
    content = page(client, live)
    assert "Updates and corrections" not in content and "<ins>" not in content
    publish(live, reviewer, kind="update", note="Two benchmarks added.")
    content = page(client, live)
    assert "Updated <time" in content and "Two benchmarks added." in content
    assert content.count('class="correction ') == 1


def test_a_withdrawn_correction_says_so_with_its_reason(client, live, reviewer):
    publish(live, reviewer, kind="correction", note="Not all benchmarks.")
    page(client, live)
    correction = Correction.objects.get()
    with time_machine.travel(CORRECTED + datetime.timedelta(days=1), tick=False):
        corrections.withdraw_correction(correction=correction, user=reviewer, note="It was right.")
    content = page(client, live)
    assert (
        "Withdrawn on <time" in content and ">4 Dec 2026</time></strong>: It was right." in content
    )
    assert "Not all benchmarks." in content  # never removed silently


def test_notes_are_shown_as_text(client, live, reviewer):
    publish(live, reviewer, kind="correction", note="<script>alert(1)</script> fixed")
    content = page(client, live)
    assert "&lt;script&gt;alert(1)&lt;/script&gt; fixed" in content


def test_structured_data_has_the_last_change_and_each_correction(client, live, reviewer):
    assert jsonld(page(client, live))["dateModified"] == PUBLISHED.isoformat()
    publish(live, reviewer, kind="correction", note="Most, not all.")
    later = CORRECTED + datetime.timedelta(days=2)
    publish(live, reviewer, kind="typo", tldr="The model is fast on most benchmarks!", at=later)
    data = jsonld(page(client, live))
    assert data["dateModified"] == later.isoformat()  # any published change moves it
    assert data["correction"] == [
        {
            "@type": "CorrectionComment",
            "text": "Most, not all.",
            "datePublished": CORRECTED.isoformat(),
        }
    ]


def atom_updated(client, summary) -> datetime.datetime:
    root = ET.fromstring(client.get(reverse("summaries:feed-atom")).content)  # noqa: S314 - the site's own feed
    page_url = f"http://testserver{summary.get_absolute_url()}"
    (entry,) = [e for e in root.findall(f"{ATOM}entry") if e.findtext(f"{ATOM}id") == page_url]
    return datetime.datetime.fromisoformat(entry.findtext(f"{ATOM}updated"))


def test_atom_updated_moves_on_updates_and_corrections_not_on_typo_fixes(client, live, reviewer):
    assert atom_updated(client, live) == PUBLISHED
    publish(live, reviewer, kind="update", note="More.")
    assert atom_updated(client, live) == CORRECTED
    later = CORRECTED + datetime.timedelta(days=1)
    publish(live, reviewer, kind="typo", tldr="Typo fixed.", at=later)
    assert atom_updated(client, live) == CORRECTED


def test_the_corrections_page_lists_updates_and_corrections_newest_first(client, live, reviewer):
    other = SummaryFactory(live=True, tldr="Other words.")
    publish(live, reviewer, kind="correction", note="Most, not all.")
    publish(
        other,
        reviewer,
        kind="update",
        note="A later update.",
        at=CORRECTED + datetime.timedelta(hours=1),
    )
    publish(other, reviewer, kind="typo", tldr="Typo.", at=CORRECTED + datetime.timedelta(hours=2))
    response = client.get(reverse("summaries:corrections"))
    assert response.status_code == 200
    content = response.content.decode()
    assert content.index("A later update.") < content.index("Most, not all.")
    assert content.count('class="correction ') == 2
    assert f'href="{live.get_absolute_url()}#correction-' in content
    assert "<ins>most</ins>" in content
    feed = reverse("summaries:corrections-feed-atom")
    title = "Curation: updates and corrections (Atom)"
    link = f'<link rel="alternate" type="application/atom+xml" title="{title}" href="{feed}">'
    assert link in content


def test_the_corrections_page_leaves_out_summaries_readers_cannot_see(client, live, reviewer):
    publish(live, reviewer, kind="correction", note="Most, not all.")
    workflow.unpublish_summary(summary=live, user=reviewer)
    content = client.get(reverse("summaries:corrections")).content.decode()
    assert "Most, not all." not in content and "No updates or corrections yet." in content


def test_the_corrections_page_is_paginated(client, live, reviewer, settings):
    for number in range(21):
        publish(
            live,
            reviewer,
            kind="update",
            note=f"Update {number}.",
            tldr=f"Text {number}.",
            at=CORRECTED + datetime.timedelta(minutes=number),
        )
    first = client.get(reverse("summaries:corrections")).content.decode()
    assert "Update 20." in first and "Update 0." not in first and 'rel="next"' in first
    second = client.get(reverse("summaries:corrections") + "?page=2").content.decode()
    assert "Update 0." in second


@pytest.mark.parametrize("name", ["corrections-feed-atom", "corrections-feed-rss"])
def test_the_corrections_feed_has_one_item_per_update_or_correction(client, live, reviewer, name):
    publish(live, reviewer, kind="correction", note="Most, not all.")
    publish(live, reviewer, kind="typo", tldr="Typo.", at=CORRECTED + datetime.timedelta(hours=1))
    response = client.get(reverse(f"summaries:{name}"))
    assert response.status_code == 200
    body = response.content.decode()
    assert body.count("Most, not all.") == 1
    assert f"Correction: {live.video.title}" in body
    assert f"{live.get_absolute_url()}#correction-" in body


def test_the_corrections_feed_is_served_anew_after_a_publish(client, live, reviewer):
    url = reverse("summaries:corrections-feed-atom")
    assert "Most, not all." not in client.get(url).content.decode()  # cached now
    publish(live, reviewer, kind="correction", note="Most, not all.")
    assert "Most, not all." in client.get(url).content.decode()
