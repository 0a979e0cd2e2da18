"""The demo summary's receipts: its video's transcript, and its statements pinned to it.

Loaded as an editor and a reviewer would do it, through the services: the transcript is
imported with `pinning.import_transcript` (parsed as an upload is), each key point,
takeaway, caveat and chapter start is pinned at the best suggestion (`pinning.suggestions`,
`pinning.set_pin`; a pin an earlier load left elsewhere is set there again), a paraphrase
is approved by the demo's editor (`pinning.approve_pin`; the account `make run` prints a
login for, made here when it is missing: nothing is approved by "system"), quotations of
the chapter bodies are pinned where they are said (`receipts.refresh_pins`), and the
publish gate is asked before the summary is
published again with its transcript, which goes live with it
(`receipts.publish_transcripts`). The gate refuses a statement left unpinned, so every
one is pinned: a load that cannot pin one fails rather than publish it unverified.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from summaries.editing import pinning, publishable, receipts
from summaries.models import Summary, Transcript
from summaries.text.pins import Status

from .transcripts import FILENAME

# The demo's editor, who approves its paraphrases (summaries/management/commands/
# create_demo_editor.py makes the same account, with its login).
EDITOR = "editor"
EDITOR_GROUPS = ("Editors", "Reviewers")


def receipts_hold(summary: Summary, data: bytes, counts: Any) -> bool:
    """Whether the video's live transcript is `data` and every statement of `summary` is
    pinned to it and verified. Pins are verified again first, as a save would (a newer
    pins engine may judge them otherwise); those that changed are counted."""
    live = _only_live(summary, data)
    if live is None:
        return False
    changed = receipts.refresh_pins(summary=summary)
    if changed:
        counts.updated["Pin"] += changed
    return all(_verified(summary, part, live.digest) for part in _pinned_parts(summary))


def start_pinning(summary: Summary, data: bytes, counts: Any) -> None:
    """Make `summary` a draft for the rest of the load (pins are set on a draft: a
    published summary is changed only through a working copy) and import `data` as its
    video's transcript unless the live one is already `data`."""
    Summary.objects.filter(pk=summary.pk).update(status=Summary.Status.DRAFT)
    summary.status = Summary.Status.DRAFT
    if _only_live(summary, data) is not None:
        return
    video = summary.summarised_video
    existed = Transcript.objects.live().filter(video=video, language=video.language).exists()
    pinning.import_transcript(video=video, data=data, user=None, filename=FILENAME)
    (counts.updated if existed else counts.created)["Transcript"] += 1


def pin_and_publish(summary: Summary, counts: Any) -> None:
    """Pin every statement of draft `summary` that is not pinned and verified, approve the
    paraphrases, and publish it again with its transcript. Called inside the load's
    revision of the summary, so the pins are recorded with it."""
    transcript = receipts.transcript_for(summary)
    if transcript is None:
        raise RuntimeError("start_pinning imports the transcript before pins are set")
    editor = demo_editor()
    for part in _pinned_parts(summary):
        if _verified(summary, part, transcript.digest):
            continue
        spans = pinning.suggestions(summary=summary, part=part, limit=1)
        if not spans:
            continue  # left unpinned: the publish gate below refuses the load
        had_pin = part.pin is not None
        pin = pinning.set_pin(
            summary=summary,
            part=part,
            first=spans[0].first_word,
            end=spans[0].end_word,
            user=None,
        )
        if pin is not None and pin["status"] == Status.PARAPHRASE.value:
            pinning.approve_pin(summary=summary, part=part, user=editor)
        (counts.updated if had_pin else counts.created)["Pin"] += 1
    publishable.check_publishable(summary)
    Summary.objects.filter(pk=summary.pk).update(status=Summary.Status.PUBLISHED)
    summary.status = Summary.Status.PUBLISHED
    receipts.publish_transcripts(video=summary.summarised_video)


def demo_editor() -> Any:
    """The demo's editor account (`create_demo_editor` gives it its password), in the
    Editors and Reviewers groups: made without a password when it is missing."""
    user, _ = get_user_model().objects.get_or_create(
        username=EDITOR, defaults={"is_staff": True, "is_active": True}
    )
    user.groups.add(*(Group.objects.get_or_create(name=name)[0] for name in EDITOR_GROUPS))
    # Fresh: permissions are cached on the instance, and the groups just changed.
    return get_user_model().objects.get(pk=user.pk)


def _only_live(summary: Summary, data: bytes) -> Transcript | None:
    """The video's live transcript if it is `data` and none waits for review."""
    video = summary.summarised_video
    found = list(Transcript.objects.filter(video=video, language=video.language))
    if len(found) == 1 and found[0].state == Transcript.State.LIVE:
        if bytes(found[0].original) == data:
            return found[0]
    return None


def _pinned_parts(summary: Summary) -> list[Any]:
    return list(receipts.parts_of(summary))


def _verified(summary: Summary, part: Any, digest: str) -> bool:
    """Whether `part` is pinned where it is said in the transcript of `digest`: verbatim,
    or a paraphrase an editor approved, on the span suggested for it now (a pin set by an
    older pins engine may be wider than the words that say it); its quotations verbatim."""
    quotes = getattr(part, "quote_pins", [])
    return (
        _holds(part.pin, digest, approvable=True)
        and _at_suggestion(summary, part)
        and all(_holds(pin, digest, approvable=False) for pin in quotes)
    )


def _at_suggestion(summary: Summary, part: Any) -> bool:
    """Whether `part`'s pin is on the span suggested for it, or nothing is suggested."""
    spans = pinning.suggestions(summary=summary, part=part, limit=1)
    if not spans:
        return True
    return (part.pin["first"], part.pin["end"]) == (spans[0].first_word, spans[0].end_word)


def _holds(pin: dict[str, Any] | None, digest: str, *, approvable: bool) -> bool:
    if pin is None or pin.get("transcript") != digest or pin.get("suggested"):
        return False
    if pin["status"] == Status.VERBATIM.value:
        return True
    return approvable and pin["status"] == Status.PARAPHRASE.value and receipts.is_approved(pin)
