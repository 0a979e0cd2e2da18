"""Readers see the receipts: where each statement is said, the transcript page, the chapters
file, the JSON-LD — from the live transcript and verified pins only."""

import json
import re

import pytest
from django.core.cache import cache
from django.urls import reverse

from summaries.editing import derived, pinning, receipts, workflow
from summaries.models import Chapter, Summary, SummaryPage, Transcript, segments_digest
from summaries.pagecache.generation import content_changed
from summaries.reader import receipts as reader_receipts
from summaries.reader import views_summary

from .factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
)
from .receipts_factories import let_through

pytestmark = pytest.mark.django_db

VIDEO_ID = "dQw4w9WgXcQ"
WATCH = f"https://www.youtube.com/watch?v={VIDEO_ID}"
# (start, end, text, speaker): what the video says.
SPEECH = [
    (0, 5, "Welcome to the show, today we talk about fast models.", "Host"),
    (5, 12, "Speed compounds in agent loops because every step waits on the model.", "Guest"),
    (12, 20, "We measured the whole task rather than raw throughput.", "Guest"),
    (200, 206, "Now let us turn to releases, which come faster every month.", "Host"),
    (206, 214, "Honestly the benchmarks saturate within a year.", "Guest"),
    (760, 768, "Building it yourself or buying it are the options left.", "Host"),
]
VERBATIM_POINT = "Speed compounds in agent loops because every step waits on the model."
PARAPHRASE = "They timed whole tasks rather than raw throughput."
UNSAID = "Bananas are yellow and grow on trees in Ecuador."
QUOTE = "the benchmarks saturate within a year"


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def segments(speech=SPEECH):
    return [
        {"start": float(start), "end": float(end), "text": text, "speaker": speaker}
        for start, end, text, speaker in speech
    ]


def add_transcript(video, *, state=Transcript.State.DRAFT, speech=SPEECH):
    """A transcript as an import leaves it (the parser is tested elsewhere)."""
    data = segments(speech)
    return Transcript.objects.create(
        video=video,
        language=video.language,
        state=state,
        format="vtt",
        original=b"",
        segments=data,
        word_count=sum(len(s["text"].split()) for s in data),
        ends_at=max(s["end"] for s in data),
        digest=segments_digest(data),
    )


def pin(summary, part, first=None, end=None):
    """Pin `part` where the transcript best says it (or to words `first`..`end`)."""
    if first is None:
        span = pinning.suggestions(summary=summary, part=part, limit=1)[0]
        first, end = span.first_word, span.end_word
    return pinning.set_pin(summary=summary, part=part, first=first, end=end, user=None)


def draft_with_parts():
    """A draft about a YouTube video with a transcript waiting for review, its parts pinned:
    a verbatim key point, an approved paraphrase (takeaway), an unapproved paraphrase (key
    point), a not-found point a reviewer let through, a chapter whose stated start is
    right and one whose stated start is off, a quotation."""
    summary = SummaryFactory(
        video__source_url=WATCH, video__duration_seconds=900, video__title="Fast models"
    )
    add_transcript(summary.video)
    verbatim = KeyPointFactory(summary=summary, title="Speed", body=VERBATIM_POINT, time=None)
    unapproved = KeyPointFactory(summary=summary, title="Whole tasks", body=PARAPHRASE, time=None)
    unsaid = KeyPointFactory(summary=summary, title="Bananas", body=UNSAID, time=30)
    approved = TakeawayFactory(summary=summary, text=PARAPHRASE, time=None)
    opening = ChapterFactory(
        summary=summary,
        title="Fast models",
        start_time=0,
        body="Welcome to the show, today we talk about fast models. The host opens.",
    )
    releases = ChapterFactory(
        summary=summary,
        title="Releases",
        start_time=230,  # said at 3:20
        body=f"Now let us turn to releases, which come faster every month. “{QUOTE},” the "
        "guest says.",
    )
    receipts.refresh_pins(summary=summary)
    for part in (verbatim, unapproved, approved, opening, releases):
        pin(summary, part)
    pin(summary, unsaid, 0, 3)
    approved.refresh_from_db()
    pinning.approve_pin(summary=summary, part=approved, user=EditorFactory())
    unsaid.refresh_from_db()
    reviewer = ReviewerFactory()
    pinning.override_pin(
        summary=summary, part=unsaid, note="A joke; kept on purpose.", user=reviewer
    )
    # The unapproved paraphrase and the chapter whose start is off go live only as a
    # reviewer lets them through: readers still get no time for the one, and the checked
    # time for the other.
    let_through(summary, reviewer=reviewer)
    derived.refresh_derived_data(summary=summary)
    return summary


@pytest.fixture
def live():
    summary = draft_with_parts()
    return workflow.publish_summary(summary=summary, user=None)


def page(client, summary):
    response = client.get(summary.get_absolute_url())
    assert response.status_code == 200
    return response.content.decode()


def receipt_links(html):
    """(href, time) of every "▶ 12:40" on the page."""
    return re.findall(
        r'<a class="receipt" href="([^"]*)" rel="nofollow noopener" '
        r'aria-label="Play from ([\d:]+), where this is said">▶ \2</a>',
        html,
    )


# --- Which pins readers see -----------------------------------------------------------


def test_verified_pins_show_where_they_are_said(client, live):
    html = page(client, live)
    links = receipt_links(html)
    # The verbatim key point (said from 0:05, where its segment starts), the approved
    # paraphrase (takeaway) and the quotation; not the unapproved paraphrase, not the point
    # nobody said.
    assert (f"{WATCH}&amp;t=5s", "0:05") in links
    # The approved takeaway, from the start of the sentence that says it.
    assert (f"{WATCH}&amp;t=12s", "0:12") in links
    assert (f"{WATCH}&amp;t=207s", "3:27") in links  # the quotation
    assert len(links) == 3, links
    takeaways = html[html.index('id="takeaways"') :]
    assert "Play from 0:12" in takeaways.split("</section>")[0]


def test_a_point_let_through_by_a_reviewer_shows_its_written_time_not_a_receipt(client, live):
    html = page(client, live)
    point = html[html.index("Bananas") :].split("</li>")[0]
    assert "receipt" not in point
    assert "Watch from 0:30" in point


def test_a_quotation_links_to_its_moment_right_after_it(client, live):
    html = page(client, live)
    chapter = html[html.index(">Releases</h3>") :]
    quote_at = chapter.index(QUOTE)
    link_at = chapter.index('<a class="receipt"')
    assert quote_at < link_at < chapter.index("the guest says")
    # After the closing mark, not inside the quotation.
    assert chapter[quote_at + len(QUOTE) : link_at] == ",” "
    assert "t=207s" in chapter[link_at : link_at + 200]


def test_a_chapter_starts_where_its_verified_pin_says(client, live):
    """“Releases” was written to start at 3:50; its first words are said at 3:20."""
    chapter = page(client, live)
    chapter = chapter[chapter.index(">Releases</h3>") :]
    assert f'<a href="{WATCH}&amp;t=200s" rel="nofollow noopener">Watch from 3:20</a>' in chapter


def test_a_draft_transcript_never_shows(client):
    """A live summary whose video has only a transcript waiting for review: no receipts,
    no transcript page, no link to it."""
    summary = SummaryFactory(live=True, video__source_url=WATCH)
    KeyPointFactory(summary=summary, body=VERBATIM_POINT, time=5)
    add_transcript(summary.video)
    receipts.refresh_pins(summary=summary)
    html = page(client, summary)
    assert "receipt" not in html
    assert "Read the full transcript" not in html
    url = reverse("summaries:summary-transcript", args=[summary.video.slug])
    assert client.get(url).status_code == 404


def test_pins_verified_against_another_transcript_show_nothing(client, live):
    """A pin names the digest of the transcript it was checked against: once the live
    transcript is another (a new one published), the old verdicts say nothing of it."""
    Transcript.objects.filter(video=live.video).update(digest="0" * 64)
    SummaryPage.objects.all().delete()
    html = page(client, live)
    assert receipt_links(html) == []
    assert "Read the full transcript" in html


def test_said_at_rules():
    digest = "d" * 64
    base = {"transcript": digest, "start": 12.9, "score": 100.0, "suggested": None}
    assert reader_receipts.said_at({**base, "status": "verbatim"}, digest) == 12
    assert reader_receipts.said_at({**base, "status": "verbatim"}, "e" * 64) is None
    assert reader_receipts.said_at({**base, "status": "paraphrase"}, digest) is None
    approved = {**base, "status": "paraphrase", "approved": {"by": "ed"}}
    assert reader_receipts.said_at(approved, digest) == 12
    for status in ("not_found", "contradicted"):
        overridden = {**base, "status": status, "override": {"by": "rev", "note": "ok"}}
        assert reader_receipts.said_at(overridden, digest) is None
    moved = {**base, "status": "verbatim", "suggested": [40, 45]}
    assert reader_receipts.said_at(moved, digest) is None
    mis_timed = {**base, "status": "mis_timed", "suggested_time": 64.2}
    assert reader_receipts.said_at(mis_timed, digest) == 64
    loose = {**mis_timed, "score": 80.0}  # a paraphrase nobody approved, and mis-timed
    assert reader_receipts.said_at(loose, digest) is None
    assert reader_receipts.said_at(None, digest) is None


@pytest.mark.parametrize("by", ["system", "System", " ", "", None])
def test_said_at_shows_no_paraphrase_approved_in_nobodys_name(by):
    """The reader's rule is the gate's (`receipts.is_verified`): an approval an older
    version stored as "system", or one without a name, approves nothing."""
    digest = "d" * 64
    pin = {"transcript": digest, "start": 12.9, "score": 80.0, "suggested": None}
    stored = {**pin, "status": "paraphrase", "approved": {"by": by, "at": "2026-01-01"}}
    assert reader_receipts.said_at(stored, digest) is None
    assert not receipts.is_verified(stored)
    named = {**stored, "approved": {"by": "eve", "at": "2026-01-01"}}
    assert reader_receipts.said_at(named, digest) == 12
    assert receipts.is_verified(named)


def test_a_mis_timed_point_shows_the_checked_time_not_the_written_one(client):
    summary = SummaryFactory(video__source_url=WATCH)
    add_transcript(summary.video)
    point = KeyPointFactory(summary=summary, body=VERBATIM_POINT, time=60)
    pinned = pin(summary, point)
    assert pinned["status"] == "mis_timed"
    let_through(summary, reviewer=ReviewerFactory())  # the gate refuses it otherwise
    workflow.publish_summary(summary=summary, user=None)
    html = page(client, summary)
    assert receipt_links(html) == [(f"{WATCH}&amp;t=5s", "0:05")]
    assert "Watch from 1:00" not in html


# --- The summary page -----------------------------------------------------------------


def test_the_summary_page_links_the_transcript(client, live):
    html = page(client, live)
    url = reverse("summaries:summary-transcript", args=[live.video.slug])
    assert f'<a class="transcript-link" href="{url}">Read the full transcript</a>' in html


def test_the_summary_page_reads_no_transcript_text(client, live, django_assert_max_num_queries):
    with django_assert_max_num_queries(50) as queries:
        page(client, live)
    for query in queries.captured_queries:
        sql = query["sql"] or ""  # None for a compiled query on PostgreSQL: checked below
        if "summaries_transcript" in sql:
            assert '"segments"' not in sql and '"original"' not in sql, sql
    compiled = str(views_summary.summary_page_query(Summary.objects.all()).query)
    assert "summaries_transcript" in compiled
    assert '"segments"' not in compiled and '"original"' not in compiled


def test_with_a_transcript_the_summary_page_runs_as_many_queries(
    client, django_assert_num_queries, django_assert_max_num_queries, settings
):
    """The live transcript's digest comes with the summary (a subquery): receipts and the
    transcript link cost no query of their own, whether the article is stored or not."""
    settings.PAGE_CACHE_FRAGMENTS = False
    plain = SummaryFactory(live=True)
    KeyPointFactory(summary=plain, body=VERBATIM_POINT, time=5)
    ChapterFactory(summary=plain, start_time=0, body="Welcome to the show.")
    summary = workflow.publish_summary(summary=draft_with_parts(), user=None)
    # Publishing stored the article (for its published version): render it again here.
    SummaryPage.objects.filter(summary=summary).delete()
    counts = {}
    for name, shown in (("plain", plain), ("receipts", summary)):
        with django_assert_max_num_queries(100) as rendered:
            client.get(shown.get_absolute_url(), {"nocache": "1"})
        with django_assert_max_num_queries(100) as stored:
            html = client.get(shown.get_absolute_url(), {"nocache": "2"}).content.decode()
        counts[name] = (len(rendered.captured_queries), len(stored.captured_queries))
    assert counts["receipts"] == counts["plain"]
    assert len(receipt_links(html)) == 3


def test_publishing_a_new_transcript_renders_the_article_again(client, live):
    """The stored article is keyed by the live transcript's digest: replacing the
    transcript changes the page even when no part was saved."""
    page(client, live)
    key = SummaryPage.objects.get(summary=live).key
    Transcript.objects.filter(video=live.video).update(digest="f" * 64)
    content_changed()  # as every publishing service does
    html = page(client, live)
    assert SummaryPage.objects.get(summary=live).key != key
    assert receipt_links(html) == []


# --- The transcript page --------------------------------------------------------------


def transcript_url(summary):
    return reverse("summaries:summary-transcript", args=[summary.video.slug])


def test_the_transcript_page_shows_paragraphs_by_chapter(client, live):
    response = client.get(transcript_url(live))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Transcript: Fast models</h1>" in html
    headings = re.findall(r'<h2 id="transcript-[^"]*-title">([^<]*)</h2>', html)
    assert headings == ["Fast models", "Releases"]
    # The chapter "Releases" starts where its words are said (3:20), not at its written
    # 3:50: its first caption is under it.
    releases = html[html.index(">Releases</h2>") :]
    assert "Now let us turn to releases" in releases
    assert "Speed compounds" not in releases
    assert f'<a href="{WATCH}&amp;t=200s" rel="nofollow noopener">Watch from 3:20</a>' in releases
    # A paragraph per speaker's turn (the guest's two sentences are one), with its time as
    # a link into the video and the speaker named where they change; punctuation kept.
    assert html.count('class="paragraph"') == 5
    assert (
        f'<a class="paragraph-time" href="{WATCH}&amp;t=206s" rel="nofollow noopener">'
        '<time datetime="PT206S">3:26</time></a>' in html
    )
    guest = re.search(r'<p class="paragraph" id="paragraph-2" data-start="5">(.*?)</p>', html)
    assert guest, html
    assert (
        '<b class="speaker">Guest:</b> <span class="paragraph-text">Speed compounds in agent '
        "loops because every step waits on the model. We measured the whole task rather than "
        "raw throughput.</span>" in guest.group(1)
    )
    assert html.count('<b class="speaker">Guest:</b>') == 2
    assert html.count('<b class="speaker">Host:</b>') == 3
    assert "hidden" not in html.split('<div class="transcript">')[1].split("</main>")[0]


def test_each_paragraph_marks_the_verified_statements_it_supports(client, live):
    html = client.get(transcript_url(live)).content.decode()
    summary_url = live.video.get_absolute_url()
    marks = re.findall(r'<p class="paragraph" id="(paragraph-\d+)"[^>]*>.*?</p>', html)
    assert len(marks) == 5
    supports = {
        number: re.findall(r'<a class="supports" href="([^"]*)">([^<]*)</a>', paragraph)
        for number, paragraph in re.findall(
            r'<p class="paragraph" id="paragraph-(\d+)"[^>]*>(.*?)</p>', html
        )
    }
    # The verbatim key point and the takeaway an editor approved, on the guest's words;
    # the unapproved paraphrase and the point a reviewer let through are not marked.
    assert supports == {
        "1": [],
        "2": [
            (f"{summary_url}#key-point-1", "Key point 1"),
            (f"{summary_url}#takeaway-1", "Takeaway 1"),
        ],
        "3": [],
        "4": [],
        "5": [],
    }
    page_html = client.get(summary_url).content.decode()
    assert 'id="key-point-1"' in page_html and 'id="takeaway-1"' in page_html


def test_the_transcript_page_filters_paragraphs_without_javascript(client, live):
    html = client.get(transcript_url(live), {"q": "Benchmarks year"}).content.decode()
    assert "1 of 5 paragraphs hold “Benchmarks year”" in html
    shown = re.findall(r'<p class="paragraph" id="[^"]*" data-start="\d+">', html)
    assert len(shown) == 1
    assert "<mark>benchmarks</mark> saturate within a <mark>year</mark>" in html
    # The first chapter has no match: hidden with its paragraphs, which stay in the page.
    sections = r'<section class="transcript-chapter" id="[^"]*" aria-labelledby="[^"]*"( hidden)?>'
    assert re.findall(sections, html) == [" hidden", ""]
    assert html.count('class="paragraph"') == 5
    assert '<meta name="robots" content="noindex">' in html


def test_a_query_cannot_inject_markup(client, live):
    html = client.get(transcript_url(live), {"q": '<script>alert(1)</script> "'}).content.decode()
    assert "<script>alert" not in html
    assert "0 of 5 paragraphs hold" in html


def test_the_transcript_page_is_cached_but_not_its_searches(client, live):
    url = transcript_url(live)
    assert "Cache-Control" in client.get(url)
    first = client.get(url, {"q": "speed"})
    assert "public" not in first.get("Cache-Control", "")


def test_the_transcript_page_answers_404_unless_live(client):
    summary = draft_with_parts()
    assert client.get(transcript_url(summary)).status_code == 404  # a draft
    Transcript.objects.filter(video=summary.video).update(state=Transcript.State.LIVE)
    assert client.get(transcript_url(summary)).status_code == 404  # still a draft
    live = SummaryFactory(live=True)
    assert client.get(transcript_url(live)).status_code == 404  # no transcript


def test_a_transcript_without_chapters_is_one_section(client):
    summary = SummaryFactory(live=True, video__source_url=WATCH)
    add_transcript(summary.video, state=Transcript.State.LIVE)
    html = client.get(transcript_url(summary)).content.decode()
    main = html[html.index("<main") : html.index("</main>")]
    assert re.findall(r"<h2 [^>]*>([^<]*)</h2>", main) == ["Transcript"]
    assert 'aria-label="Chapters"' not in html
    assert "chapters.vtt" not in html


def test_the_transcript_page_query_count(client, live, django_assert_num_queries):
    client.get(transcript_url(live))
    cache.clear()
    # The generation, the summary with its video and channel, the transcript, the chapters,
    # the pins of the key points and takeaways (one query for both).
    with django_assert_num_queries(5):
        assert client.get(transcript_url(live), {"q": "x"}).status_code == 200


# --- Chapters file and JSON-LD ----------------------------------------------------------


def test_the_chapters_file(client, live):
    response = client.get(reverse("summaries:summary-chapters-vtt", args=[live.video.slug]))
    assert response.status_code == 200
    assert response["Content-Type"] == "text/vtt; charset=utf-8"
    assert response.content.decode() == (
        "WEBVTT\n\n"
        "chapter-1\n00:00:00.000 --> 00:03:20.000\nFast models\n\n"
        "chapter-2\n00:03:20.000 --> 00:15:00.000\nReleases\n"
    )


def test_the_chapters_file_of_a_video_without_a_transcript_uses_the_written_starts(client):
    summary = SummaryFactory(live=True, video__duration_seconds=300)
    ChapterFactory(summary=summary, title="A <b> & --> c", start_time=0)
    ChapterFactory(summary=summary, title="Later", start_time=120)
    ChapterFactory(summary=summary, title="Untimed", start_time=None)
    ChapterFactory(summary=summary, title="Past the end", start_time=400)
    text = client.get(reverse("summaries:summary-chapters-vtt", args=[summary.video.slug]))
    assert text.content.decode() == (
        "WEBVTT\n\n"
        "chapter-1\n00:00:00.000 --> 00:02:00.000\nA &lt;b&gt; &amp; --&gt; c\n\n"
        "chapter-2\n00:02:00.000 --> 00:05:00.000\nLater\n"
    )


def test_the_chapters_file_answers_404_for_a_draft_or_no_timed_chapter(client):
    draft = SummaryFactory()
    ChapterFactory(summary=draft, start_time=0)
    untimed = SummaryFactory(live=True)
    ChapterFactory(summary=untimed, start_time=None)
    for summary in (draft, untimed):
        url = reverse("summaries:summary-chapters-vtt", args=[summary.video.slug])
        assert client.get(url).status_code == 404


def json_ld(html):
    data = re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S)[1]
    return json.loads(data)


def test_json_ld_names_the_transcript_and_clips_only_verified_times(client, live):
    data = json_ld(page(client, live))
    assert data["transcript"] == "http://testserver" + transcript_url(live)
    assert data["hasPart"] == [
        {
            "@type": "Clip",
            "name": "Fast models",
            "startOffset": 0,
            "endOffset": 200,
            "url": f"{WATCH}&t=0s",
        },
        {
            "@type": "Clip",
            "name": "Releases",
            "startOffset": 200,
            "endOffset": 900,
            "url": f"{WATCH}&t=200s",
        },
    ]


def test_a_chapter_without_a_verified_start_is_no_key_moment(client, live):
    releases = Chapter.objects.get(summary=live, title="Releases")
    Chapter.objects.filter(pk=releases.pk).update(pin=None)
    derived.page_changed(summary_id=live.pk)
    data = json_ld(page(client, live))
    assert [clip["name"] for clip in data["hasPart"]] == ["Fast models"]


def test_without_a_transcript_json_ld_keeps_the_written_chapter_starts(client):
    summary = SummaryFactory(live=True, video__duration_seconds=300)
    ChapterFactory(summary=summary, title="Start", start_time=0)
    data = json_ld(page(client, summary))
    assert "transcript" not in data
    assert [clip["startOffset"] for clip in data["hasPart"]] == [0]


# --- The preview --------------------------------------------------------------------------


def test_the_preview_shows_pins_against_the_transcript_waiting_for_review(client):
    summary = draft_with_parts()
    client.force_login(ReviewerFactory(is_superuser=True))
    html = client.get(reverse("summaries:summary-preview", args=[summary.video.slug]))
    html = html.content.decode()
    assert len(receipt_links(html)) == 3
    assert "Read the full transcript" not in html  # its page is for readers, once live
