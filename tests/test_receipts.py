"""Receipts services: importing a transcript, pinning statements to it, and the publish gate
that refuses statements the transcript does not support (summaries/editing/receipts.py,
pinning.py). The roads to publishing (admin, API, schedules, restore) are in
test_receipts_roads.py."""

import datetime

import pytest
import time_machine
from django.contrib.auth.models import Permission
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from reversion.models import Version

from summaries.editing import copies, pinning, receipts, save, workflow
from summaries.models import Chapter, KeyPoint, Summary, Transcript

from .factories import (
    ChapterFactory,
    KeyPointFactory,
    SummaryFactory,
    UserFactory,
)
from .receipts_factories import (
    CONTRADICTED_POINT,
    CONTRADICTED_QUOTE,
    OPENING,
    PARAPHRASED_POINT,
    PARAPHRASED_QUOTE,
    SPEECH,
    SPEECH_CORRECTED,
    UNSAID_POINT,
    VERBATIM_POINT,
    VERBATIM_QUOTE,
    accept_proposals,
    clock,
    fresh,
    pin_and_approve,
    pin_best,
    vtt,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def draft():
    """A draft summary of a one-minute video: a point said word for word, a paraphrase,
    and a chapter quoting the video."""
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
    return summary


def point(summary, title) -> KeyPoint:
    return KeyPoint.objects.get(summary=summary, title=title)


def chapter(summary, title="Release") -> Chapter:
    return Chapter.objects.get(summary=summary, title=title)


def import_speech(video, user, lines=SPEECH, name="talk.vtt"):
    return pinning.import_transcript(video=video, data=vtt(lines), user=user, filename=name)


def edit_point(summary, which, user, **values):
    """An editor's save of one key point (by title) through the one write path."""
    points = list(KeyPoint.objects.filter(summary=summary).order_by("position"))
    for item in points:
        if item.title == which:
            for name, value in values.items():
                setattr(item, name, value)
    save.save_summary(summary=summary, parts={KeyPoint: points}, user=user)


def correct_the_changes(summary, editor) -> Summary:
    """What an editor does once SPEECH_CORRECTED is imported for live `summary`: its
    changes say the new numbers, each pin moves where the new transcript proposes, and
    the paraphrases are approved again (an approval holds for one transcript). Returns
    the changes."""
    copy = copies.working_copy_of(summary)
    assert copy is not None
    edit_point(copy, "Price", editor, body="Pricing starts at $30 a month.")
    edit_point(copy, "Speed", editor, body="The new model runs 4 times faster than before.")
    accept_proposals(copy, editor)
    pin_and_approve(copy, editor)
    return copy


def quoting(quote: str) -> str:
    """A chapter body whose first words (its start's statement) are the talk's first two
    lines, followed by `quote`."""
    return f"{OPENING} {SPEECH[1][2]} They said: “{quote}”."


def edit_chapter_body(summary, body, user, title="Release"):
    chapters = list(Chapter.objects.filter(summary=summary).order_by("position"))
    for item in chapters:
        if item.title == title:
            item.body = body
    save.save_summary(summary=summary, parts={Chapter: chapters}, user=user)


# --- Import ---------------------------------------------------------------------------------


def test_an_imported_transcript_waits_for_review_until_the_summary_is_published(
    draft, editor, reviewer
):
    imported = import_speech(draft.video, editor)

    assert imported.transcript.state == Transcript.State.DRAFT
    assert imported.summary == draft
    assert not Transcript.objects.live().exists()
    assert imported.transcript.word_count == sum(len(t.split()) for *_, t in SPEECH)
    pin_and_approve(draft, editor)
    workflow.submit_for_review(summary=draft, user=editor)
    assert not Transcript.objects.live().exists()  # in review is not published

    workflow.publish_summary(summary=draft, user=reviewer)
    assert Transcript.objects.get().state == Transcript.State.LIVE


def test_an_import_for_a_live_summary_lands_in_its_working_copy(draft, editor, reviewer):
    import_speech(draft.video, editor)
    pin_and_approve(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    quote_pins_live = chapter(draft).quote_pins

    imported = import_speech(draft.video, editor, SPEECH_CORRECTED, "corrected.vtt")

    copy = copies.working_copy_of(draft)
    assert imported.summary == copy and copy is not None
    live, waiting = Transcript.objects.order_by("-state")
    assert (waiting.state, waiting.original_name) == (Transcript.State.DRAFT, "corrected.vtt")
    assert live.state == Transcript.State.LIVE and live.digest != waiting.digest
    # The live summary's pins still stand on the live transcript; the copy's on the new one.
    assert chapter(draft).quote_pins == quote_pins_live
    assert chapter(copy).quote_pins[0]["transcript"] == waiting.digest

    correct_the_changes(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    assert list(Transcript.objects.values_list("state", "original_name")) == [
        (Transcript.State.LIVE, "corrected.vtt")
    ]
    assert chapter(draft).quote_pins[0]["transcript"] == waiting.digest


def test_an_import_for_a_video_without_a_summary_waits_for_its_first_publication(editor):
    video = SummaryFactory().video
    Summary.objects.filter(video=video).delete()
    imported = import_speech(video, editor)
    assert imported.summary is None and imported.transcript.state == Transcript.State.DRAFT


def test_discarded_changes_take_their_transcript_with_them(draft, editor, reviewer):
    import_speech(draft.video, editor)
    pin_and_approve(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    imported = import_speech(draft.video, editor, SPEECH_CORRECTED, "corrected.vtt")

    assert copies.discard_changes(summary=draft, user=editor)

    assert list(Transcript.objects.values_list("state", "original_name")) == [
        (Transcript.State.LIVE, "talk.vtt")
    ]
    # The import is still in history, from where it could be recovered.
    assert Version.objects.get_for_object_reference(Transcript, imported.transcript.pk).exists()


def test_changes_sent_back_do_not_publish_their_transcript(draft, editor, reviewer):
    import_speech(draft.video, editor)
    pin_and_approve(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    import_speech(draft.video, editor, SPEECH_CORRECTED, "corrected.vtt")
    workflow.submit_for_review(summary=draft, user=editor)

    workflow.send_back(summary=draft, user=reviewer, note="Check the numbers.")

    assert Transcript.objects.get(state=Transcript.State.DRAFT).original_name == "corrected.vtt"
    assert Transcript.objects.get(state=Transcript.State.LIVE).original_name == "talk.vtt"


def test_unpublishing_keeps_the_transcript_of_the_changes_waiting(draft, editor, reviewer):
    import_speech(draft.video, editor)
    pin_and_approve(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    import_speech(draft.video, editor, SPEECH_CORRECTED, "corrected.vtt")

    workflow.unpublish_summary(summary=draft, user=reviewer)

    draft.refresh_from_db()
    waiting = Transcript.objects.get(state=Transcript.State.DRAFT)
    assert receipts.transcript_for(draft) == waiting
    assert chapter(draft).quote_pins[0]["transcript"] == waiting.digest


def test_each_import_is_a_revision_of_the_transcript(draft, editor):
    first = import_speech(draft.video, editor).transcript
    second = import_speech(draft.video, editor, SPEECH_CORRECTED, "corrected.vtt").transcript

    assert first.pk == second.pk  # the one waiting for review, replaced
    versions = Version.objects.get_for_object(second)
    assert [v.revision.get_comment() for v in versions] == [
        "Imported the transcript corrected.vtt",
        "Imported the transcript talk.vtt",
    ]
    assert versions[0].revision.user == editor
    assert versions[1].field_dict["digest"] == first.digest != second.digest


def test_a_file_that_is_not_a_transcript_is_refused_naming_the_line(draft, editor):
    broken = b"WEBVTT\n\n00:00:01.000 --> 00:00:03.000\nhello\n\nbogus --> 00:00:05.000\nno\n"
    with pytest.raises(ValidationError) as refused:
        pinning.import_transcript(video=draft.video, data=broken, user=editor, filename="b.vtt")
    assert refused.value.code == "invalid"
    assert "line 6" in refused.value.messages[0]
    assert not Transcript.objects.exists()


def test_a_refused_file_quoting_a_percent_sign_is_still_named_by_its_line(draft, editor):
    broken = b"1\n00:00:01,000 --> 00:00:02,000\nhi\n\n2\n50% faster %(line)s\nhi\n"
    with pytest.raises(ValidationError) as refused:
        pinning.import_transcript(video=draft.video, data=broken, user=editor, filename="b.srt")
    [message] = refused.value.messages
    assert "line 6" in message and "50% faster %(line)s" in message
    assert refused.value.message == message  # as written, for faces that read it raw
    assert refused.value.__cause__.line == 6


def test_a_file_over_the_size_limit_is_refused_as_too_large(draft, editor, settings):
    settings.TRANSCRIPT_MAX_BYTES = 100
    data = vtt(SPEECH)
    assert len(data) > 100
    with pytest.raises(ValidationError) as refused:
        pinning.import_transcript(video=draft.video, data=data, user=editor, filename="t.vtt")
    assert refused.value.code == "too_large"
    assert "larger than the limit" in refused.value.messages[0]
    assert not Transcript.objects.exists()


def test_an_unknown_language_is_refused(draft, editor):
    with pytest.raises(ValidationError, match="language"):
        pinning.import_transcript(video=draft.video, data=vtt(SPEECH), user=editor, language="zz")


def test_an_editor_may_import_a_transcript(draft, editor):
    assert import_speech(draft.video, editor).transcript.updated_by == editor


def test_a_user_who_may_not_change_summaries_may_not_import(draft):
    viewer = UserFactory(is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_summary"))
    with pytest.raises(PermissionDenied):
        import_speech(draft.video, viewer)
    assert not Transcript.objects.exists()


def test_a_user_who_may_not_change_summaries_may_not_import_before_there_is_a_summary():
    video = SummaryFactory().video
    Summary.objects.filter(video=video).delete()
    viewer = UserFactory(is_staff=True)
    with pytest.raises(PermissionDenied):
        import_speech(video, viewer)
    assert not Transcript.objects.exists()


def test_a_deactivated_editor_may_not_import(draft, editor):
    editor.is_active = False
    editor.save()
    with pytest.raises(PermissionDenied):
        import_speech(draft.video, editor)


# --- Pins -----------------------------------------------------------------------------------


def test_accepting_a_suggestion_pins_the_statement_where_it_is_said(draft, editor):
    import_speech(draft.video, editor)
    price = point(draft, "Price")

    pin = pin_best(draft, price, editor)

    assert pin["status"] == "verbatim" and pin["start"] == pytest.approx(22, abs=1)
    assert fresh(price).pin == pin
    revision = Version.objects.get_for_object(draft)[0].revision
    assert revision.get_comment() == "Pinned “Price”" and revision.user == editor


def test_a_pin_moved_to_other_words_is_verified_there(draft, editor):
    import_speech(draft.video, editor)
    price = point(draft, "Price")
    pin_best(draft, price, editor)
    words = receipts.words_of(receipts.transcript_for(draft))
    thanks = next(i for i, w in enumerate(words) if w.text == "Thanks")

    pin = pinning.set_pin(summary=draft, part=price, first=thanks, end=thanks + 4, user=editor)

    # Said elsewhere: the verdict points at where it is said, and the stated time still holds.
    assert pin is not None and pin["first"] == thanks
    assert pin["suggested"] is not None and pin["suggested"][0] < thanks


def test_words_outside_the_transcript_are_refused(draft, editor):
    import_speech(draft.video, editor)
    with pytest.raises(ValidationError, match="not in the transcript"):
        pinning.set_pin(summary=draft, part=point(draft, "Price"), first=5, end=10_000, user=editor)


def test_rejecting_a_suggestion_removes_the_pin(draft, editor):
    import_speech(draft.video, editor)
    price = point(draft, "Price")
    pin_best(draft, price, editor)

    assert pinning.set_pin(summary=draft, part=price, first=None, end=None, user=editor) is None
    assert fresh(price).pin is None


def test_a_quotation_cannot_be_left_unpinned(draft, editor):
    import_speech(draft.video, editor)
    with pytest.raises(ValidationError, match="always checked"):
        pinning.set_pin(
            summary=draft, part=chapter(draft), first=None, end=None, user=editor, quote=0
        )


def test_a_published_summary_is_pinned_only_through_its_changes(draft, editor, reviewer):
    import_speech(draft.video, editor)
    pin_and_approve(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    with pytest.raises(ValidationError, match="only through its changes"):
        pin_best(draft, point(draft, "Price"), reviewer)


def test_an_editor_approves_a_paraphrase_and_nothing_else(draft, editor):
    import_speech(draft.video, editor)
    speed, price = point(draft, "Speed"), point(draft, "Price")
    assert pin_best(draft, speed, editor)["status"] == "paraphrase"
    pin_best(draft, price, editor)

    approved = pinning.approve_pin(summary=draft, part=speed, user=editor)

    assert approved["approved"]["by"] == "eve" and fresh(speed).pin == approved
    with pytest.raises(ValidationError, match="Only a paraphrase"):
        pinning.approve_pin(summary=draft, part=fresh(price), user=editor)


def test_approving_a_paraphrased_quotation_lets_the_summary_be_published(draft, editor):
    import_speech(draft.video, editor)
    edit_chapter_body(draft, f"{OPENING} They said: “{PARAPHRASED_QUOTE}”.", editor)
    pin_and_approve(draft, editor, quotes=False)
    with pytest.raises(ValidationError) as refused:
        receipts.check_publishable(draft)
    [message] = refused.value.messages
    assert message.startswith("The quotation") and "no editor approved it" in message

    pinning.approve_pin(summary=draft, part=chapter(draft), user=editor, quote=0)

    receipts.check_publishable(draft)  # no error


def test_a_user_who_may_not_change_summaries_may_not_pin(draft, editor):
    import_speech(draft.video, editor)
    viewer = UserFactory(is_staff=True)
    with pytest.raises(PermissionDenied):
        pin_best(draft, point(draft, "Price"), viewer)
    with pytest.raises(PermissionDenied):
        pinning.approve_pin(summary=draft, part=point(draft, "Speed"), user=viewer)


def test_an_editor_may_not_override_a_pin(draft, editor):
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=CONTRADICTED_POINT, time=6)
    pin_best(draft, point(draft, "Price"), editor)

    with pytest.raises(PermissionDenied):
        pinning.override_pin(
            summary=draft, part=point(draft, "Price"), note="Trust me.", user=editor
        )
    assert fresh(point(draft, "Price")).pin["override"] is None


def test_a_reviewer_overrides_a_refused_pin_with_a_note_shown_in_history(draft, editor, reviewer):
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=CONTRADICTED_POINT, time=6)
    price = point(draft, "Price")
    assert pin_best(draft, price, editor)["status"] == "contradicted"
    pin_and_approve(draft, editor)  # all but the contradicted point go through
    with pytest.raises(ValidationError) as refused:
        pinning.override_pin(summary=draft, part=price, note="  ", user=reviewer)
    assert "note" in refused.value.message_dict

    pin = pinning.override_pin(
        summary=draft, part=price, note="Measured again on their blog.", user=reviewer
    )

    assert pin["override"]["by"] == "rita"
    assert pin["override"]["note"] == "Measured again on their blog."
    revision = Version.objects.get_for_object(draft)[0].revision
    assert revision.user == reviewer
    assert revision.get_comment() == (
        "Overrode the refused pin (Measured again on their blog.) of “Price”"
    )
    receipts.check_publishable(draft)  # no error


def test_only_a_refused_pin_is_overridden(draft, editor, reviewer):
    import_speech(draft.video, editor)
    price = point(draft, "Price")
    pin_best(draft, price, editor)
    with pytest.raises(ValidationError, match="keeps the summary from being published"):
        pinning.override_pin(summary=draft, part=fresh(price), note="Why not.", user=reviewer)


def test_pins_are_verified_again_when_the_statement_changes(draft, editor):
    import_speech(draft.video, editor)
    pin_best(draft, point(draft, "Price"), editor)

    edit_point(draft, "Price", editor, body="Pricing starts at $50 a month.")

    pin = point(draft, "Price").pin
    assert pin["status"] == "contradicted" and "50" in pin["reason"]


def test_pins_are_verified_again_when_the_stated_time_changes(draft, editor):
    import_speech(draft.video, editor)
    pin_best(draft, point(draft, "Price"), editor)

    edit_point(draft, "Price", editor, time=45)

    pin = point(draft, "Price").pin
    assert pin["status"] == "mis_timed" and pin["suggested_time"] == pytest.approx(22, abs=1)


def test_an_approval_does_not_survive_a_change_of_statement(draft, editor):
    import_speech(draft.video, editor)
    pin_best(draft, point(draft, "Speed"), editor)
    pinning.approve_pin(summary=draft, part=point(draft, "Speed"), user=editor)

    edit_point(draft, "Speed", editor, body="The new model runs 2.5 times faster than before.")

    pin = point(draft, "Speed").pin
    assert pin["status"] == "paraphrase" and pin["approved"] is None


def test_an_override_does_not_survive_a_change_of_statement(draft, editor, reviewer):
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=CONTRADICTED_POINT, time=6)
    pin_best(draft, point(draft, "Price"), editor)
    pinning.override_pin(summary=draft, part=point(draft, "Price"), note="Ok.", user=reviewer)

    edit_point(draft, "Price", editor, body="The new model is 5 times faster.")

    assert point(draft, "Price").pin["override"] is None
    with pytest.raises(ValidationError, match="contradicted"):
        receipts.check_publishable(draft)


def test_an_override_does_not_survive_a_new_transcript(draft, editor, reviewer):
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=CONTRADICTED_POINT, time=6)
    pin_best(draft, point(draft, "Price"), editor)
    pinning.override_pin(summary=draft, part=point(draft, "Price"), note="Ok.", user=reviewer)

    # The same talk with one more line: the point is still contradicted, on other ground.
    import_speech(draft.video, editor, [*SPEECH, (60, 62, "Bye now.")], "longer.vtt")

    pin = point(draft, "Price").pin
    assert pin["status"] == "contradicted" and pin["override"] is None
    assert pin["transcript"] == Transcript.objects.get().digest


def test_a_new_transcript_changes_the_verdicts(draft, editor):
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=CONTRADICTED_POINT, time=6)
    pin_best(draft, point(draft, "Price"), editor)

    import_speech(draft.video, editor, SPEECH_CORRECTED, "corrected.vtt")

    assert point(draft, "Price").pin["status"] == "verbatim"  # now it says four times


def test_quotation_pins_follow_the_quotations_of_a_chapter(draft, editor):
    import_speech(draft.video, editor)
    pins = chapter(draft).quote_pins
    assert [(p["quote"], p["status"]) for p in pins] == [(VERBATIM_QUOTE, "verbatim")]

    added = f"{OPENING} “{VERBATIM_QUOTE},” they say, and “{CONTRADICTED_QUOTE}”."
    edit_chapter_body(draft, added, editor)
    pins = chapter(draft).quote_pins
    assert [(p["quote"], p["status"]) for p in pins] == [
        (VERBATIM_QUOTE, "verbatim"),
        (CONTRADICTED_QUOTE, "contradicted"),
    ]

    edit_chapter_body(draft, f"{OPENING} And “{CONTRADICTED_QUOTE}”.", editor)  # one removed
    assert [p["quote"] for p in chapter(draft).quote_pins] == [CONTRADICTED_QUOTE]

    edit_chapter_body(draft, f"{OPENING} And “{PARAPHRASED_QUOTE}”.", editor)  # edited
    assert [(p["quote"], p["status"]) for p in chapter(draft).quote_pins] == [
        (PARAPHRASED_QUOTE, "paraphrase")
    ]


def test_an_approved_quotation_edited_is_not_approved_any_more(draft, editor):
    import_speech(draft.video, editor)
    edit_chapter_body(draft, f"{OPENING} They said: “{PARAPHRASED_QUOTE}”.", editor)
    pinning.approve_pin(summary=draft, part=chapter(draft), user=editor, quote=0)

    edited = "Open weights will matter more than benchmarks do"
    edit_chapter_body(draft, f"{OPENING} They said: “{edited}”.", editor)

    pin = chapter(draft).quote_pins[0]
    assert (pin["quote"], pin["status"], pin["approved"]) == (edited, "paraphrase", None)
    with pytest.raises(ValidationError, match="no editor approved it"):
        receipts.check_publishable(draft)


def test_a_quotation_pin_moved_by_an_editor_stays_where_it_was_put(draft, editor):
    import_speech(draft.video, editor)
    quote_pin = chapter(draft).quote_pins[0]
    first, end = quote_pin["first"], quote_pin["end"]

    pin = pinning.set_pin(
        summary=draft, part=chapter(draft), first=first - 2, end=end, user=editor, quote=0
    )
    edit_point(draft, "Price", editor, body="Pricing starts at $20 a month!")  # another save

    kept = chapter(draft).quote_pins[0]
    assert pin is not None and kept["first"] == first - 2 and kept["quote"] == VERBATIM_QUOTE


# --- The gate -------------------------------------------------------------------------------


def test_a_summary_with_a_contradicted_point_is_not_published(draft, editor, reviewer):
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=CONTRADICTED_POINT, time=6)
    pin_best(draft, point(draft, "Price"), editor)
    pin_and_approve(draft, editor)  # all but the contradicted point go through

    with pytest.raises(ValidationError) as refused:
        workflow.publish_summary(summary=draft, user=reviewer)

    message = (
        "Key point “Price” (at 0:06) is contradicted by the transcript: "
        "the transcript says 2.5 times, the statement says 4 times."
    )
    # Named under the list the part is in, and as a value a face links to the statement.
    assert refused.value.message_dict == {"key_points": [message]}
    [problem] = refused.value.problems
    price = point(draft, "Price")
    assert problem.as_json() == {
        "kind": "key_point",
        "id": price.pk,
        "quote": None,
        "message": message,
    }
    draft.refresh_from_db()
    assert draft.status == Summary.Status.DRAFT
    assert Transcript.objects.get().state == Transcript.State.DRAFT


def test_a_point_that_is_nowhere_in_the_transcript_is_not_published(draft, editor, reviewer):
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=UNSAID_POINT, time=22)
    words = receipts.words_of(receipts.transcript_for(draft))
    pinning.set_pin(
        summary=draft, part=point(draft, "Price"), first=0, end=len(words) // 2, user=editor
    )

    with pytest.raises(ValidationError) as refused:
        workflow.publish_summary(summary=draft, user=reviewer)

    assert refused.value.messages[0].startswith(
        "Key point “Price” (at 0:22) is not in the transcript: nothing in the transcript says"
    )


def test_a_contradicted_quotation_is_named_with_its_chapter_and_time(draft, editor, reviewer):
    import_speech(draft.video, editor)
    edit_chapter_body(draft, quoting(CONTRADICTED_QUOTE), editor)
    pin_and_approve(draft, editor)  # all but the quotation go through

    with pytest.raises(ValidationError) as refused:
        workflow.publish_summary(summary=draft, user=reviewer)

    said_at = clock(chapter(draft).quote_pins[0]["start"])
    assert refused.value.messages[0] == (
        f"The quotation “{CONTRADICTED_QUOTE}” in chapter “Release” (at {said_at}) is "
        "contradicted by the transcript: the transcript says 2.5 times, the statement says "
        "3 times."
    )


def test_a_quotation_nobody_said_is_named_with_its_chapters_start(draft, editor, reviewer):
    import_speech(draft.video, editor)
    chapters = list(Chapter.objects.filter(summary=draft))
    chapters[0].body = f"{OPENING} They said: “{UNSAID_POINT}”"
    chapters[0].start_time = 1
    save.save_summary(summary=draft, parts={Chapter: chapters}, user=editor)
    pin_and_approve(draft, editor)  # all but the quotation go through

    with pytest.raises(ValidationError) as refused:
        workflow.publish_summary(summary=draft, user=reviewer)

    assert refused.value.messages[0].startswith(
        f"The quotation “{UNSAID_POINT}” in chapter “Release” (at 0:01) is not in the "
        "transcript: nothing in the transcript says this"
    )


def test_takeaways_and_caveats_are_pinned_like_key_points(draft, editor):
    from summaries.models import Caveat, Takeaway

    import_speech(draft.video, editor)
    takeaway = Takeaway.objects.create(summary=draft, position=1, text=VERBATIM_POINT, time=22)
    caveat = Caveat.objects.create(summary=draft, position=1, text=CONTRADICTED_POINT)

    assert pin_best(draft, takeaway, editor)["status"] == "verbatim"
    assert pin_best(draft, caveat, editor)["status"] == "contradicted"
    with pytest.raises(ValidationError, match="Caveat “The new model is 4 times faster.”"):
        receipts.check_publishable(draft)


def test_an_approval_holds_when_the_statement_is_verified_again_with_the_same_verdict(
    draft, editor
):
    """A point moved by a second (within the tolerance) is verified again: still the same
    paraphrase of the same words, so the editor's approval stands."""
    import_speech(draft.video, editor)
    said_at = round(pin_best(draft, point(draft, "Speed"), editor)["start"])
    approved = pinning.approve_pin(summary=draft, part=point(draft, "Speed"), user=editor)
    moved = said_at if said_at != 6 else 5  # stated at 6 s so far

    edit_point(draft, "Speed", editor, time=moved)

    pin = point(draft, "Speed").pin
    assert pin["stated_time"] == moved and pin["status"] == "paraphrase"
    assert pin["approved"] == approved["approved"]


def test_an_unapproved_paraphrase_of_a_point_keeps_it_from_publication_until_approved(
    draft, editor, reviewer
):
    import_speech(draft.video, editor)
    assert pin_best(draft, point(draft, "Speed"), editor)["status"] == "paraphrase"
    pin_and_approve(draft, editor, except_for=[point(draft, "Speed")])
    with pytest.raises(ValidationError) as refused:
        workflow.publish_summary(summary=draft, user=reviewer)
    [message] = refused.value.messages
    assert message.startswith("Key point “Speed”") and "no editor approved it" in message

    pinning.approve_pin(summary=draft, part=point(draft, "Speed"), user=editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    draft.refresh_from_db()
    assert draft.is_live()


def test_an_overridden_pin_lets_the_summary_be_published(draft, editor, reviewer):
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=CONTRADICTED_POINT, time=6)
    pin_best(draft, point(draft, "Price"), editor)
    edit_chapter_body(draft, quoting(CONTRADICTED_QUOTE), editor)
    pin_and_approve(draft, editor)  # the contradicted point and quotation are left
    pinning.override_pin(summary=draft, part=point(draft, "Price"), note="Ok.", user=reviewer)
    pinning.override_pin(summary=draft, part=chapter(draft), note="Sic.", user=reviewer, quote=0)

    workflow.publish_summary(summary=draft, user=reviewer)

    draft.refresh_from_db()
    assert draft.is_live() and Transcript.objects.get().state == Transcript.State.LIVE


def test_the_gate_judges_pins_on_the_transcript_as_it_is_now(draft, editor, reviewer):
    """A pin written behind the services (a shell, a bug, an old row) with a stale
    override is verified again at publication: its override does not hold."""
    import_speech(draft.video, editor)
    edit_point(draft, "Price", editor, body=CONTRADICTED_POINT, time=6)
    pin = pin_best(draft, point(draft, "Price"), editor)
    stale = {**pin, "transcript": "0" * 16, "status": "verbatim", "override": {"by": "x"}}
    KeyPoint.objects.filter(pk=point(draft, "Price").pk).update(pin=stale)

    with pytest.raises(ValidationError, match="contradicted"):
        workflow.publish_summary(summary=draft, user=reviewer)


def test_publishing_without_a_transcript_is_not_held_up(editor, reviewer):
    summary = SummaryFactory()
    KeyPointFactory(summary=summary, body=UNSAID_POINT)
    workflow.publish_summary(summary=summary, user=reviewer)
    summary.refresh_from_db()
    assert summary.is_live()


# --- Working copies ------------------------------------------------------------------------


def test_pins_travel_with_the_parts_into_the_changes_and_back(draft, editor, reviewer):
    import_speech(draft.video, editor)
    pin_best(draft, point(draft, "Price"), editor)
    pin_best(draft, point(draft, "Speed"), editor)
    pinning.approve_pin(summary=draft, part=point(draft, "Speed"), user=editor)
    pin_and_approve(draft, editor)  # the chapter
    workflow.publish_summary(summary=draft, user=reviewer)
    live_ids = {p.title: p.pk for p in KeyPoint.objects.filter(summary=draft)}
    live_pins = {p.title: p.pin for p in KeyPoint.objects.filter(summary=draft)}

    copy, _ = copies.start_working_copy(summary=draft, user=editor)
    assert {p.title: p.pin for p in KeyPoint.objects.filter(summary=copy)} == live_pins
    assert chapter(copy).quote_pins == chapter(draft).quote_pins
    edit_point(copy, "Price", editor, body="Pricing starts at $20 a month!")
    edit_point(copy, "Speed", editor, title="Faster")  # the statement is the same
    copy_pins = {p.title: p.pin for p in KeyPoint.objects.filter(summary=copy)}
    assert copy_pins["Price"]["statement"] != live_pins["Price"]["statement"]

    workflow.publish_summary(summary=draft, user=reviewer)

    after = {p.title: p for p in KeyPoint.objects.filter(summary=draft)}
    assert {after["Price"].pk, after["Faster"].pk} == set(live_ids.values())  # ids kept
    assert after["Price"].pin == copy_pins["Price"]
    assert after["Faster"].pin == live_pins["Speed"]  # the approval holds
    assert after["Faster"].pin["approved"]["by"] == "eve"


def test_pins_of_the_changes_are_what_the_live_summary_gets(draft, editor, reviewer):
    import_speech(draft.video, editor)
    pin_and_approve(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    copy, _ = copies.start_working_copy(summary=draft, user=editor)
    live_pin = point(draft, "Price").pin
    # The point pinned again in the changes, with the word before it.
    price = point(copy, "Price")
    pin = pinning.set_pin(
        summary=copy, part=price, first=price.pin["first"] - 1, end=price.pin["end"], user=editor
    )
    assert pin is not None and pin["status"] == "verbatim" and pin != live_pin
    assert point(draft, "Price").pin == live_pin  # readers see no change yet

    workflow.publish_summary(summary=draft, user=reviewer)

    assert point(draft, "Price").pin == pin


def test_what_the_changes_change_is_shown_with_pins_changed(draft, editor, reviewer):
    from summaries.editing.revisions import compare_live_and_changes

    import_speech(draft.video, editor)
    pin_and_approve(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    import_speech(draft.video, editor, SPEECH_CORRECTED, "corrected.vtt")
    copy = copies.working_copy_of(draft)
    pin_best(copy, point(copy, "Price"), editor)
    edit_point(copy, "Price", editor, body="Pricing starts at $30 a month.")

    comparison = compare_live_and_changes(draft)

    assert comparison is not None and comparison.changed
    edited = [p for kind in comparison.parts for p in kind.edited]
    assert [c.name for p in edited for c in p.changed_fields] == ["body"]


# --- Schedules (service level; the admin and API roads are in test_receipts_roads.py) -------


def _scheduled_changes(draft, editor, reviewer):
    import_speech(draft.video, editor)
    pin_and_approve(draft, editor)
    workflow.publish_summary(summary=draft, user=reviewer)
    import_speech(draft.video, editor, SPEECH_CORRECTED, "corrected.vtt")
    correct_the_changes(draft, editor)
    workflow.submit_for_review(summary=draft, user=editor)
    at = timezone.now() + datetime.timedelta(hours=1)
    workflow.publish_summary(summary=draft, user=reviewer, at=at)
    return copies.working_copy_of(draft), at


def test_scheduled_changes_publish_their_transcript_when_they_go_live(draft, editor, reviewer):
    _copy, at = _scheduled_changes(draft, editor, reviewer)
    assert Transcript.objects.get(state=Transcript.State.LIVE).original_name == "talk.vtt"

    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == [draft.pk]

    assert list(Transcript.objects.values_list("state", "original_name")) == [
        (Transcript.State.LIVE, "corrected.vtt")
    ]


def test_an_import_after_scheduling_takes_the_changes_off_the_schedule(draft, editor, reviewer):
    copy, at = _scheduled_changes(draft, editor, reviewer)

    import_speech(draft.video, editor, [*SPEECH, (60, 61, "Unreviewed.")], "late.vtt")

    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == []
    copy.refresh_from_db()
    assert copy.publish_at is None and copy.scheduled_version is None
    assert Transcript.objects.get(state=Transcript.State.LIVE).original_name == "talk.vtt"
    assert Transcript.objects.get(state=Transcript.State.DRAFT).original_name == "late.vtt"


def test_a_pin_changed_after_scheduling_takes_the_changes_off_the_schedule(draft, editor, reviewer):
    copy, at = _scheduled_changes(draft, editor, reviewer)

    pin_best(copy, chapter(copy), editor)  # a pin that does not block, yet a change

    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == []
    copy.refresh_from_db()
    assert copy.publish_at is None


def test_scheduled_changes_the_transcript_no_longer_supports_do_not_go_live(
    draft, editor, reviewer
):
    """Written behind the services after scheduling (the schedule stands): the gate runs
    again at go-live and takes the changes off the schedule."""
    copy, at = _scheduled_changes(draft, editor, reviewer)
    segments = [{"start": 0.0, "end": 5.0, "text": "Something else entirely."}]
    Transcript.objects.filter(state=Transcript.State.DRAFT).update(
        segments=segments, digest="f" * 64
    )

    with time_machine.travel(at + datetime.timedelta(seconds=1)):
        assert copies.publish_due_changes() == []

    copy.refresh_from_db()
    assert copy.publish_at is None and copy.scheduled_version is None
    assert Transcript.objects.get(state=Transcript.State.LIVE).original_name == "talk.vtt"
    assert chapter(copy).quote_pins[0]["status"] == "not_found"


# --- Cost -----------------------------------------------------------------------------------


def _save_cost(summary, user, monkeypatch, *, pins: bool) -> int:
    """Queries of a save that changes the 30-second text and one key point's title."""
    if not pins:
        monkeypatch.setattr(receipts, "refresh_pins", lambda **kwargs: 0)
    points = list(KeyPoint.objects.filter(summary=summary).order_by("position"))
    points[0].title = f"{points[0].title}!"
    summary.tldr += "!"
    with CaptureQueriesContext(connection) as queries:
        save.save_summary(summary=summary, parts={KeyPoint: points}, user=user)
    monkeypatch.undo()
    return len(queries)


def test_saving_a_summary_without_a_transcript_costs_one_query_more(draft, editor, monkeypatch):
    _save_cost(draft, editor, monkeypatch, pins=True)  # content types and the like, once
    without = _save_cost(draft, editor, monkeypatch, pins=False)
    assert _save_cost(draft, editor, monkeypatch, pins=True) == without + 1


def test_saving_changes_without_a_transcript_costs_one_query_more(draft, editor, monkeypatch):
    draft.status, draft.publish_at = Summary.Status.PUBLISHED, timezone.now()
    draft.save()
    copy, _ = copies.start_working_copy(summary=draft, user=editor)
    copy = Summary.objects.get(pk=copy.pk)  # as a request reads it: its summary not loaded
    _save_cost(copy, editor, monkeypatch, pins=True)
    without = _save_cost(copy, editor, monkeypatch, pins=False)
    assert _save_cost(copy, editor, monkeypatch, pins=True) == without + 1


def test_saving_a_pinned_summary_reads_the_parts_once_more(draft, editor, monkeypatch):
    """With a transcript: the transcript (its digest only), the four kinds of parts, and a
    write for each part whose pin changed; the words are read only when a statement or
    the transcript changed, once per transcript."""
    import_speech(draft.video, editor)
    pin_best(draft, point(draft, "Price"), editor)
    _save_cost(draft, editor, monkeypatch, pins=True)
    without = _save_cost(draft, editor, monkeypatch, pins=False)
    assert _save_cost(draft, editor, monkeypatch, pins=True) == without + 5


def test_versions_of_a_transcript_with_as_many_words_are_told_apart():
    """The text layer keeps the index of the last few transcripts; two versions of one
    talk with the same number of words, differing in the middle, are not mixed up."""
    from summaries.text import pins
    from summaries.text.transcripts import Segment, timed_words

    def words(lines):
        return timed_words([Segment(float(a), float(b), text) for a, b, text in lines])

    said = words(SPEECH)
    three = [(a, b, t.replace("two and a half", "three and a half")) for a, b, t in SPEECH]
    corrected = words(three)
    assert len(said) == len(corrected) and said[0] == corrected[0] and said[-1] == corrected[-1]
    statement = "The new model is 2.5 times faster."
    span = pins.suggest(statement, said, kind="point", limit=1)[0]

    for _ in range(2):  # each index found again among the cached ones
        assert pins.verify(statement, said, span, kind="point").status == "verbatim"
        assert pins.verify(statement, corrected, span, kind="point").status == "contradicted"
