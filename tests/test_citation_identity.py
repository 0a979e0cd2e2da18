"""A citation keeps its identity, and everything checks derived from it, across edits.

Evidence (what the page said when it was cited, and at the latest check), the archived copy
readers fall back on, an editor's confirmation and key phrase all hang off the citation row:
while the link and its phrase stay in the summary, every road an edit takes (publishing
changes, a restore, a move to another part, a part written again, the API, the admin) keeps
that row, so none of it is lost.
"""

import datetime

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from summaries.editing import copies, derived, restore, save
from summaries.models import (
    ArchivedCopy,
    Chapter,
    Citation,
    CitationEvidence,
    EvidenceRecord,
    KeyPoint,
    Summary,
)

from .admin_forms import form_fields
from .factories import ChapterFactory, SummaryFactory, publish_edit

pytestmark = pytest.mark.django_db

URL = "https://bench.example/speed"
CLAIM = "Model X is 2.5x faster than its rival, [per the benchmark](https://bench.example/speed)."
ARCHIVED = "https://archive.example/web/20261101000000/https://bench.example/speed"
CITED_AT = timezone.make_aware(datetime.datetime(2026, 11, 1, 12, 0))


def record(digest: str, captured_at: datetime.datetime) -> EvidenceRecord:
    return EvidenceRecord.objects.create(
        digest=digest,
        name=f"{digest}.warc.gz",
        size=100,
        url=URL,
        status_code=200,
        captured_at=captured_at,
        last_used_at=captured_at,
    )


def add_evidence(citation: Citation, kind: str, digest: str, at: datetime.datetime) -> None:
    CitationEvidence.objects.create(
        citation=citation,
        kind=kind,
        record=record(digest, at),
        passage="Model X is 2.5x faster",
        digest=digest,
        url=URL,
        captured_at=at,
    )


@pytest.fixture
def live(reviewer):
    """A live summary citing one page, with everything checks and editors derived from it."""
    summary = SummaryFactory(live=True, tldr="Speed matters.")
    ChapterFactory(summary=summary, position=1, title="One", body=CLAIM, start_time=0)
    ChapterFactory(summary=summary, position=2, title="Two", body="No link here.", start_time=60)
    derived.refresh_derived_data(summary=summary)
    citation = Citation.objects.get(summary=summary)
    Citation.objects.filter(pk=citation.pk).update(
        key_phrase="2.5x faster",
        key_phrase_edited=True,
        verdict=Citation.Verdict.SUPPORTED,
        confirmed_fingerprint="f" * 64,
        confirmed_excerpt="Model X is 2.5x faster",
        confirmed_at=CITED_AT,
        confirmed_by=reviewer,
    )
    add_evidence(citation, CitationEvidence.Kind.CITED, "a" * 64, CITED_AT)
    add_evidence(citation, CitationEvidence.Kind.LATEST, "b" * 64, CITED_AT)
    ArchivedCopy.objects.create(
        citation=citation,
        url=ARCHIVED,
        captured_at=CITED_AT,
        key_phrase="2.5x faster",
        excerpt="Model X is 2.5x faster",
        verified_at=CITED_AT,
        looked_up_at=CITED_AT,
        shown=True,
    )
    return summary


def the_citation(summary: Summary) -> Citation:
    return Citation.objects.get(summary=summary)


def assert_kept(summary: Summary, original: Citation, reviewer) -> None:
    """The live summary still cites the page through the same row, with all it had."""
    citation = the_citation(summary)
    assert citation.pk == original.pk
    assert citation.linked_at == original.linked_at
    assert citation.key_phrase == "2.5x faster" and citation.key_phrase_edited
    assert (citation.confirmed_at, citation.confirmed_by_id) == (CITED_AT, reviewer.pk)
    assert citation.confirmed_fingerprint == "f" * 64
    evidence = dict(citation.evidence.values_list("kind", "digest"))
    assert evidence == {"cited": "a" * 64, "latest": "b" * 64}
    assert citation.archived_copy.url == ARCHIVED and citation.archived_copy.shown
    # Nothing derived is left behind on rows that no longer exist.
    assert not CitationEvidence.objects.exclude(citation_id__in=Citation.objects.values("pk"))
    assert ArchivedCopy.objects.count() == 1


def test_publishing_a_typo_fix_keeps_the_citation_and_its_evidence(live, reviewer):
    original = the_citation(live)
    publish_edit(live, tldr="Speed matters!")
    assert live.tldr == "Speed matters!"
    assert_kept(live, original, reviewer)


def test_moving_the_link_to_another_chapter_keeps_it(live, reviewer):
    original = the_citation(live)

    def move(chapters):
        one, two = chapters
        one.body, two.body = "No link now.", CLAIM
        return [two, one]

    publish_edit(live, parts={Chapter: move})
    citation = the_citation(live)
    assert citation.chapter.title == "Two"
    assert_kept(live, original, reviewer)


def test_a_chapter_written_again_keeps_the_citation_it_still_holds(live, reviewer):
    original = the_citation(live)

    def rewrite(chapters):
        _one, two = chapters
        return [Chapter(title="One, again", body=CLAIM, start_time=0), two]

    publish_edit(live, parts={Chapter: rewrite})
    assert the_citation(live).chapter.title == "One, again"
    assert_kept(live, original, reviewer)


def test_the_link_moved_from_a_chapter_to_a_key_point_keeps_it(live, reviewer):
    original = the_citation(live)
    copy, _ids, _made = copies.edit_target(summary=live, user=reviewer)
    chapters = list(Chapter.objects.filter(summary=copy).order_by("position"))
    chapters[0].body = "No link now."
    save.save_summary(
        summary=copy,
        parts={Chapter: chapters, KeyPoint: [KeyPoint(title="Speed", body=CLAIM)]},
        user=reviewer,
    )
    copies.publish_changes(summary=live, user=reviewer)
    assert the_citation(live).key_point.title == "Speed"
    assert_kept(live, original, reviewer)


def test_restoring_an_older_revision_keeps_the_citation(live, reviewer):
    original = the_citation(live)
    publish_edit(live, tldr="Second words.")
    publish_edit(live, tldr="Third words.")
    older = next(
        v for v in restore.history_versions(live) if v.field_dict.get("tldr") == "Second words."
    )
    restore.restore_revision(summary=live, version=older, user=reviewer)
    copies.publish_changes(summary=live, user=reviewer)
    live.refresh_from_db()
    assert live.tldr == "Second words."
    assert_kept(live, original, reviewer)


def test_a_put_through_the_api_keeps_the_citation(live, reviewer):
    original = the_citation(live)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=reviewer).key}")
    url = f"/api/v1/summaries/{live.video.slug}/"
    current = client.get(url)
    shown = current.json()
    video = live.video
    body = {
        "video": {
            "slug": video.slug,
            "title": video.title,
            "channel": video.channel.slug,
            "source_url": video.source_url,
            "duration": shown["video"]["duration"],
            "published_on": shown["video"]["published_on"],
            "topics": [],
            "people": [],
        },
        "tldr": "Speed matters, said plainly.",
        "key_points": [],
        "takeaways": [],
        "caveats": [],
        "chapters": [{"title": c["title"], "body": c["body"]} for c in shown["chapters"]],
    }
    put = client.put(url, body, format="json", HTTP_IF_MATCH=current["ETag"])
    assert put.status_code == 200, put.json()
    published = client.post(f"{url}publish/", {}, format="json", HTTP_IF_MATCH=put["ETag"])
    assert published.status_code == 200, published.json()
    live.refresh_from_db()
    assert live.tldr == "Speed matters, said plainly."
    assert_kept(live, original, reviewer)


def test_saving_and_publishing_in_the_admin_keeps_the_citation(client, live, reviewer):
    original = the_citation(live)
    client.force_login(reviewer)
    change = reverse("admin:summaries_summary_change", args=[live.pk])
    data = form_fields(client.get(change))
    data["tldr"] = "Speed matters, edited in the admin."
    assert client.post(change, data).status_code == 302
    data = form_fields(client.get(change))
    data["_publish"] = "Publish changes"
    assert client.post(change, data).status_code == 302
    live.refresh_from_db()
    assert live.tldr == "Speed matters, edited in the admin."
    assert_kept(live, original, reviewer)


def test_a_check_of_the_working_copy_brings_its_newer_latest_evidence_along(live, reviewer):
    """While changes wait, checks record on the copy's citation too: publishing keeps the
    newest "latest" capture and the first "cited" one."""
    original = the_citation(live)
    copy, _ids, _made = copies.edit_target(summary=live, user=reviewer)
    copy.tldr = "Changed."
    save.save_summary(summary=copy, parts={}, user=reviewer)
    twin = the_citation(copy)
    later = CITED_AT + datetime.timedelta(days=3)
    CitationEvidence.objects.filter(citation=twin, kind="latest").delete()
    add_evidence(twin, CitationEvidence.Kind.LATEST, "c" * 64, later)
    copies.publish_changes(summary=live, user=reviewer)
    citation = the_citation(live)
    assert citation.pk == original.pk
    evidence = dict(citation.evidence.values_list("kind", "digest"))
    assert evidence == {"cited": "a" * 64, "latest": "c" * 64}
    assert citation.archived_copy.url == ARCHIVED


def test_the_working_copy_shows_editors_the_evidence_of_what_it_cites(live, reviewer):
    copy, _ids, _made = copies.edit_target(summary=live, user=reviewer)
    twin = the_citation(copy)
    assert dict(twin.evidence.values_list("kind", "digest")) == {
        "cited": "a" * 64,
        "latest": "b" * 64,
    }


def test_a_link_taken_out_of_the_text_goes_with_its_copy(live, reviewer):
    def unlink(chapters):
        chapters[0].body = "No link now."
        return chapters

    publish_edit(live, parts={Chapter: unlink})
    assert not Citation.objects.filter(summary=live).exists()
    assert not ArchivedCopy.objects.exists()
