"""The summary page's receipts: ReceiptsMixin (the panel, the statement pages, the pin
actions' views) and what publishing refuses, as the page shows it."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.admin.utils import quote, unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.csrf import csrf_exempt

from summaries.editing import gate, pinning, receipts
from summaries.models import Summary
from summaries.text.durations import format_duration

from .. import chapter_suggestions
from .pins import (
    PinActionForm,
    _act,
    _done_message,
    _form_errors,
    _part,
    _row,
    _suggestion,
    panel_button,
    panel_rows,
    part_key,
    problem_anchor,
    shown_summary,
)
from .shared import PIN_TEMPLATE, AdminMixin
from .upload import import_view

# --- The summary page: panel, statement pages, actions ---------------------------------------


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
