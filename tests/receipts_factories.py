"""Transcripts and pinned summaries for the Receipts tests (tests/test_receipts*.py) and
bench/run_receipts_save.py.

`SPEECH` is what a short video says, line by line; the statements below are written against
it so that each gives a known verdict. `long_speech` makes a transcript of any length from
a seed (the same seed, the same words).
"""

from __future__ import annotations

import random

from summaries.editing import pinning, receipts
from summaries.models import Summary, Transcript, Video, segments_digest
from summaries.text.durations import format_duration

# (start, end, text) in seconds: what the video says.
SPEECH = [
    (0, 6, "Welcome back to the channel, today we look at the new model release."),
    (6, 14, "The new model is two and a half times faster than the old one on our tests."),
    (14, 22, "It does not replace a human reviewer, and we are clear about that."),
    (22, 30, "Pricing starts at twenty dollars a month for the basic plan."),
    (30, 40, "Sam said the context window grows to one million tokens next year."),
    (40, 50, "We think open weights will matter more than benchmarks in the long run."),
    (50, 60, "Thanks for watching and see you in the next video."),
]
# The same talk, where the numbers came out differently.
SPEECH_CORRECTED = [
    (start, end, text.replace("two and a half", "four").replace("twenty", "thirty"))
    for start, end, text in SPEECH
]

# Statements about SPEECH, by the verdict they get where they are best found.
VERBATIM_POINT = "Pricing starts at $20 a month."  # said at 22 s
PARAPHRASED_POINT = "The new model runs 2.5 times faster than the previous one."  # at 6 s
CONTRADICTED_POINT = "The new model is 4 times faster."  # at 6 s
UNSAID_POINT = "Bananas are yellow and grow on trees in Ecuador."
VERBATIM_QUOTE = "Open weights will matter more than benchmarks"
PARAPHRASED_QUOTE = "Open weights matter more than benchmarks"
CONTRADICTED_QUOTE = "The new model is three times faster than the old one"
OPENING = "Welcome back to the channel, today we look at the new model release."


def vtt(lines: list[tuple[float, float, str]]) -> bytes:
    """A WebVTT file saying `lines`."""
    out = ["WEBVTT", ""]
    for start, end, text in lines:
        out += [f"{_clock(start)} --> {_clock(end)}", text, ""]
    return "\n".join(out).encode()


def _clock(seconds: float) -> str:
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{int(hours):02d}:{int(minutes):02d}:{secs:06.3f}"


def make_transcript(
    video: Video,
    lines: list[tuple[float, float, str]] = SPEECH,
    state: str = Transcript.State.DRAFT,
    language: str = "",
) -> Transcript:
    """A transcript stored as an import would store it, without parsing a file."""
    segments = [{"start": float(a), "end": float(b), "text": text} for a, b, text in lines]
    return Transcript.objects.create(
        video=video,
        language=language or video.language,
        state=state,
        format="vtt",
        original=vtt(lines),
        segments=segments,
        word_count=sum(len(text.split()) for _, _, text in lines),
        ends_at=max((float(b) for _, b, _ in lines), default=0.0),
        digest=segments_digest(segments),
    )


def pin_best(summary: Summary, part, user=None) -> dict:
    """Pin `part` where the transcript best says it (an editor accepting the first
    suggestion)."""
    spans = pinning.suggestions(summary=summary, part=part, limit=1)
    assert spans, f"nothing suggested for {part}"
    pin = pinning.set_pin(
        summary=summary, part=part, first=spans[0].first_word, end=spans[0].end_word, user=user
    )
    assert pin is not None
    return pin


def pin_and_approve(summary: Summary, editor, *, except_for=(), quotes: bool = True) -> None:
    """Pin every statement of `summary` not pinned yet where the transcript best says it
    (`pinning.pin_all`, an editor accepting every first suggestion), then have `editor`, a
    named editor, approve each paraphrase among its pins and (`quotes`) quotations but
    those of the parts `except_for`. Other verdicts are left as they are, for the gate to
    refuse. Tests that publish a summary whose video has a transcript use it: the gate
    refuses a statement with no pin."""
    pinning.pin_all(summary=summary, user=editor)
    left = {(type(part), part.pk) for part in except_for}
    for part in receipts.parts_of(summary):
        if (type(part), part.pk) in left:
            continue
        if _unapproved_paraphrase(part.pin):
            pinning.approve_pin(summary=summary, part=part, user=editor)
        for index, pin in enumerate(getattr(part, "quote_pins", []) if quotes else []):
            if _unapproved_paraphrase(pin):
                pinning.approve_pin(summary=summary, part=part, user=editor, quote=index)


def accept_proposals(summary: Summary, editor) -> None:
    """Move every pin (and quotation pin) of `summary` to the span a new transcript
    proposed for it, as an editor accepting each proposal in the Receipts panel."""
    for part in receipts.parts_of(summary):
        if part.pin is not None and part.pin.get("proposal"):
            pinning.accept_proposal(summary=summary, part=part, user=editor)
        for index, pin in enumerate(getattr(part, "quote_pins", [])):
            if pin.get("proposal"):
                pinning.accept_proposal(summary=summary, part=part, user=editor, quote=index)


def _unapproved_paraphrase(pin: dict | None) -> bool:
    return pin is not None and pin["status"] == "paraphrase" and not receipts.is_approved(pin)


def fresh(part):
    """The part as stored now."""
    return type(part).objects.get(pk=part.pk)


def statuses(summary: Summary) -> dict[str, str]:
    """{part label: pin status} for every pinned part, quotations as 'quote: text'."""
    found = {}
    for part in receipts.parts_of(summary):
        if part.pin is not None:
            found[receipts.label(part)] = part.pin["status"]
        for pin in getattr(part, "quote_pins", []):
            found[f"quote: {pin['quote']}"] = pin["status"]
    return found


# --- Long transcripts ---------------------------------------------------------------------

_VOCABULARY = (
    "so we trained the model on a mix of code and text and then we looked at how it "
    "behaves when you ask it something it has never seen before which is really the "
    "interesting part because scaling alone does not tell you much about that you need "
    "evaluations that are hard to game and most benchmarks saturate within a year once "
    "people optimise for them the right way to frame it is data quality rather than "
    "quantity smaller models match larger ones when the curriculum is careful and the "
    "tokenizer matters more than anyone expected inference compute keeps growing agents "
    "need memory tools and a sandbox alignment asks whether the objective is the one we "
    "meant interpretability looks inside at features circuits and attention heads"
).split()


def long_speech(words: int, *, seed: int = 7, pace: float = 2.8) -> list[tuple[float, float, str]]:
    """Lines of five to nine words, `words` words in all, at `pace` words a second."""
    rng = random.Random(seed)
    lines, said, now = [], 0, 0.0
    while said < words:
        count = min(rng.randint(5, 9), words - said)
        text = " ".join(rng.choice(_VOCABULARY) for _ in range(count))
        length = round(count / pace, 3)
        lines.append((round(now, 3), round(now + length, 3), text))
        now += length
        said += count
    return lines


def cut_short_talk() -> tuple[bytes, int]:
    """A WebVTT file of a 16:23 talk cut off in the middle of the cue said at 5:15, as an
    upload stopped part-way leaves it, and the talk's length in seconds."""
    length = 16 * 60 + 23
    lines = long_speech(round(length * 2.8))
    whole = vtt(lines)
    cue = next(line for line in lines if line[0] >= 315)
    timing = f"{_clock(cue[0])} --> {_clock(cue[1])}\n".encode()
    at = whole.index(timing) + len(timing)
    return whole[: at + len(cue[2]) // 2], length


def statements_from(lines: list[tuple[float, float, str]], count: int, *, seed: int = 11):
    """`count` (time, text) pairs said in `lines`, spread over the whole talk: statements
    that are found verbatim, for pinning a long summary."""
    rng = random.Random(seed)
    step = max(1, len(lines) // count)
    picked = []
    for index in range(count):
        start, _end, text = lines[min(len(lines) - 1, index * step + rng.randrange(step))]
        picked.append((int(start), text))
    return picked


def clock(seconds: float) -> str:
    return format_duration(int(seconds))


def let_through(summary: Summary, *, editor=None, reviewer=None) -> None:
    """Clear every pin of `summary` that keeps it from being published, as people would:
    `editor` (if given) approves each paraphrase, `reviewer` overrides the rest with a
    note. Tests about what happens once a summary is live use it; the gate itself is
    tested without it."""
    for part in receipts.parts_of(summary):
        if part.pin is not None and receipts.blocks(part.pin):
            _clear(summary, part, None, part.pin, editor, reviewer)
        for index, pin in enumerate(getattr(part, "quote_pins", [])):
            if receipts.blocks(pin):
                _clear(summary, part, index, pin, editor, reviewer)


def _clear(summary, part, quote, pin, editor, reviewer) -> None:
    if editor is not None and pin["status"] == "paraphrase":
        pinning.approve_pin(summary=summary, part=part, user=editor, quote=quote)
    else:
        assert reviewer is not None, f"{part} blocks publishing: {pin['status']}"
        note = "Checked by ear."
        pinning.override_pin(summary=summary, part=part, note=note, user=reviewer, quote=quote)
