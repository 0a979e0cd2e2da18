"""Pins as the summary page shows them (PinRow, the panel's rows) and the actions on them:
the panel's buttons, the pin form, the suggestions on a statement's page."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.http import Http404
from django.utils.text import Truncator

from summaries.editing import copies, pinning, receipts
from summaries.models import Chapter, Summary
from summaries.text.durations import format_duration

from .shared import (
    ACTIONS,
    CONTEXT_WORDS,
    NOT_PINNED,
    NOTE_MAX_LENGTH,
    PANEL_FIELDS,
    PANEL_WORDS,
    PART_MODELS,
    PART_NAMES,
    PROPOSAL_ACTIONS,
    STATUSES,
)

# --- Pins as the summary page shows them ----------------------------------------------------


@dataclass(frozen=True)
class PinRow:
    """One statement in the Receipts panel: a part of the summary, or a quotation in a
    chapter's body (`quote`), with its pin as stored."""

    key: str  # how URLs name the part: "keypoint-12"
    name: str  # "Key point 2"
    label: str  # what the part says, shortened
    pin: dict[str, Any] | None
    quote: str = ""
    speaker: str = ""
    index: int = 0  # a quotation's place among its chapter's
    quotes: tuple[PinRow, ...] = field(default=())

    @property
    def anchor(self) -> str:
        return f"pin-{self.key}" + (f"-quote-{self.index + 1}" if self.quote else "")

    @property
    def status(self) -> str:
        return self.pin["status"] if self.pin else "unpinned"

    @property
    def symbol(self) -> str:
        return STATUSES.get(self.status, NOT_PINNED)[0]

    @property
    def status_text(self) -> str:
        return STATUSES.get(self.status, NOT_PINNED)[1]

    @property
    def said(self) -> str:
        """The words the pin quotes from the transcript ("" when unknown)."""
        if not self.pin or self.status == "not_found":
            return ""
        return str(self.pin.get("said") or "")

    @property
    def said_briefly(self) -> str:
        """The words, shortened for the summary page (its statement's page has them all)."""
        return Truncator(self.said).words(PANEL_WORDS, truncate=" …")

    @property
    def words(self) -> str:
        if not self.pin or self.status == "not_found":
            return ""
        return f"words {int(self.pin['first']) + 1}–{int(self.pin['end'])}"

    @property
    def when(self) -> str:
        if not self.pin or self.status == "not_found" or self.pin.get("start") is None:
            return ""
        start, stop = format_duration(int(self.pin["start"])), self.pin.get("stop")
        end = format_duration(int(stop)) if stop is not None else start
        return start if end == start else f"{start}–{end}"

    @property
    def reason(self) -> str:
        return str(self.pin.get("reason") or "") if self.pin else ""

    @property
    def approved(self) -> dict[str, Any] | None:
        """The approval of a named editor (one by nobody, or "system", is none)."""
        return self.pin["approved"] if self.pin and receipts.is_approved(self.pin) else None

    @property
    def override(self) -> dict[str, Any] | None:
        """The override of a named reviewer, with its note."""
        return self.pin["override"] if self.pin and receipts.is_overridden(self.pin) else None

    @property
    def proposal(self) -> dict[str, Any] | None:
        """Where a new transcript says the pin's words now, if not where it points."""
        return self.pin.get("proposal") if self.pin else None

    @property
    def proposal_when(self) -> str:
        proposal = self.proposal
        if not proposal or proposal.get("start") is None:
            return ""
        return format_duration(int(proposal["start"]))

    @property
    def proposal_status_text(self) -> str:
        status = self.proposal.get("status", "") if self.proposal else ""
        return STATUSES.get(status, NOT_PINNED)[1]

    @property
    def may_be_approved(self) -> bool:
        return self.status == "paraphrase" and not self.approved and not self.override

    @property
    def may_be_overridden(self) -> bool:
        """Whether it keeps the summary from being published, so that a reviewer's
        override would let it through."""
        pin = self.pin
        return pin is not None and receipts.blocks(pin)

    @property
    def needs_attention(self) -> bool:
        unsettled = self.proposal is not None
        return unsettled or self.may_be_overridden or self.status in ("unpinned", "mis_timed")


def part_key(part) -> str:
    return f"{type(part).__name__.lower()}-{part.pk}"


def problem_anchor(problem: receipts.Problem) -> str:
    """The id of the Receipts panel's row of the statement a problem names (`PinRow.anchor`)."""
    quote = f"-quote-{problem.quote + 1}" if problem.quote is not None else ""
    return f"pin-{part_key(problem.part)}{quote}"


def _row(part) -> PinRow:
    name = f"{PART_NAMES[type(part)]} {part.position}"
    label = Truncator(" ".join(str(part).split())).chars(90)
    quotes: tuple[PinRow, ...] = ()
    if isinstance(part, Chapter):
        quotes = tuple(
            PinRow(
                key=part_key(part),
                name=f"Quotation in chapter {part.position}",
                label=Truncator(pin.get("quote", "")).chars(140),
                pin=pin,
                quote=str(pin.get("quote", "")),
                speaker=str(pin.get("speaker") or ""),
                index=index,
            )
            for index, pin in enumerate(part.quote_pins)
        )
    return PinRow(key=part_key(part), name=name, label=label, pin=part.pin, quotes=quotes)


def panel_rows(summary: Summary) -> list[PinRow]:
    """Every statement of `summary` with its stored pin, in the page's order of parts."""
    rows: list[PinRow] = []
    for model in receipts.PINNED_MODELS:
        parts = model.objects.filter(summary=summary).order_by("position")
        rows.extend(_row(part) for part in parts.only(*PANEL_FIELDS[model]))
    return rows


def shown_summary(summary: Summary) -> Summary:
    """What the summary's page shows and edits: its unpublished changes if it has any."""
    if copies.needs_working_copy(summary):
        return copies.working_copy_of(summary) or summary
    return summary


# The Receipts panel is one form: the button pressed says what it does to which statement
# ("override pin-chapter-5-quote-1", the row's anchor); each row's note and quotation have
# names of their own ("note-pin-chapter-5-quote-1").
PANEL_BUTTON = re.compile(
    r"^(?P<action>[a-z_]{1,20}) pin-(?P<part>[a-z]{1,10}-\d{1,18})(?:-quote-(?P<quote>\d{1,5}))?$"
)


def panel_button(post) -> dict[str, Any]:
    """What the pressed button of the Receipts panel asks, as PinActionForm reads it."""
    found = PANEL_BUTTON.match(str(post.get("do", "")))
    if found is None:
        return {}
    anchor = post["do"].split(" ", 1)[1]
    quote = found["quote"]
    return {
        "action": found["action"],
        "part": found["part"],
        "quote": int(quote) - 1 if quote else None,
        "quote_text": post.get(f"quote-{anchor}", ""),
        "note": post.get(f"note-{anchor}", ""),
        "back": "page",
    }


class PinActionForm(forms.Form):
    PART = re.compile(r"^(keypoint|takeaway|chapter|caveat)-\d{1,18}$")

    part = forms.RegexField(regex=PART)
    action = forms.ChoiceField(
        choices=[(action, action) for action in (*ACTIONS, *PROPOSAL_ACTIONS)]
    )
    # A suggestion's words as the transcript numbers them (end exclusive).
    first = forms.IntegerField(required=False, min_value=0)
    end = forms.IntegerField(required=False, min_value=1)
    # Words typed by an editor, counted from 1, both included.
    from_word = forms.IntegerField(required=False, min_value=1, label="From word")
    to_word = forms.IntegerField(required=False, min_value=1, label="To word")
    note = forms.CharField(required=False, max_length=NOTE_MAX_LENGTH)
    # A quotation of a chapter: its place among the chapter's, and its words as the page
    # showed them (the page may be older than the chapter's last save).
    quote = forms.IntegerField(required=False, min_value=0, max_value=10_000)
    quote_text = forms.CharField(required=False, strip=False, max_length=5000)
    back = forms.ChoiceField(choices=[("page", "page"), ("part", "part")], required=False)

    def clean(self):
        cleaned = super().clean() or {}
        cleaned["back"] = cleaned.get("back") or "page"
        if cleaned.get("action") in ("accept", "move"):
            cleaned["first"], cleaned["end"] = self._words(cleaned)
        return cleaned

    def _words(self, cleaned) -> tuple[int, int]:
        if cleaned.get("from_word") is not None or cleaned.get("to_word") is not None:
            first, last = cleaned.get("from_word"), cleaned.get("to_word")
            if first is None or last is None or last < first:
                raise ValidationError("Give the first and the last word of the pin, in order.")
            return first - 1, last
        if cleaned.get("first") is None or cleaned.get("end") is None:
            raise ValidationError("Choose the words to pin to.")
        return cleaned["first"], cleaned["end"]


def _form_errors(form: forms.Form) -> str:
    return " ".join(str(message) for errors in form.errors.values() for message in errors)


def _part(summary: Summary, key: str):
    """The part of `summary` a URL names ("keypoint-12"), or 404."""
    kind, _, pk = key.partition("-")
    model = PART_MODELS.get(kind)
    if model is None or not pk.isdigit() or len(pk) > 18:
        raise Http404("No such part.")
    found = model.objects.filter(summary=summary, pk=int(pk)).first()
    if found is None:
        raise Http404("No such part of this summary.")
    return found


def _act(original: Summary, data: dict, user):
    """Call the service the action names on the part, in the summary's unpublished changes
    when it is published (made now if it has none). Returns the part as it is now."""
    target, ids, _made = copies.edit_target(summary=original, user=user)
    kind, _, pk = data["part"].partition("-")
    model = PART_MODELS[kind]
    mapped = ids.get((model, int(pk)), int(pk))
    part = model.objects.filter(summary=target, pk=mapped).first()
    if part is None:
        raise ValidationError("That statement is no longer in this summary; reload the page.")
    action = data["action"]
    quote = _quote(part, data) if action.endswith("_quote") else None
    if action in ("accept", "move"):
        pinning.set_pin(summary=target, part=part, first=data["first"], end=data["end"], user=user)
    elif action == "reject":
        pinning.set_pin(summary=target, part=part, first=None, end=None, user=user)
    elif action in ("approve", "approve_quote"):
        pinning.approve_pin(summary=target, part=part, user=user, quote=quote)
    elif action in PROPOSAL_ACTIONS:
        _act_on_proposal(target, part, action, user, quote)
    else:
        pinning.override_pin(summary=target, part=part, note=data["note"], user=user, quote=quote)
    part.refresh_from_db()
    return part


def _act_on_proposal(target: Summary, part, action: str, user, quote: int | None) -> None:
    if action.startswith("take_proposal"):
        pinning.accept_proposal(summary=target, part=part, user=user, quote=quote)
    else:
        pinning.reject_proposal(summary=target, part=part, user=user, quote=quote)


def _quote(part, data: dict) -> int:
    """The quotation a button names, if it is still the one the page showed."""
    index = data.get("quote")
    pins = getattr(part, "quote_pins", None) or []
    if index is None or index >= len(pins) or pins[index].get("quote") != data["quote_text"]:
        raise ValidationError(
            "The chapter's quotations changed since the page was opened; reload it and try again."
        )
    return index


def _done_message(action: str, part) -> str:
    row = _row(part)
    what = f"{row.name} (“{row.label}”)"
    if action in ("accept", "move"):
        return f"Pinned {what}: {row.status_text.lower()}."
    return {
        "reject": f"Removed the pin of {what}.",
        "approve": f"Approved the paraphrase of {what}.",
        "override": f"Overrode the pin of {what}; the note is in its history.",
        "approve_quote": f"Approved the paraphrased quotation in {row.name}.",
        "take_proposal": f"Pinned {what} where the new transcript says it.",
        "keep_pin": f"Kept the pin of {what} where it was.",
        "take_proposal_quote": f"Pinned the quotation in {row.name} where the transcript says it.",
        "keep_pin_quote": f"Kept the pin of the quotation in {row.name} where it was.",
        "override_quote": (
            f"Overrode the quotation's pin in {row.name}; the note is in its history."
        ),
    }[action]


@dataclass(frozen=True)
class Suggestion:
    first: int
    end: int
    when: str
    said: str
    before: str
    after: str
    score: float
    current: bool


def _suggestion(span, words, pin) -> Suggestion:
    def text(a: int, b: int) -> str:
        return " ".join(word.text for word in words[max(a, 0) : max(b, 0)])

    start, stop = format_duration(int(span.start)), format_duration(int(span.end))
    return Suggestion(
        first=span.first_word,
        end=span.end_word,
        when=start if start == stop else f"{start}–{stop}",
        said=text(span.first_word, span.end_word),
        before=text(span.first_word - CONTEXT_WORDS, span.first_word),
        after=text(span.end_word, span.end_word + CONTEXT_WORDS),
        score=round(span.score),
        current=bool(pin)
        and (int(pin["first"]), int(pin["end"])) == (span.first_word, span.end_word),
    )
