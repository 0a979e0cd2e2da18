"""The demo shows Receipts from the first `load_demo`: its video's transcript is live, and
every key point, takeaway, caveat, chapter start and quotation of its summary is pinned to
the words said and verified."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse
from reversion.models import Revision, Version

from summaries.demo import load_demo
from summaries.demo.transcripts import FILENAME, auto_caption_vtt
from summaries.editing import pinning, receipts, workflow
from summaries.models import Caveat, Chapter, KeyPoint, Summary, Takeaway, Transcript

MAIN_SLUG = "speed-maxis-unite-why-fast-ai-models-matter-for-agents"

pytestmark = pytest.mark.django_db


@pytest.fixture
def summary():
    call_command("load_demo", stdout=io.StringIO())
    return Summary.objects.get(video__slug=MAIN_SLUG)


def statements(summary: Summary) -> list:
    return [
        *KeyPoint.objects.filter(summary=summary).order_by("position"),
        *Takeaway.objects.filter(summary=summary).order_by("position"),
        *Caveat.objects.filter(summary=summary).order_by("position"),
        *Chapter.objects.filter(summary=summary).order_by("position"),
    ]


def pinned_words(summary: Summary, pin: dict) -> str:
    transcript = receipts.transcript_for(summary)
    return " ".join(word.text for word in transcript.words()[pin["first"] : pin["end"]])


def test_the_demo_video_has_one_transcript_and_it_is_live(summary):
    transcripts = list(Transcript.objects.filter(video=summary.video))

    assert [(t.language, t.state) for t in transcripts] == [("en", Transcript.State.LIVE)]
    transcript = transcripts[0]
    assert receipts.transcript_for(summary) == transcript
    assert transcript.format == "vtt"
    assert transcript.original_name == FILENAME
    assert bytes(transcript.original) == auto_caption_vtt()
    assert transcript.warnings == []
    # Read as YouTube's automatic captions are: every word once, with its own time (a line
    # of one word has only its cue's).
    assert all(s.get("words") for s in transcript.segments if len(s["text"].split()) > 1)
    words = transcript.words()
    assert [w.text for w in words[:5]] == ["[Music]", "I", "feel", "vindicated", "I've"]
    assert len(words) == transcript.word_count > 1000
    assert [w.start for w in words] == sorted(w.start for w in words)
    assert transcript.ends_at <= summary.video.duration_seconds


def test_the_transcript_file_is_shaped_like_youtube_auto_captions():
    text = auto_caption_vtt().decode()

    assert text.startswith("WEBVTT\nKind: captions\nLanguage: en\n\n")
    assert "[Music]" in text
    assert "I<00:00:04.192><c> feel</c>" in text
    # Rolling: each line is shown again above the next one, and alone in a 10 ms cue.
    assert text.count("I feel vindicated I've been a speed") == 2
    assert auto_caption_vtt() == auto_caption_vtt()


def test_every_statement_is_pinned_and_verified(summary):
    digest = receipts.transcript_for(summary).digest

    for part in statements(summary):
        pin = part.pin
        assert pin is not None, part
        assert pin["transcript"] == digest, part
        assert pin["suggested"] is None, part
        if isinstance(part, Chapter):
            assert pin["status"] == "verbatim", (part, pin["reason"])
        else:
            assert pin["status"] in ("verbatim", "paraphrase"), (part, pin["reason"])
            if pin["status"] == "paraphrase":
                assert pin["approved"]["by"] == "editor", part  # a named editor
    assert receipts.publication_problems(summary) == []


def test_caveats_are_pinned_too_as_the_gate_asks(summary):
    """A statement with no pin keeps a summary with a transcript from going live: the
    demo's caveats are said in its video and pinned there."""
    caveats = Caveat.objects.filter(summary=summary).order_by("position")
    assert [caveat.pin["status"] for caveat in caveats] == ["verbatim", "verbatim", "paraphrase"]
    assert caveats[2].pin["approved"]["by"] == "editor"


def test_the_quotation_of_the_first_chapter_is_pinned_verbatim(summary):
    first, second = Chapter.objects.filter(summary=summary).order_by("position")

    assert [(q["quote"], q["status"]) for q in first.quote_pins] == [("speed maxi", "verbatim")]
    assert pinned_words(summary, first.quote_pins[0]) == "speed maxi"
    assert second.quote_pins == []


def test_pins_stand_on_the_words_that_support_them(summary):
    first, second = Chapter.objects.filter(summary=summary).order_by("position")
    takeaways = list(Takeaway.objects.filter(summary=summary).order_by("position"))

    assert pinned_words(summary, first.pin).startswith("I feel vindicated I've been a speed")
    assert pinned_words(summary, second.pin).startswith("I've been using Claude Opus 4.6")
    assert first.pin["start"] < second.pin["start"]
    assert "2.5 times faster" in pinned_words(summary, takeaways[1].pin)
    assert "1,000 tokens per second on Cerebras" in pinned_words(summary, takeaways[2].pin)
    assert "only one factor in total task time" in pinned_words(summary, takeaways[3].pin)


# The words each key point and takeaway is pinned to start and end with: the statement's
# own words, not the related words said before or after them.
SAID = {
    # From the start of its clause ("but I have…"), where the reader hears it begin.
    "key point 1": ("but I have valued model speed", "matters alongside quality"),
    "key point 2": ("an agent can act on the model's output", "important for its whole workflow"),
    "key point 3": ("Opus 4.6 fast mode", "examples of the same trend"),
    "takeaway 1": ("when agents do the work", "speed becomes especially important"),
    "takeaway 2": ("Anthropic says that this mode", "faster than regular"),
    # The words that say it: the product it names, then what it does.
    "takeaway 3": ("GPT-5.3 Codex Spark", "per second on Cerebras hardware"),
    "takeaway 4": ("token generation speed is only", "demonstrate quality or reliability"),
}


def test_each_point_is_pinned_from_its_first_words_to_its_last(summary):
    points = {
        **{
            f"key point {k}": point.pin
            for k, point in enumerate(
                KeyPoint.objects.filter(summary=summary).order_by("position"), 1
            )
        },
        **{
            f"takeaway {k}": takeaway.pin
            for k, takeaway in enumerate(
                Takeaway.objects.filter(summary=summary).order_by("position"), 1
            )
        },
    }
    spans = {name: pinned_words(summary, pin) for name, pin in points.items()}

    assert {
        name: (said.startswith(SAID[name][0]), said.endswith(SAID[name][1]))
        for name, said in spans.items()
    } == {name: (True, True) for name in SAID}, spans


def test_a_reader_is_sent_to_the_moment_key_point_2_is_said(client, summary):
    point = KeyPoint.objects.get(summary=summary, position=2)
    assert point.pin["start"] == 76.784

    page = client.get(summary.get_absolute_url()).content.decode()
    key_points = page[page.index('id="key-points"') : page.index('id="takeaways"')]
    assert ">▶ 1:16</a>" in key_points
    assert "1:03" not in key_points


def test_a_rerun_pins_again_a_point_an_earlier_load_pinned_too_wide(summary):
    """An earlier pins engine pinned key point 2 from 1:03, to related words said before
    its own; the pin was verified and approved, and a rerun still puts it where it is
    said."""
    point = KeyPoint.objects.get(summary=summary, position=2)
    words = receipts.transcript_for(summary).words()
    wide = {**point.pin, "first": 175, "end": 240, "start": words[175].start}
    KeyPoint.objects.filter(pk=point.pk).update(pin=wide)

    assert load_demo() == {"created": {}, "updated": {"Pin": 1}, "deleted": {}}

    point.refresh_from_db()
    assert (point.pin["start"], point.pin["status"]) == (76.784, "paraphrase")
    assert point.pin["approved"]


def test_verifying_the_pins_again_changes_nothing(summary):
    assert receipts.refresh_pins(summary=summary) == 0


def test_the_summary_is_published_with_no_working_copy(summary):
    assert summary.status == Summary.Status.PUBLISHED
    assert summary in Summary.objects.published()
    assert Summary.objects.filter(working_copy_of=summary).count() == 0


def test_the_transcript_has_a_revision_of_its_own_and_the_pins_are_in_the_summarys(summary):
    transcript = Transcript.objects.get(video=summary.video)
    (version,) = Version.objects.get_for_object(transcript)
    assert [v.object for v in version.revision.version_set.all()] == [transcript]

    (summary_version,) = Version.objects.get_for_object(summary)
    assert summary_version.revision.get_comment() == "Loaded the demo content"
    chapter = Chapter.objects.get(summary=summary, position=1)
    (chapter_version,) = Version.objects.get_for_object(chapter)
    assert chapter_version.revision == summary_version.revision
    assert chapter_version.field_dict["pin"] == chapter.pin
    assert chapter_version.field_dict["quote_pins"] == chapter.quote_pins


def test_a_second_run_changes_nothing(summary):
    revisions = Revision.objects.count()
    pins = [part.pin for part in statements(summary)]

    assert load_demo() == {"created": {}, "updated": {}, "deleted": {}}

    assert Revision.objects.count() == revisions
    assert [part.pin for part in statements(summary)] == pins


def test_first_run_reports_the_transcript_and_the_pins():
    counts = load_demo()

    assert counts["created"]["Transcript"] == 1
    assert counts["created"]["Pin"] == 12  # 3 key points, 4 takeaways, 3 caveats, 2 chapters
    assert "Transcript" not in counts["updated"]


def test_a_rerun_puts_back_the_demo_transcript_and_pins_an_editor_replaced(summary):
    workflow.unpublish_summary(summary=summary, user=None)
    summary.refresh_from_db()
    takeaway = Takeaway.objects.get(summary=summary, position=2)
    pinning.set_pin(summary=summary, part=takeaway, first=None, end=None, user=None)
    pinning.import_transcript(
        video=summary.video,
        data=b"WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nSomething else entirely.\n",
        user=None,
        filename="other.vtt",
    )

    counts = load_demo()

    # The takeaway pinned again; the other pins come back with the demo transcript itself.
    assert counts["created"]["Pin"] == 1
    assert counts["updated"]["Transcript"] == 1
    transcript = Transcript.objects.get(video=summary.video)
    assert transcript.state == Transcript.State.LIVE
    assert bytes(transcript.original) == auto_caption_vtt()
    summary.refresh_from_db()
    assert summary.status == Summary.Status.PUBLISHED
    takeaway.refresh_from_db()
    assert takeaway.pin["status"] == "paraphrase" and takeaway.pin["approved"]
    assert receipts.publication_problems(summary) == []
    assert Summary.objects.filter(working_copy_of=summary).count() == 0


def test_if_missing_leaves_a_loaded_demos_transcript_alone(summary):
    transcript = Transcript.objects.get(video=summary.video)
    Transcript.objects.filter(pk=transcript.pk).update(original_name="kept.vtt")

    call_command("load_demo", "--if-missing", stdout=io.StringIO())

    assert Transcript.objects.get(video=summary.video).original_name == "kept.vtt"


def test_a_reader_sees_where_each_statement_is_said(client, summary):
    page = client.get(summary.get_absolute_url()).content.decode()

    # 3 key points, 4 takeaways and the quotation; each chapter starts where it is said.
    assert page.count('class="receipt"') == 8
    assert ">Watch from 0:04</a>" in page
    assert ">Watch from 4:35</a>" in page
    transcript = client.get(reverse("summaries:summary-transcript", args=[summary.video.slug]))
    assert transcript.status_code == 200
    assert "I feel vindicated" in transcript.content.decode()


def test_a_rerun_verifies_older_pins_again_and_says_so(summary):
    """A pin verified by an older version (here: without the stated time it was checked
    for) is verified again, and the run reports it."""
    point = KeyPoint.objects.get(summary=summary, position=1)
    older = {key: value for key, value in point.pin.items() if key != "stated_time"}
    KeyPoint.objects.filter(pk=point.pk).update(pin=older)

    assert load_demo() == {"created": {}, "updated": {"Pin": 1}, "deleted": {}}

    point.refresh_from_db()
    assert "stated_time" in point.pin and point.pin["approved"]
