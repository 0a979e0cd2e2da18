"""A new transcript never moves a pin: a re-check keeps the span an editor accepted and
proposes where the words are now; importing the whole file again brings every pin, its
verdict and its approval back (summaries/editing/receipts.py `verified`, pinning.py)."""

import pytest
from django.core.exceptions import ValidationError
from reversion.models import Version

from summaries.editing import pinning
from summaries.models import Chapter, KeyPoint

from .factories import ChapterFactory, KeyPointFactory, SummaryFactory
from .receipts_factories import (
    OPENING,
    PARAPHRASED_POINT,
    SPEECH,
    VERBATIM_POINT,
    VERBATIM_QUOTE,
    fresh,
    pin_best,
    vtt,
)

pytestmark = pytest.mark.django_db

# What an editor accepted, and what the gate judges on.
SPAN = ("first", "end", "start", "stop", "said")
VERDICT = ("status", "score", "reason", "approved")
# The file cut short: the first three lines (0:00–0:22) of the one-minute talk.
CUT = SPEECH[:3]
# The talk with a greeting before it: every word five words on, half a second later.
SHIFTED = [
    (0, 0.5, "Hello and welcome everyone here."),
    *[(a + 0.5, b + 0.5, t) for a, b, t in SPEECH],
]


@pytest.fixture
def draft(editor):
    summary = SummaryFactory(tldr="The new model, its price and what comes next.")
    summary.video.duration_seconds = 60
    summary.video.save()
    KeyPointFactory(summary=summary, position=1, title="Price", body=VERBATIM_POINT, time=22)
    KeyPointFactory(summary=summary, position=2, title="Speed", body=PARAPHRASED_POINT, time=6)
    ChapterFactory(
        summary=summary,
        position=1,
        title="Release",
        body=f"{OPENING} Later: “{VERBATIM_QUOTE},” they say.",
        start_time=0,
    )
    load(summary, SPEECH, "talk.vtt", editor)
    pin_best(summary, point(summary, "Price"), editor)
    pin_best(summary, point(summary, "Speed"), editor)
    pinning.approve_pin(summary=summary, part=point(summary, "Speed"), user=editor)
    return summary


def load(summary, lines, name, editor):
    pinning.import_transcript(video=summary.video, data=vtt(lines), user=editor, filename=name)


def point(summary, title) -> KeyPoint:
    return KeyPoint.objects.get(summary=summary, title=title)


def quote_pin(summary) -> dict:
    return Chapter.objects.get(summary=summary).quote_pins[0]


def keys(pin, names):
    return {name: pin[name] for name in names}


def test_a_cut_transcript_leaves_every_pin_where_the_editor_put_it(draft, editor):
    before = {p.title: p.pin for p in KeyPoint.objects.filter(summary=draft)}
    quote = quote_pin(draft)

    load(draft, CUT, "cut.vtt", editor)

    price = point(draft, "Price").pin
    assert keys(price, SPAN) == keys(before["Price"], SPAN)
    assert price["status"] == "not_found"  # the words are not in this transcript
    assert price["reason"].startswith("the transcript ends at 0:22, before the words pinned")
    assert keys(quote_pin(draft), SPAN) == keys(quote, SPAN)
    assert quote_pin(draft)["status"] == "not_found"
    speed = point(draft, "Speed").pin  # said before the cut: the same words, same verdict
    assert keys(speed, (*SPAN, "status")) == keys(before["Speed"], (*SPAN, "status"))
    assert speed["proposal"] is None


def test_importing_the_whole_file_again_brings_pins_verdicts_and_approvals_back(draft, editor):
    before = {p.title: p.pin for p in KeyPoint.objects.filter(summary=draft)}
    quote = quote_pin(draft)
    load(draft, CUT, "cut.vtt", editor)
    assert point(draft, "Speed").pin["approved"] is None  # given for the other transcript

    load(draft, SPEECH, "talk.vtt", editor)

    after = {p.title: p.pin for p in KeyPoint.objects.filter(summary=draft)}
    for title in ("Price", "Speed"):
        assert keys(after[title], (*SPAN, *VERDICT, "transcript")) == keys(
            before[title], (*SPAN, *VERDICT, "transcript")
        )
        assert after[title]["proposal"] is None
    assert after["Speed"]["status"] == "paraphrase"
    assert after["Speed"]["approved"]["by"] == "eve"
    assert keys(quote_pin(draft), (*SPAN, "status")) == keys(quote, (*SPAN, "status"))


def test_words_said_elsewhere_now_are_proposed_not_moved_to(draft, editor):
    before = point(draft, "Price").pin

    load(draft, SHIFTED, "shifted.vtt", editor)

    price = point(draft, "Price").pin
    assert keys(price, SPAN) == keys(before, SPAN)
    proposal = price["proposal"]
    assert (proposal["first"], proposal["end"]) == (before["first"] + 5, before["end"] + 5)
    assert proposal["said"] == before["said"]
    assert proposal["start"] == pytest.approx(before["start"] + 0.5, abs=0.1)
    assert proposal["status"] == "verbatim"


def test_accepting_a_proposal_moves_the_pin_there_in_one_revision(draft, editor):
    load(draft, SHIFTED, "shifted.vtt", editor)
    proposal = point(draft, "Price").pin["proposal"]

    pin = pinning.accept_proposal(summary=draft, part=point(draft, "Price"), user=editor)

    assert keys(pin, SPAN) == keys(proposal, SPAN)
    assert pin["status"] == "verbatim" and pin["proposal"] is None
    assert fresh(point(draft, "Price")).pin == pin
    revision = Version.objects.get_for_object(draft)[0].revision
    assert revision.get_comment() == "Accepted the proposed span of “Price”"
    assert revision.user == editor


def test_rejecting_a_proposal_keeps_the_pin_and_it_is_not_proposed_again(draft, editor):
    load(draft, SHIFTED, "shifted.vtt", editor)
    kept = point(draft, "Price").pin

    pin = pinning.reject_proposal(summary=draft, part=point(draft, "Price"), user=editor)

    assert pin == {**kept, "proposal": None}
    pinning.refresh_pins(summary=draft)
    assert point(draft, "Price").pin["proposal"] is None
    with pytest.raises(ValidationError):
        pinning.accept_proposal(summary=draft, part=point(draft, "Price"), user=editor)


def test_a_proposal_made_on_another_transcript_is_not_accepted(draft, editor):
    load(draft, SHIFTED, "shifted.vtt", editor)
    price = point(draft, "Price")
    load(draft, [*SHIFTED, (70, 71, "One more line.")], "longer.vtt", editor)
    price.pin = {**fresh(price).pin, "proposal": price.pin["proposal"]}  # as a stale form had it
    KeyPoint.objects.filter(pk=price.pk).update(pin=price.pin)

    with pytest.raises(ValidationError, match="transcript changed"):
        pinning.accept_proposal(summary=draft, part=price, user=editor)


def test_a_quotation_said_elsewhere_is_proposed_and_accepted(draft, editor):
    before = quote_pin(draft)
    load(draft, SHIFTED, "shifted.vtt", editor)
    assert keys(quote_pin(draft), SPAN) == keys(before, SPAN)

    pin = pinning.accept_proposal(
        summary=draft, part=Chapter.objects.get(summary=draft), user=editor, quote=0
    )

    assert pin["first"] == before["first"] + 5 and pin["status"] == "verbatim"
    assert quote_pin(draft)["quote"] == VERBATIM_QUOTE
