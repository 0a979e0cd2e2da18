"""Receipts in the admin (summaries/admin/receipts/): importing a transcript from a video's
page or its summary's, the summary page's Receipts panel and a statement's page, the pin
buttons, "Things to check" and the publish refusal, history, and the Transcript pages; each
as an Editors-only user, a Reviewers-only user, and someone who may do neither."""

import re
from time import monotonic

import pytest
from django.contrib.messages import get_messages
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from reversion.models import Version

from summaries.admin.receipts import STATUSES, PinRow
from summaries.editing import copies, pinning, receipts
from summaries.models import Chapter, KeyPoint, Summary, Takeaway, Transcript
from summaries.text import pins as pin_text

from .clients import logged_in
from .factories import (
    ChapterFactory,
    KeyPointFactory,
    SummaryFactory,
    TakeawayFactory,
    UserFactory,
    reviewers_group,
)
from .receipts_factories import (
    CONTRADICTED_POINT,
    PARAPHRASED_POINT,
    PARAPHRASED_QUOTE,
    SPEECH,
    UNSAID_POINT,
    VERBATIM_POINT,
    cut_short_talk,
    fresh,
    make_transcript,
    pin_best,
    vtt,
)
from .transcript_files import one_cue_of_words

pytestmark = pytest.mark.django_db

# --- People and summaries -------------------------------------------------------------------


@pytest.fixture
def reviewer():
    """In the Reviewers group only."""
    user = UserFactory(username="rosa", is_staff=True)
    user.groups.add(reviewers_group())
    user.save()  # with the password the factory set
    return user


@pytest.fixture
def outsider():
    """Staff, but with no permission on summaries."""
    user = UserFactory(username="olga", is_staff=True)
    user.save()  # with the password the factory set
    return user


@pytest.fixture
def draft():
    """A draft summary of a one-minute video with a transcript waiting for review: a
    verbatim, a paraphrased, a contradicted and an unsaid key point, a takeaway, and a
    chapter quoting a paraphrase."""
    summary = SummaryFactory(video__duration_seconds=60, video__title="Model release")
    for position, (title, body, time) in enumerate(
        [
            ("Price", VERBATIM_POINT, 22),
            ("Speed", PARAPHRASED_POINT, 6),
            ("Faster", CONTRADICTED_POINT, 6),
            ("Fruit", UNSAID_POINT, None),
        ],
        start=1,
    ):
        KeyPointFactory(summary=summary, position=position, title=title, body=body, time=time)
    TakeawayFactory(summary=summary, position=1, text="Open weights will matter more.")
    ChapterFactory(
        summary=summary,
        position=1,
        title="Opening",
        start_time=0,
        body=f"Welcome back to the channel. They said “{PARAPHRASED_QUOTE}”.",
    )
    make_transcript(summary.video)
    receipts.refresh_pins(summary=summary)
    return summary


def point(summary, title) -> KeyPoint:
    return KeyPoint.objects.get(summary=summary, title=title)


def key(part) -> str:
    return f"{type(part).__name__.lower()}-{part.pk}"


def change_url(summary) -> str:
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def pin_url(summary) -> str:
    return reverse("admin:summaries_summary_pin", args=[summary.pk])


def part_url(summary, part) -> str:
    return reverse("admin:summaries_summary_pin_part", args=[summary.pk, key(part)])


def summary_import_url(summary) -> str:
    return reverse("admin:summaries_summary_transcript_import", args=[summary.pk])


def video_import_url(video) -> str:
    return reverse("admin:summaries_video_transcript_import", args=[video.pk])


def said(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


def page(response) -> str:
    return response.content.decode()


# --- Importing a transcript -----------------------------------------------------------------


def upload(data: bytes, name: str = "talk.vtt"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, data, content_type="text/vtt")


def test_an_editor_imports_a_file_from_the_video_page(editor):
    summary = SummaryFactory(video__duration_seconds=60, video__language="en")
    client = logged_in(editor)
    video_page = client.get(reverse("admin:summaries_video_change", args=[summary.video.pk]))
    assert video_import_url(summary.video) in page(video_page)

    form = client.get(video_import_url(summary.video))
    assert form.status_code == 200
    assert '<option value="en" selected>' in page(form)  # the video's language by default

    response = client.post(
        video_import_url(summary.video), {"transcript_file": upload(vtt(SPEECH)), "language": "en"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("admin:summaries_video_change", args=[summary.video.pk])
    transcript = Transcript.objects.get(video=summary.video)
    assert transcript.state == Transcript.State.DRAFT and transcript.original_name == "talk.vtt"
    assert transcript.word_count > 50
    assert any("Imported the transcript" in message for message in said(response))


def test_pasted_text_is_imported_from_the_summary_page_in_the_language_chosen(editor):
    summary = SummaryFactory(video__duration_seconds=60, video__language="en")
    client = logged_in(editor)
    assert summary_import_url(summary) in page(client.get(change_url(summary)))

    response = client.post(
        summary_import_url(summary), {"pasted": vtt(SPEECH).decode(), "language": "de"}
    )
    assert response.status_code == 302
    assert response["Location"] == change_url(summary) + "#receipts"
    assert Transcript.objects.get(video=summary.video).language == "de"


def test_a_bad_timestamp_is_a_form_error_naming_its_line_and_the_paste_stays(editor):
    summary = SummaryFactory(video__duration_seconds=60)
    broken = (
        "WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nHello there.\n\n"
        "00:00:xx.000 --> 00:00:09.000\nAgain.\n"
    )
    response = logged_in(editor).post(
        summary_import_url(summary), {"pasted": broken, "language": "en"}
    )
    assert response.status_code == 200
    errors = response.context["form"].errors["pasted"]
    assert any("line 6" in error.lower() for error in errors), errors
    assert "00:00:xx.000 --&gt; 00:00:09.000" in page(response)  # the paste, kept
    assert not Transcript.objects.exists()


@pytest.mark.parametrize(
    "data",
    [
        bytes(range(256)) * 8,  # binary garbage
        b"\x89PNG\r\n\x1a\n" + b"\x00\xff" * 300,
        b"just some words with no times at all",
    ],
    ids=["bytes", "png", "no-times"],
)
def test_a_file_that_is_not_a_transcript_is_a_form_error(editor, data):
    summary = SummaryFactory(video__duration_seconds=60)
    response = logged_in(editor).post(
        summary_import_url(summary), {"transcript_file": upload(data, "x.vtt"), "language": "en"}
    )
    assert response.status_code == 200
    assert response.context["form"].errors["transcript_file"]
    assert not Transcript.objects.exists()


def test_an_empty_file_is_a_form_error(editor):
    summary = SummaryFactory()
    response = logged_in(editor).post(
        summary_import_url(summary), {"transcript_file": upload(b""), "language": "en"}
    )
    assert response.status_code == 200
    assert response.context["form"].errors["transcript_file"]


def test_neither_file_nor_text_is_a_form_error(editor):
    summary = SummaryFactory()
    response = logged_in(editor).post(summary_import_url(summary), {"language": "en"})
    assert response.status_code == 200
    assert "Choose a transcript file or paste its text" in page(response)


@override_settings(TRANSCRIPT_MAX_BYTES=300)
def test_a_file_over_the_cap_is_answered_413_naming_the_cap(editor):
    summary = SummaryFactory(video__duration_seconds=60)
    response = logged_in(editor).post(
        summary_import_url(summary), {"transcript_file": upload(vtt(SPEECH)), "language": "en"}
    )
    assert response.status_code == 413
    assert "at most 300\xa0bytes" in page(response)
    assert not Transcript.objects.exists()


def test_a_file_of_millions_of_words_is_a_form_error_naming_its_words(editor):
    summary = SummaryFactory(video__duration_seconds=60)
    data = one_cue_of_words(9_500_000)  # 19 MB, under TRANSCRIPT_MAX_BYTES
    started = monotonic()
    response = logged_in(editor).post(
        summary_import_url(summary), {"transcript_file": upload(data), "language": "en"}
    )
    assert monotonic() - started < 5
    assert response.status_code == 200
    [error] = response.context["form"].errors["transcript_file"]
    assert error == (
        "This file cannot be imported as a transcript: the file holds 9,500,004 words (its "
        "times and markup included), more than the 250,000 words a transcript may have; "
        "split it, or import the part the summary is about."
    )
    assert "Please correct the error below." in page(response)
    assert not Transcript.objects.exists()


@override_settings(TRANSCRIPT_MAX_BYTES=200)
def test_a_paste_over_the_cap_is_answered_413_and_stays_in_the_form(editor):
    summary = SummaryFactory(video__duration_seconds=60)
    text = vtt(SPEECH).decode()
    response = logged_in(editor).post(
        summary_import_url(summary), {"pasted": text, "language": "en"}
    )
    assert response.status_code == 413
    assert "200\xa0bytes" in page(response)
    assert "Welcome back to the channel" in page(response)


@override_settings(TRANSCRIPT_MAX_BYTES=100, DATA_UPLOAD_MAX_MEMORY_SIZE=100)
def test_a_request_larger_than_any_import_is_refused_unread(editor):
    summary = SummaryFactory()
    response = logged_in(editor).post(
        summary_import_url(summary), {"transcript_file": upload(vtt(SPEECH)), "language": "en"}
    )
    assert response.status_code == 413
    assert "at most 100\xa0bytes" in page(response)


def with_csrf(user, url) -> tuple[Client, str]:
    """A client that checks CSRF as a browser's request is checked, and the form's token."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    form = page(client.get(url))
    return client, form.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]


@override_settings(TRANSCRIPT_MAX_BYTES=10_000, DATA_UPLOAD_MAX_MEMORY_SIZE=300)
def test_a_paste_larger_than_a_request_may_carry_is_a_413_asking_for_a_file(editor):
    summary = SummaryFactory()
    client, token = with_csrf(editor, summary_import_url(summary))
    text = vtt(SPEECH).decode()
    response = client.post(
        summary_import_url(summary),
        {"pasted": text, "language": "en", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 413
    assert "upload the file" in page(response)


def test_an_import_with_its_csrf_token_passes(editor):
    summary = SummaryFactory(video__duration_seconds=60)
    client, token = with_csrf(editor, summary_import_url(summary))
    response = client.post(
        summary_import_url(summary),
        {"pasted": vtt(SPEECH).decode(), "language": "en", "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    assert Transcript.objects.filter(video=summary.video).exists()


def test_a_transcript_longer_than_the_video_is_imported_with_a_warning(editor):
    summary = SummaryFactory(video__duration_seconds=20)
    response = logged_in(editor).post(
        summary_import_url(summary), {"transcript_file": upload(vtt(SPEECH)), "language": "en"}
    )
    assert response.status_code == 302
    warnings = [str(m) for m in get_messages(response.wsgi_request) if m.level_tag == "warning"]
    assert warnings and all(message.startswith("Check the transcript:") for message in warnings)
    assert Transcript.objects.get(video=summary.video).warnings


def test_a_transcript_cut_short_is_imported_with_a_warning_on_its_pages(editor):
    data, length = cut_short_talk()
    summary = SummaryFactory(video__duration_seconds=length)
    client = logged_in(editor)
    response = client.post(
        summary_import_url(summary), {"transcript_file": upload(data), "language": "en"}
    )
    assert response.status_code == 302
    warnings = [str(m) for m in get_messages(response.wsgi_request) if m.level_tag == "warning"]
    assert len(warnings) == 1
    assert re.fullmatch(
        r"Check the transcript: the transcript ends at 5:1\d of a 16:23 video \(32 %\): "
        r"it may be cut short",
        warnings[0],
    )
    transcript = Transcript.objects.get(video=summary.video)
    cut_short = warnings[0].removeprefix("Check the transcript: ")
    assert transcript.warnings == [cut_short]
    detail = client.get(reverse("admin:summaries_transcript_change", args=[transcript.pk]))
    assert f"<li>{cut_short}</li>" in page(detail)
    assert cut_short in page(client.get(change_url(summary)))  # the Receipts panel


def test_a_reviewer_imports_too(reviewer):
    summary = SummaryFactory(video__duration_seconds=60)
    response = logged_in(reviewer).post(
        summary_import_url(summary), {"transcript_file": upload(vtt(SPEECH)), "language": "en"}
    )
    assert response["Location"] == change_url(summary) + "#receipts"
    assert Transcript.objects.filter(video=summary.video).exists()


def test_who_may_not_change_summaries_may_not_import(outsider):
    summary = SummaryFactory(video__duration_seconds=60)
    client = logged_in(outsider)
    data = {"transcript_file": upload(vtt(SPEECH)), "language": "en"}
    assert client.get(summary_import_url(summary)).status_code == 403
    assert client.post(summary_import_url(summary), data).status_code == 403
    data = {"transcript_file": upload(vtt(SPEECH)), "language": "en"}
    assert client.post(video_import_url(summary.video), data).status_code == 403
    assert not Transcript.objects.exists()


def test_an_import_without_its_csrf_token_is_refused(editor):
    summary = SummaryFactory(video__duration_seconds=60)
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    data = {"pasted": vtt(SPEECH).decode(), "language": "en"}
    assert client.post(summary_import_url(summary), data).status_code == 403
    assert client.post(video_import_url(summary.video), data).status_code == 403
    assert not Transcript.objects.exists()


def test_importing_for_a_published_summary_goes_to_its_changes(editor):
    summary = SummaryFactory(live=True, video__duration_seconds=60)
    response = logged_in(editor).post(
        summary_import_url(summary), {"pasted": vtt(SPEECH).decode(), "language": "en"}
    )
    assert response.status_code == 302
    assert Transcript.objects.get(video=summary.video).state == Transcript.State.DRAFT
    assert copies.working_copy_of(summary) is not None


# --- The Receipts panel ---------------------------------------------------------------------


def test_the_panel_shows_each_statement_with_its_status_words_time_and_reason(editor, draft):
    pin_best(draft, point(draft, "Price"))
    pin_best(draft, point(draft, "Faster"))
    response = logged_in(editor).get(change_url(draft))
    assert response.status_code == 200
    shown = page(response).split('id="receipts"', 1)[1]

    def row(title: str) -> str:
        return shown.split(f'id="pin-{key(point(draft, title))}"', 1)[1].split("</li>", 1)[0]

    assert "✓</span> Verbatim" in row("Price")
    assert "0:22–0:27" in row("Price")
    assert "<q>Pricing starts at twenty dollars a month</q>" in row("Price")
    assert "≠</span> Contradicted" in row("Faster")
    assert fresh(point(draft, "Faster")).pin["reason"][:40].lower() in row("Faster").lower()
    assert "Not pinned" in row("Fruit") and "Suggest words to pin" in row("Fruit")
    # The chapter's quotation, pinned where it is found, with its own row.
    assert "Quotation in chapter 1" in shown and "≈</span> Paraphrase" in shown


def test_the_change_page_reads_no_transcript_text_and_suggests_nothing(editor, draft, monkeypatch):
    pin_best(draft, point(draft, "Price"))

    def refuse(*args, **kwargs):
        raise AssertionError("the change page read the transcript's words")

    monkeypatch.setattr(pin_text, "suggest", refuse)
    monkeypatch.setattr(receipts, "words_of", refuse)
    monkeypatch.setattr(Transcript, "words", refuse)
    client = logged_in(editor)
    with CaptureQueriesContext(connection) as queries:
        response = client.get(change_url(draft))
    assert response.status_code == 200
    transcript_reads = [
        query["sql"] for query in queries.captured_queries if "summaries_transcript" in query["sql"]
    ]
    assert transcript_reads, "the panel names the transcript"
    assert not any('"segments"' in sql or '"original"' in sql for sql in transcript_reads)


def test_the_panel_costs_the_same_queries_for_two_statements_or_twelve(editor, draft):
    client = logged_in(editor)
    client.get(change_url(draft))  # the session and the content types, once

    def queries_of_the_page() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(change_url(draft)).status_code == 200
        return len(queries.captured_queries)

    before = queries_of_the_page()
    for position in range(5, 15):
        KeyPointFactory(
            summary=draft, position=position, title=f"More {position}", body=VERBATIM_POINT
        )
    pin_best(draft, point(draft, "More 5"))
    assert queries_of_the_page() == before


def test_a_summary_without_transcript_offers_the_import(editor):
    summary = SummaryFactory()
    KeyPointFactory(summary=summary, title="Alone")
    response = logged_in(editor).get(change_url(summary))
    assert "This video has no transcript yet" in page(response)
    assert summary_import_url(summary) in page(response)
    assert "Not pinned" not in page(response)  # nothing to pin to: no list of statements


# --- A statement's page and the pin buttons -----------------------------------------------------


def test_the_statement_page_offers_suggestions_with_words_and_time(editor, draft):
    price = point(draft, "Price")
    response = logged_in(editor).get(part_url(draft, price))
    assert response.status_code == 200
    suggestions = response.context["suggestions"]
    assert 1 <= len(suggestions) <= 3
    best = suggestions[0]
    assert "twenty dollars a month" in best.said and best.when.startswith("0:2")
    assert "Pin to these words" in page(response)


def test_accepting_a_suggestion_pins_the_statement(editor, draft):
    price = point(draft, "Price")
    client = logged_in(editor)
    best = client.get(part_url(draft, price)).context["suggestions"][0]
    response = client.post(
        pin_url(draft),
        {"part": key(price), "action": "accept", "first": best.first, "end": best.end},
    )
    assert response.status_code == 302
    assert response["Location"].endswith(f"#pin-{key(price)}")
    pin = fresh(price).pin
    assert (pin["first"], pin["end"], pin["status"]) == (best.first, best.end, "verbatim")
    assert "Pinned Key point 1" in said(response)[0]


def test_moving_a_pin_by_word_numbers(editor, draft):
    price = point(draft, "Price")
    pin_best(draft, price)
    response = logged_in(editor).post(
        pin_url(draft),
        {"part": key(price), "action": "move", "from_word": 1, "to_word": 5, "back": "part"},
    )
    assert response.status_code == 302
    pin = fresh(price).pin
    assert (pin["first"], pin["end"]) == (0, 5)
    assert pin["status"] != "verbatim"


@pytest.mark.parametrize(
    "words", [{"from_word": 5, "to_word": 2}, {"from_word": 1, "to_word": 99999}, {}]
)
def test_a_word_range_that_is_not_in_the_transcript_is_an_error_message(editor, draft, words):
    price = point(draft, "Price")
    pinned = pin_best(draft, price)
    response = logged_in(editor).post(
        pin_url(draft), {"part": key(price), "action": "move", "back": "part", **words}
    )
    assert response.status_code == 302
    assert response["Location"] == part_url(draft, price)
    assert said(response) and fresh(price).pin == pinned


def panel(action: str, part, quote: int | None = None, **fields) -> dict:
    """What the Receipts panel's form posts when a row's button is pressed."""
    anchor = f"pin-{key(part)}" + (f"-quote-{quote + 1}" if quote is not None else "")
    data = {"do": f"{action} {anchor}"}
    if quote is not None:
        data[f"quote-{anchor}"] = part.quote_pins[quote]["quote"]
    if "note" in fields:
        data[f"note-{anchor}"] = fields["note"]
    return data


def test_rejecting_removes_the_pin(editor, draft):
    price = point(draft, "Price")
    pin_best(draft, price)
    client = logged_in(editor)
    assert f'value="reject pin-{key(price)}"' in page(client.get(change_url(draft)))
    response = client.post(pin_url(draft), panel("reject", price))
    assert response.status_code == 302
    assert fresh(price).pin is None


def test_an_editor_approves_a_paraphrase(editor, draft):
    speed = point(draft, "Speed")
    pin_best(draft, speed)
    assert fresh(speed).pin["status"] == "paraphrase"
    client = logged_in(editor)
    assert f'value="approve pin-{key(speed)}"' in page(client.get(change_url(draft)))
    response = client.post(pin_url(draft), panel("approve", speed))
    assert response.status_code == 302
    assert fresh(speed).pin["approved"]["by"] == "eve"
    assert "approved by eve" in page(client.get(change_url(draft)))


def test_an_editor_sees_no_override_button_and_is_refused_one(editor, draft):
    faster = point(draft, "Faster")
    pin_best(draft, faster)
    pinned = fresh(faster).pin
    client = logged_in(editor)
    assert "Override with this note" not in page(client.get(change_url(draft)))
    assert "Override with this note" not in page(client.get(part_url(draft, faster)))
    response = client.post(pin_url(draft), panel("override", faster, note="I say so."))
    assert response.status_code == 403
    response = client.post(
        pin_url(draft), {"part": key(faster), "action": "override", "note": "I say so."}
    )
    assert response.status_code == 403
    assert fresh(faster).pin == pinned


def test_a_reviewer_overrides_with_a_note_that_history_shows(reviewer, draft):
    faster = point(draft, "Faster")
    pin_best(draft, faster)
    client = logged_in(reviewer)
    form = page(client.get(change_url(draft)))
    assert f'name="note-pin-{key(faster)}"' in form and "Override with this note" in form
    response = client.post(
        pin_url(draft), panel("override", faster, note="Corrected on screen at 0:09.")
    )
    assert response.status_code == 302
    override = fresh(faster).pin["override"]
    assert override["by"] == "rosa" and override["note"] == "Corrected on screen at 0:09."
    shown = page(client.get(change_url(draft)))
    assert "overridden by rosa: “Corrected on screen at 0:09.”" in shown
    history = page(client.get(reverse("admin:summaries_summary_history", args=[draft.pk])))
    assert "Corrected on screen at 0:09." in history


def test_an_override_without_a_note_is_refused_with_a_message(reviewer, draft):
    faster = point(draft, "Faster")
    pinned = pin_best(draft, faster)
    response = logged_in(reviewer).post(
        pin_url(draft), {"part": key(faster), "action": "override", "note": "  "}
    )
    assert response.status_code == 302
    assert any("Say why" in message for message in said(response))
    assert fresh(faster).pin == pinned


def quote_fields(chapter, index=0) -> dict:
    return {
        "part": key(chapter),
        "quote": index,
        "quote_text": chapter.quote_pins[index]["quote"],
    }


def test_an_editor_approves_a_paraphrased_quotation(editor, draft):
    chapter = Chapter.objects.get(summary=draft)
    assert chapter.quote_pins[0]["status"] == "paraphrase"
    client = logged_in(editor)
    assert 'value="approve_quote pin-' in page(client.get(change_url(draft)))
    response = client.post(pin_url(draft), panel("approve_quote", chapter, quote=0))
    assert response.status_code == 302, said(response)
    assert fresh(chapter).quote_pins[0]["approved"]["by"] == "eve"
    assert all(problem.quote is None for problem in receipts.publication_problems(draft))


def test_a_reviewer_overrides_a_quotation_the_page_still_names(reviewer, draft):
    chapter = Chapter.objects.get(summary=draft)
    client = logged_in(reviewer)
    # A page older than the chapter's last save names another quotation: refused.
    stale = {**quote_fields(chapter), "quote_text": "Something else"}
    response = client.post(
        pin_url(draft), {**stale, "action": "override_quote", "note": "Close enough."}
    )
    assert any("reload" in message for message in said(response))
    assert fresh(chapter).quote_pins[0]["override"] is None
    response = client.post(
        pin_url(draft), panel("override_quote", chapter, quote=0, note="Close enough.")
    )
    assert response.status_code == 302, said(response)
    assert fresh(chapter).quote_pins[0]["override"]["note"] == "Close enough."


def test_an_editor_may_not_override_a_quotation(editor, draft):
    chapter = Chapter.objects.get(summary=draft)
    response = logged_in(editor).post(
        pin_url(draft), {**quote_fields(chapter), "action": "override_quote", "note": "Fine."}
    )
    assert response.status_code == 403
    assert fresh(chapter).quote_pins[0]["override"] is None


@pytest.mark.parametrize("action", ["accept", "move", "reject", "approve", "override"])
def test_who_may_not_change_summaries_is_refused_every_pin_button(outsider, draft, action):
    speed = point(draft, "Speed")
    pinned = pin_best(draft, speed)
    client = logged_in(outsider)
    assert client.get(change_url(draft)).status_code == 403
    assert client.get(part_url(draft, speed)).status_code == 403
    response = client.post(
        pin_url(draft),
        {"part": key(speed), "action": action, "first": 0, "end": 3, "note": "Because."},
    )
    assert response.status_code == 403
    assert fresh(speed).pin == pinned


def test_a_pin_button_without_its_csrf_token_is_refused(editor, draft):
    price = point(draft, "Price")
    pinned = pin_best(draft, price)
    client = Client(enforce_csrf_checks=True)
    client.force_login(editor)
    response = client.post(pin_url(draft), {"part": key(price), "action": "reject"})
    assert response.status_code == 403
    assert fresh(price).pin == pinned


def test_pin_buttons_answer_only_posts_and_only_for_this_summarys_parts(editor, draft):
    client = logged_in(editor)
    assert client.get(pin_url(draft)).status_code == 405
    other = KeyPointFactory(title="Elsewhere")
    response = client.post(pin_url(draft), {"part": key(other), "action": "reject"})
    assert any("no longer in this summary" in message for message in said(response))
    assert client.get(part_url(draft, other)).status_code == 404
    bad = client.post(pin_url(draft), {"part": "summary-1", "action": "reject"})
    assert bad.status_code == 302 and said(bad)


def test_pinning_a_published_summary_pins_its_changes(editor, draft):
    price = point(draft, "Price")
    Summary.objects.filter(pk=draft.pk).update(
        status=Summary.Status.PUBLISHED, publish_at=timezone.now()
    )
    Transcript.objects.update(state=Transcript.State.LIVE)
    draft.refresh_from_db()
    client = logged_in(editor)
    best = client.get(part_url(draft, price)).context["suggestions"][0]
    response = client.post(
        pin_url(draft),
        {"part": key(price), "action": "accept", "first": best.first, "end": best.end},
    )
    assert response.status_code == 302, said(response)
    copy = copies.working_copy_of(draft)
    assert copy is not None
    assert KeyPoint.objects.get(summary=copy, title="Price").pin["status"] == "verbatim"
    assert fresh(price).pin is None  # readers' summary unchanged


# --- Things to check, publishing, history ---------------------------------------------------


def test_things_to_check_lists_what_publishing_refuses(editor, draft):
    pin_best(draft, point(draft, "Faster"))
    response = logged_in(editor).get(change_url(draft))
    things = page(response).split('id="things-to-check"', 1)[1].split("</div>", 1)[0]
    assert "Publishing is refused" in things
    for problem in receipts.publication_problems(draft):
        assert problem.message.replace("“", "").split(" (")[0][:30] in things.replace("“", "")
    assert "Faster" in things and "contradicted" in things


def test_the_publish_refusal_names_the_statement_until_a_reviewer_overrides_it(reviewer, draft):
    faster = point(draft, "Faster")
    pin_best(draft, faster)
    client = logged_in(reviewer)
    from .admin_forms import form_fields

    data = form_fields(client.get(change_url(draft)))
    response = client.post(change_url(draft), {**data, "_publish": "1"}, follow=True)
    draft.refresh_from_db()
    assert draft.status != Summary.Status.PUBLISHED
    errors = [str(m) for m in response.context["messages"] if m.level_tag == "error"]
    assert any("Faster" in message and "contradicted" in message for message in errors), errors
    assert any("“Price” (at 0:22) is not pinned to the transcript yet" in m for m in errors)

    client.post(
        pin_url(draft), {"part": key(faster), "action": "override", "note": "Slide says 4x."}
    )
    # Every other statement pinned at its first suggestion, each paraphrase approved and
    # what the transcript does not say let through with a note, through the panel.
    for part in receipts.parts_of(draft):
        if part.pin is None:
            best = pinning.suggestions(summary=draft, part=part, limit=1)[0]
            accept = {"part": key(part), "action": "accept", "first": best.first_word}
            client.post(pin_url(draft), {**accept, "end": best.end_word})
    for part in receipts.parts_of(draft):
        if receipts.blocks(part.pin):
            paraphrase = part.pin["status"] == "paraphrase"
            action = {"action": "approve"} if paraphrase else {"action": "override", "note": "Ok."}
            client.post(pin_url(draft), {"part": key(part), **action})
    chapter = Chapter.objects.get(summary=draft)
    client.post(pin_url(draft), {**quote_fields(chapter), "action": "approve_quote"})
    assert receipts.publication_problems(draft) == []
    data = form_fields(client.get(change_url(draft)))
    client.post(change_url(draft), {**data, "_publish": "1"})
    draft.refresh_from_db()
    assert draft.status == Summary.Status.PUBLISHED


def test_history_lists_each_pin_action_with_its_words(editor, draft):
    price, speed = point(draft, "Price"), point(draft, "Speed")
    client = logged_in(editor)
    pin_best(draft, price, user=editor)
    pin_best(draft, speed, user=editor)
    client.post(pin_url(draft), {"part": key(speed), "action": "approve"})
    client.post(pin_url(draft), {"part": key(price), "action": "reject"})
    history = page(client.get(reverse("admin:summaries_summary_history", args=[draft.pk])))
    assert "Approved the paraphrase of “Speed”" in history
    assert "Removed the pin of “Price”" in history


# --- The Transcript pages -------------------------------------------------------------------


@pytest.fixture
def imported(editor):
    summary = SummaryFactory(video__duration_seconds=60, video__title="Model release")
    pinning.import_transcript(
        video=summary.video, data=vtt(SPEECH), user=editor, filename="release.vtt"
    )
    return Transcript.objects.get(video=summary.video)


@pytest.mark.parametrize("who", ["editor", "reviewer"])
def test_transcripts_are_listed_and_shown_read_only(request, who, imported):
    client = logged_in(request.getfixturevalue(who))
    listing = client.get(reverse("admin:summaries_transcript_changelist"))
    assert listing.status_code == 200
    assert "Model release" in page(listing) and "Add transcript" not in page(listing)
    detail = client.get(reverse("admin:summaries_transcript_change", args=[imported.pk]))
    assert detail.status_code == 200
    for shown in ("Model release", "Waiting for review", "vtt", "release.vtt", "1:00"):
        assert shown in page(detail), shown
    assert 'name="_save"' not in page(detail)


def test_the_transcript_list_reads_no_text(editor, imported):
    client = logged_in(editor)
    with CaptureQueriesContext(connection) as queries:
        client.get(reverse("admin:summaries_transcript_changelist"))
        client.get(reverse("admin:summaries_transcript_change", args=[imported.pk]))
    reads = [q["sql"] for q in queries.captured_queries if "summaries_transcript" in q["sql"]]
    assert reads and not any('"segments"' in sql for sql in reads)


def test_transcripts_are_not_added_changed_or_deleted_through_their_pages(editor, imported):
    client = logged_in(editor)
    assert client.get(reverse("admin:summaries_transcript_add")).status_code == 403
    change = reverse("admin:summaries_transcript_change", args=[imported.pk])
    assert client.post(change, {"language": "fr", "state": "live"}).status_code == 403
    delete = reverse("admin:summaries_transcript_delete", args=[imported.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    imported.refresh_from_db()
    assert imported.language == "en" and imported.state == Transcript.State.DRAFT


def test_a_transcripts_history_lists_its_imports_and_restores_nothing(editor, imported):
    pinning.import_transcript(
        video=imported.video, data=vtt(SPEECH[:3]), user=editor, filename="shorter.vtt"
    )
    client = logged_in(editor)
    history = client.get(reverse("admin:summaries_transcript_history", args=[imported.pk]))
    assert history.status_code == 200
    assert "release.vtt" in page(history) and "shorter.vtt" in page(history)
    oldest = Version.objects.get_for_object(imported).order_by("pk").first()
    restore = reverse("admin:summaries_transcript_revision", args=[imported.pk, oldest.pk])
    assert client.get(restore).status_code == 200  # shown, read only
    assert client.post(restore, {}).status_code == 403
    assert Transcript.objects.get(pk=imported.pk).original_name == "shorter.vtt"


def test_who_may_not_read_summaries_does_not_see_transcripts(outsider, imported):
    client = logged_in(outsider)
    assert client.get(reverse("admin:summaries_transcript_changelist")).status_code == 403
    detail = reverse("admin:summaries_transcript_change", args=[imported.pk])
    assert client.get(detail).status_code == 403


def test_the_video_page_lists_its_transcripts(editor, imported):
    response = logged_in(editor).get(
        reverse("admin:summaries_video_change", args=[imported.video.pk])
    )
    assert reverse("admin:summaries_transcript_change", args=[imported.pk]) in page(response)
    assert "English, waiting for review" in page(response)


def test_takeaways_are_pinned_like_key_points(editor, draft):
    takeaway = Takeaway.objects.get(summary=draft)
    client = logged_in(editor)
    suggestions = client.get(part_url(draft, takeaway)).context["suggestions"]
    assert suggestions
    best = suggestions[0]
    client.post(
        pin_url(draft),
        {"part": key(takeaway), "action": "accept", "first": best.first, "end": best.end},
    )
    assert fresh(takeaway).pin is not None


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        ("verbatim", ("✓", "Verbatim")),
        ("paraphrase", ("≈", "Paraphrase")),
        ("not_found", ("✗", "Not found")),
        ("contradicted", ("≠", "Contradicted")),
        ("mis_timed", ("⏱", "Mis-timed")),
    ],
)
def test_every_status_has_its_words_and_a_symbol_not_only_a_colour(status, shown):
    row = PinRow(key="keypoint-1", name="Key point 1", label="x", pin={"status": status})
    assert (row.symbol, row.status_text) == shown
    unpinned = PinRow(key="keypoint-1", name="Key point 1", label="x", pin=None)
    assert unpinned.status_text == "Not pinned"


def test_every_status_the_text_layer_gives_is_shown():
    assert set(STATUSES) == {status.value for status in pin_text.Status}
