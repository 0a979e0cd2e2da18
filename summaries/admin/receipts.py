"""Receipts in the admin: a video's transcript imported from its page or its summary's, the
summary page's panel of pins, a page per statement to pin it, and the Transcript pages.

Who may do what, what a pin says and what publishing refuses are decided in
`summaries.editing` (`pinning`, `receipts`, `gate`); this module finds what a request names,
calls those services with the signed-in user and shows the result. The summary page shows
only the stored pins: the transcript's words are read on a statement's own page, when an
editor asks for suggestions, and for the chapters suggested to a summary without any
(`chapter_suggestions`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied, RequestDataTooBig, ValidationError
from django.db import transaction
from django.http import Http404, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.middleware.csrf import CsrfViewMiddleware
from django.template.defaultfilters import filesizeformat
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator
from django.views.decorators.csrf import csrf_exempt
from reversion.admin import VersionAdmin

from summaries.editing import copies, gate, pinning, receipts
from summaries.editing.items import PartModel
from summaries.models import (
    LANGUAGE_CHOICES,
    Caveat,
    Chapter,
    KeyPoint,
    Summary,
    Takeaway,
    Transcript,
    Video,
)
from summaries.text.durations import format_duration
from summaries.text.transcripts import TranscriptTooLong

from . import chapter_suggestions
from .base import ReadOnlyAdmin

if TYPE_CHECKING:
    from django.contrib.admin import AdminSite

IMPORT_TEMPLATE = "admin/summaries/transcript/import.html"
PIN_TEMPLATE = "admin/summaries/transcript/pin.html"

# How a URL names each kind of part ("keypoint-12"), and what a page calls it.
PART_MODELS: dict[str, PartModel] = {
    "keypoint": KeyPoint,
    "takeaway": Takeaway,
    "chapter": Chapter,
    "caveat": Caveat,
}
PART_NAMES = {KeyPoint: "Key point", Takeaway: "Takeaway", Chapter: "Chapter", Caveat: "Caveat"}
# What the panel reads of each part: never a chapter's body.
PANEL_FIELDS = {
    KeyPoint: ["summary_id", "position", "title", "pin"],
    Takeaway: ["summary_id", "position", "text", "pin"],
    Chapter: ["summary_id", "position", "title", "pin", "quote_pins"],
    Caveat: ["summary_id", "position", "text", "pin"],
}
# Each status in words and a symbol, so that it is never told by colour alone.
STATUSES = {
    "verbatim": ("✓", "Verbatim"),
    "paraphrase": ("≈", "Paraphrase"),
    "not_found": ("✗", "Not found"),
    "contradicted": ("≠", "Contradicted"),
    "mis_timed": ("⏱", "Mis-timed"),
}
NOT_PINNED = ("○", "Not pinned")
# Words of a pin the summary page shows (a statement's own page shows all it keeps).
PANEL_WORDS = 16
# Words shown around a suggestion on a statement's page.
CONTEXT_WORDS = 8
# Pin actions the panel and a statement's page post, and the service each one calls.
ACTIONS = ("accept", "move", "reject", "approve", "override", "approve_quote", "override_quote")
# A span a new transcript proposed for a pin (receipts.verified): taken, or the pin kept.
PROPOSAL_ACTIONS = ("take_proposal", "keep_pin", "take_proposal_quote", "keep_pin_quote")
NOTE_MAX_LENGTH = 2000


# --- Importing a transcript ---------------------------------------------------------------


class TranscriptImportForm(forms.Form):
    """A transcript file, or its text pasted, and the language it is in."""

    transcript_file = forms.FileField(
        required=False,
        label="Transcript file",
        help_text="WebVTT, SubRip, YouTube json3 or Whisper JSON.",
    )
    pasted = forms.CharField(
        required=False,
        strip=False,
        label="Or paste its text",
        widget=forms.Textarea(attrs={"rows": 12, "cols": 100, "class": "transcript-paste"}),
    )
    language = forms.ChoiceField(choices=LANGUAGE_CHOICES)
    # Set when the pasted text was larger than a request may carry (the form is unbound).
    paste_too_large = ""

    def clean_transcript_file(self):
        upload = self.cleaned_data.get("transcript_file")
        limit = settings.TRANSCRIPT_MAX_BYTES
        if upload is not None and upload.size > limit:
            raise ValidationError(too_large_message(upload.size), code="too_large")
        return upload

    def clean(self):
        cleaned = super().clean() or {}
        has_file = cleaned.get("transcript_file") is not None
        has_text = bool((cleaned.get("pasted") or "").strip())
        if not self.errors and has_file == has_text:
            raise ValidationError(
                "Choose a transcript file or paste its text (one of the two).", code="one_of"
            )
        return cleaned

    def source(self) -> tuple[bytes, str, str]:
        """(the bytes, the file's name, the field they came from)."""
        upload = self.cleaned_data.get("transcript_file")
        if upload is not None:
            return upload.read(), upload.name or "", "transcript_file"
        return self.cleaned_data["pasted"].encode("utf-8"), "", "pasted"

    def is_too_large(self) -> bool:
        """Whether the file is over TRANSCRIPT_MAX_BYTES (a 413); a file of too many words
        (TRANSCRIPT_MAX_WORDS) is an error of the form like any other."""
        return any(
            error.code == "too_large" and not isinstance(error.__cause__, TranscriptTooLong)
            for errors in self.errors.as_data().values()
            for error in errors
        )


def too_large_message(size: int | None = None) -> str:
    cap = filesizeformat(settings.TRANSCRIPT_MAX_BYTES)
    over = f"This one is {filesizeformat(size)}. " if size else ""
    return f"A transcript may be at most {cap}. {over}Import a smaller file, or split it."


def _request_too_large(request) -> bool:
    """Whether the request is larger than any import could be (refused before reading it)."""
    length = request.META.get("CONTENT_LENGTH") or "0"
    ceiling = settings.TRANSCRIPT_MAX_BYTES + (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0)
    return length.isdigit() and int(length) > ceiling


def _csrf_refusal(request):
    """The CSRF middleware's answer to the request (None: it passes).

    The import views are exempt from the middleware, which reads the body first and would
    answer pasted text over DATA_UPLOAD_MAX_MEMORY_SIZE with a bare 400; they read the body
    themselves (413 when it is too large) and then check the token exactly as it would."""
    middleware = CsrfViewMiddleware(lambda request: HttpResponse())
    return middleware.process_view(request, _no_view, (), {})


def _no_view(request) -> HttpResponse:
    return HttpResponse()  # the middleware reads only whether a view is exempt


def import_view(model_admin, request, *, video: Video, back_url: str, summary=None):
    """The "Import transcript" page of a video (or of its summary): a file or pasted text
    becomes the video's transcript waiting for review (`pinning.import_transcript`).

    A file over TRANSCRIPT_MAX_BYTES is answered with 413 and the cap; an error of the
    file is a form error naming its line; the pasted text stays in the form."""
    if not gate.may(request.user, gate.CHANGE):
        raise PermissionDenied
    initial = {"language": video.language}
    if request.method != "POST":
        return _import_page(model_admin, request, video, back_url, summary, initial=initial)
    if _request_too_large(request):
        form = TranscriptImportForm(initial=initial)
        return _import_page(model_admin, request, video, back_url, summary, form, 413)
    try:
        form = TranscriptImportForm(request.POST, request.FILES, initial=initial)
    except RequestDataTooBig:
        form = TranscriptImportForm(initial=initial)
        form.paste_too_large = filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        return _import_page(model_admin, request, video, back_url, summary, form, 413)
    refused = _csrf_refusal(request)
    if refused is not None:
        return refused
    if form.is_valid():
        data, filename, source = form.source()
        try:
            imported = pinning.import_transcript(
                video=video,
                data=data,
                user=request.user,
                filename=filename,
                language=form.cleaned_data["language"],
            )
        except ValidationError as error:
            form.add_error(source, error)
        else:
            _say_imported(request, imported)
            return HttpResponseRedirect(back_url)
    status = 413 if form.is_too_large() else 200
    return _import_page(model_admin, request, video, back_url, summary, form, status)


def _import_page(model_admin, request, video, back_url, summary, form=None, status=200, **kw):
    form = form if form is not None else TranscriptImportForm(initial=kw.get("initial"))
    existing = Transcript.objects.filter(video=video).without_text().order_by("language", "state")
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Import a transcript of “{video}”",
        "subtitle": None,
        "opts": model_admin.model._meta,
        "original": summary or video,
        "video": video,
        "form": form,
        "back_url": back_url,
        "transcripts": existing,
        "max_size": filesizeformat(settings.TRANSCRIPT_MAX_BYTES),
        "paste_max_size": filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE),
        "paste_max_bytes": settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        "paste_too_large": form.paste_too_large,
        "too_large": status == 413,
    }
    request.current_app = model_admin.admin_site.name
    return TemplateResponse(request, IMPORT_TEMPLATE, context, status=status)


def _say_imported(request, imported: pinning.Imported) -> None:
    transcript = imported.transcript
    length = format_duration(int(transcript.ends_at))
    messages.success(
        request,
        f"Imported the transcript ({transcript.get_language_display()}, "
        f"{transcript.word_count:,} words, {length}). It waits for review and reaches "
        "readers when the summary is published.",
    )
    for warning in imported.warnings:
        messages.warning(request, f"Check the transcript: {warning}")


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


# --- The summary page: panel, statement pages, actions ---------------------------------------


class AdminMixin:
    """What the mixins below use of the ModelAdmin they are mixed into."""

    if TYPE_CHECKING:
        admin_site: AdminSite
        model: type[Any]

        def has_view_or_change_permission(self, request: Any, obj: Any = None) -> bool: ...


class ReceiptsMixin(AdminMixin):
    """For SummaryAdmin: importing a transcript, the Receipts panel and pin actions."""

    def get_urls(self):
        opts = self.model._meta
        name = f"{opts.app_label}_{opts.model_name}"
        view = self.admin_site.admin_view
        own = [
            path(
                "<path:object_id>/transcript/",
                # Checked by import_view itself, once the body is read (_csrf_refusal).
                view(csrf_exempt(self.transcript_import_view)),
                name=f"{name}_transcript_import",
            ),
            path("<path:object_id>/receipts/", view(self.pin_action_view), name=f"{name}_pin"),
            path(
                "<path:object_id>/receipts/<str:part>/",
                view(self.pin_part_view),
                name=f"{name}_pin_part",
            ),
            path(
                "<path:object_id>/chapter-suggestions/",
                view(self.chapter_suggestions_view),
                name=f"{name}_chapter_suggestions",
            ),
        ]
        # Before the admin's own URLs, whose last pattern takes any "<id>/…" path.
        return [*own, *cast(Any, super()).get_urls()]

    def _receipts_summary(self, request, object_id) -> Summary:
        object_id = unquote(object_id)
        summary = (
            Summary.objects.originals().filter(pk=object_id).first()
            if str(object_id).isdigit()
            else None
        )
        if summary is None:
            raise Http404("No such summary.")
        if not self.has_view_or_change_permission(request, summary):
            raise PermissionDenied
        return summary

    def _receipts_page(self, summary: Summary, anchor: str = "receipts") -> str:
        url = reverse(f"{self.admin_site.name}:summaries_summary_change", args=[quote(summary.pk)])
        return f"{url}#{anchor}"

    def _receipts_url(self, view: str, summary: Summary, *args) -> str:
        name = f"{self.admin_site.name}:summaries_summary_{view}"
        return reverse(name, args=[quote(summary.pk), *args])

    # Importing.

    def transcript_import_view(self, request, object_id):
        summary = self._receipts_summary(request, object_id)
        if summary.video is None:
            raise Http404("This summary has no video.")
        return import_view(
            self,
            request,
            video=summary.video,
            back_url=self._receipts_page(summary),
            summary=summary,
        )

    # The panel on the change page.

    def receipts_context(self, request, obj) -> dict:
        """What the summary page's Receipts panel shows: the transcript its pins are
        verified against (without its text) and each statement's stored pin."""
        if obj is None or not obj.pk:
            return {}
        original = obj.working_copy_of if obj.is_working_copy else obj
        rows = panel_rows(obj)
        statements = [*rows, *(quote for row in rows for quote in row.quotes)]
        return {
            "receipts_rows": rows,
            "receipts_pinned": any(row.pin for row in statements),
            "receipts_transcript": receipts.transcript_for(obj),
            "receipts_to_check": sum(row.needs_attention for row in statements),
            "receipts_pin_url": self._receipts_url("pin", original),
            "receipts_import_url": self._receipts_url("transcript_import", original),
            "receipts_summary_id": original.pk,
            "receipts_may_change": gate.may(request.user, gate.CHANGE),
            "receipts_may_override": gate.may_publish(request.user),
            "receipts_chapter_suggestions_url": self._receipts_url("chapter_suggestions", original),
            **chapter_suggestions.panel_context(obj, request.user),
        }

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        context.update(self.receipts_context(request, obj))
        return cast(Any, super()).render_change_form(request, context, add, change, form_url, obj)

    # Suggested chapters, for a summary without any.

    def chapter_suggestions_view(self, request, object_id):
        summary = self._receipts_summary(request, object_id)
        return chapter_suggestions.chapter_suggestions_view(
            self, request, summary=summary, back_url=self._receipts_page(summary)
        )

    # A statement's own page: suggestions, moving the pin by words.

    def pin_part_view(self, request, object_id, part):
        original = self._receipts_summary(request, object_id)
        summary = shown_summary(original)
        found = _part(summary, part)
        transcript = receipts.transcript_for(summary)
        words = receipts.words_of(transcript) if transcript is not None else []
        spans = pinning.suggestions(summary=summary, part=found) if words else []
        row = _row(found)
        statement = receipts.statement_of(found)
        context = {
            **self.admin_site.each_context(request),
            "title": f"Pin {row.name}: {row.label}",
            "subtitle": None,
            "opts": self.model._meta,
            "original": original,
            "row": row,
            "statement": statement,
            "stated_time": format_duration(int(statement.stated_time))
            if statement.stated_time is not None
            else "",
            "transcript": transcript,
            "word_count": len(words),
            "suggestions": [_suggestion(span, words, found.pin) for span in spans],
            "pin_url": self._receipts_url("pin", original),
            "back_url": self._receipts_page(original, row.anchor),
            "import_url": self._receipts_url("transcript_import", original),
            "may_change": gate.may(request.user, gate.CHANGE),
            "may_override": gate.may_publish(request.user),
        }
        request.current_app = self.admin_site.name
        return TemplateResponse(request, PIN_TEMPLATE, context)

    # Actions.

    def pin_action_view(self, request, object_id):
        """Accept, move or reject a pin, approve a paraphrase or override a refused pin
        (the Receipts panel's and a statement page's buttons); back to where it was asked."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        original = self._receipts_summary(request, object_id)
        form = PinActionForm(panel_button(request.POST) if "do" in request.POST else request.POST)
        if not form.is_valid():
            messages.error(request, _form_errors(form))
            return HttpResponseRedirect(self._receipts_back(original, form.data))
        try:
            with transaction.atomic():
                part = _act(original, form.cleaned_data, request.user)
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
            back = self._receipts_back(original, form.cleaned_data)
            return HttpResponseRedirect(back)
        messages.success(request, _done_message(form.cleaned_data["action"], part))
        if form.cleaned_data["back"] == "part" and form.cleaned_data["action"] == "reject":
            return HttpResponseRedirect(self._receipts_url("pin_part", original, part_key(part)))
        return HttpResponseRedirect(self._receipts_page(original, _row(part).anchor))

    def _receipts_back(self, original: Summary, data) -> str:
        """The page a button was pressed on: the statement's own, or the summary's."""
        part = str(data.get("part") or "")
        if data.get("back") == "part" and PinActionForm.PART.match(part):
            return self._receipts_url("pin_part", original, part)
        return self._receipts_page(original)


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


# --- The video page -------------------------------------------------------------------------


class VideoTranscriptsMixin(AdminMixin):
    """For VideoAdmin: the video's transcripts, and its "Import transcript" page."""

    def get_urls(self):
        opts = self.model._meta
        own = [
            path(
                "<path:object_id>/transcript/",
                # Checked by import_view itself, once the body is read (_csrf_refusal).
                self.admin_site.admin_view(csrf_exempt(self.transcript_import_view)),
                name=f"{opts.app_label}_{opts.model_name}_transcript_import",
            )
        ]
        return [*own, *cast(Any, super()).get_urls()]

    def transcript_import_view(self, request, object_id):
        object_id = unquote(object_id)
        video = Video.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        if video is None:
            raise Http404("No such video.")
        if not self.has_view_or_change_permission(request, video):
            raise PermissionDenied
        back = reverse(f"{self.admin_site.name}:summaries_video_change", args=[quote(video.pk)])
        return import_view(self, request, video=video, back_url=back)

    @admin.display(description="Transcripts")
    def transcripts(self, video):
        if not video or not video.pk:
            return "Available after the first save."
        found = Transcript.objects.filter(video=video).without_text()
        items = format_html_join(
            "",
            '<li><a href="{}">{}, {}</a>: {} words, {}</li>',
            (
                (
                    reverse("admin:summaries_transcript_change", args=[t.pk]),
                    t.get_language_display(),
                    t.get_state_display().lower(),
                    f"{t.word_count:,}",
                    format_duration(int(t.ends_at)),
                )
                for t in found.order_by("language", "state")
            ),
        )
        url = reverse(
            f"{self.admin_site.name}:summaries_video_transcript_import", args=[quote(video.pk)]
        )
        listed = format_html("<ul>{}</ul>", items) if items else "None yet. "
        return format_html('{}<a class="button" href="{}">Import transcript</a>', listed, url)


# --- The transcripts' own pages -----------------------------------------------------------


@admin.register(Transcript)
class TranscriptAdmin(ReadOnlyAdmin, VersionAdmin):
    """Transcripts as imported: read only (a new one is imported from its video's page or
    its summary's), with the history of each import."""

    list_display = ["video", "language", "state", "format", "words", "length", "updated_at"]
    list_filter = ["state", "language", "format"]
    search_fields = ["video__title"]
    list_select_related = ["video"]
    fields = [
        "video_link",
        "language",
        "state",
        "format",
        "encoding",
        "original_name",
        "words",
        "length",
        "warnings_list",
        "updated_by",
        "updated_at",
    ]
    readonly_fields = fields
    actions = None

    def get_queryset(self, request):
        # The list and the page show what a transcript is, never its text or file.
        return super().get_queryset(request).without_text().select_related("video", "updated_by")

    def has_view_permission(self, request, obj=None):
        # Whoever reads summaries reads the transcripts their statements are pinned to.
        return request.user.is_active and request.user.has_perm("summaries.view_summary")

    @admin.display(description="Video")
    def video_link(self, transcript):
        url = reverse("admin:summaries_video_change", args=[transcript.video_id])
        return format_html('<a href="{}">{}</a>', url, transcript.video)

    @admin.display(description="Words", ordering="word_count")
    def words(self, transcript):
        return f"{transcript.word_count:,}"

    @admin.display(description="Length", ordering="ends_at")
    def length(self, transcript):
        return format_duration(int(transcript.ends_at))

    @admin.display(description="Warnings")
    def warnings_list(self, transcript):
        if not transcript.warnings:
            return "None."
        return format_html(
            "<ul>{}</ul>",
            format_html_join("", "<li>{}</li>", ((warning,) for warning in transcript.warnings)),
        )


# --- What publishing refuses ---------------------------------------------------------------


def publication_problems_html(summary: Summary):
    """The publish gate's refusals from the pins (`receipts.publication_problems`) for the
    summary page's "Things to check", each linked to its statement's row in the Receipts
    panel ("" when there are none)."""
    problems = receipts.publication_problems(summary)
    if not problems:
        return ""
    return format_html(
        '<p class="publication-problems-headline"><strong>Publishing is refused</strong> '
        "until each of these statements is verbatim, a paraphrase an editor approved, or "
        'overridden by a reviewer with a note (see <a href="#receipts">Receipts</a>):</p>'
        '<ul class="editor-warnings publication-problems">{}</ul>',
        _problem_items(problems, ""),
    )


def refusal_html(refused: receipts.PublicationRefused, page_url: str, title: str = ""):
    """The message a refused publication is answered with: each statement that keeps it
    from being published, linked to its row on the summary's page (`page_url`, the change
    page; "" on that page itself). `title` names the summary on a page listing many."""
    who = format_html("{}: ", title) if title else ""
    return format_html(
        '{}Publishing is refused. <span class="publication-refused">The transcript does not '
        "support these statements, or they are not pinned to it yet:</span>"
        '<ul class="publication-problems">{}</ul>',
        who,
        _problem_items(refused.problems, page_url),
    )


def _problem_items(problems: list[receipts.Problem], page_url: str):
    return format_html_join(
        "",
        '<li><a href="{}#{}">{}</a></li>',
        ((page_url, problem_anchor(problem), problem.message) for problem in problems),
    )
