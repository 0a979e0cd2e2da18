"""Suggested chapters in the admin: the Receipts panel of a summary without chapters lists
where the transcript changes subject, each with its time, an editable title and a box to
keep it; "Add these chapters" posts them to `chapter_suggestions_view`, which calls
`editing.chapter_suggestions.accept_chapter_suggestions` with the signed-in user.

What is suggested, who may add chapters and where they are written (a published summary's
unpublished changes) is decided by the editing layer; this module reads the form, shows its
errors beside the fields they are about (on a page of its own, also without JavaScript) and
goes back to the summary's page once the chapters are added.
"""

from __future__ import annotations

import re
from itertools import zip_longest
from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse

from summaries.editing import chapter_suggestions as suggesting
from summaries.editing import gate
from summaries.models import Summary

from .forms import DurationField

PAGE_TEMPLATE = "admin/summaries/summary/chapter_suggestions.html"
# Not "chapters": the change page's chapter rows use that prefix, and ids must not clash.
PREFIX = "suggested"
# "chapters[2].title": a field of the chapters the service was given, by their place.
_SERVICE_FIELD = re.compile(r"^chapters\[(\d+)\]\.(start|title)$")


class SuggestedChapterForm(forms.Form):
    """One suggested chapter: whether to keep it, when it starts, its title."""

    keep = forms.BooleanField(required=False, initial=True, label="Keep")
    start = DurationField(allow_zero=True, label="Starts at (m:ss)", help_text="")
    title = forms.CharField(max_length=suggesting.TITLE_MAX, required=False, label="Title")

    def clean(self):
        cleaned = super().clean() or {}
        if not cleaned.get("keep"):
            # A chapter left out is not read: what its fields hold does not matter.
            for name in ("start", "title"):
                self.errors.pop(name, None)
            return cleaned
        if cleaned.get("keep") and not " ".join((cleaned.get("title") or "").split()):
            self.add_error("title", "Give the chapter a title, or leave it out.")
        return cleaned


SuggestedChapterFormSet = forms.formset_factory(
    SuggestedChapterForm,
    extra=0,
    max_num=suggesting.MAX_CHOSEN,
    validate_max=True,
    absolute_max=suggesting.MAX_CHOSEN,
)


def unbound_formset(suggestions: list[suggesting.SuggestedChapter]):
    return SuggestedChapterFormSet(
        prefix=PREFIX,
        initial=[{"keep": True, "start": s.start, "title": s.title} for s in suggestions],
    )


def rows(formset, suggestions: list[suggesting.SuggestedChapter]) -> list[dict[str, Any]]:
    """Each form with its number and the words said where it was suggested (for a form
    posted back, the suggestion at its place, if there still is one)."""
    return [
        {"form": form, "number": number, "said": suggestion.said if suggestion else ""}
        for number, (form, suggestion) in enumerate(
            zip_longest(formset.forms, suggestions[: len(formset.forms)]), start=1
        )
        if form is not None
    ]


def panel_context(summary: Summary, user: Any) -> dict[str, Any]:
    """What the Receipts panel shows of suggested chapters: a form when the editor may add
    them and there are some."""
    if not gate.may(user, gate.CHANGE):
        return {"chapter_suggestions": []}
    suggestions = suggesting.chapter_suggestions(summary)
    formset = unbound_formset(suggestions)
    return {
        "chapter_suggestions": suggestions,
        "chapter_suggestions_formset": formset,
        "chapter_suggestions_rows": rows(formset, suggestions),
    }


def chapter_suggestions_view(model_admin, request, *, summary: Summary, back_url: str):
    """GET: the suggested chapters as a form of its own. POST: add the chapters kept, then
    back to the summary's page with a message; a form with errors is shown again with
    each error beside its field, and nothing is written."""
    if not gate.may(request.user, gate.CHANGE):
        raise PermissionDenied
    suggestions = suggesting.chapter_suggestions(summary)
    if request.method != "POST":
        return _page(model_admin, request, summary, unbound_formset(suggestions), suggestions, [])
    formset = SuggestedChapterFormSet(request.POST, prefix=PREFIX)
    if not formset.is_valid():
        errors = [str(error) for error in formset.non_form_errors()]
        return _page(model_admin, request, summary, formset, suggestions, errors)
    kept = [(index, form.cleaned_data) for index, form in enumerate(formset.forms)]
    kept = [(index, data) for index, data in kept if data.get("keep")]
    try:
        accepted = suggesting.accept_chapter_suggestions(
            summary=summary,
            user=request.user,
            chosen=[(data["start"], data["title"]) for _, data in kept],
        )
    except ValidationError as error:
        if suggesting.has_chapters(summary):  # added meanwhile, by this form sent twice too
            messages.warning(request, " ".join(error.messages))
            return HttpResponseRedirect(back_url)
        errors = _show_errors(formset, [index for index, _ in kept], error)
        return _page(model_admin, request, summary, formset, suggestions, errors)
    messages.success(request, _added_message(accepted))
    return HttpResponseRedirect(back_url)


def _show_errors(formset, indexes: list[int], error: ValidationError) -> list[str]:
    """Put the service's errors on the fields they name; return those about the whole
    list."""
    general: list[str] = []
    for name, messages_ in error.message_dict.items():
        found = _SERVICE_FIELD.match(name)
        if found is None or int(found[1]) >= len(indexes):
            general.extend(messages_)
            continue
        form = formset.forms[indexes[int(found[1])]]
        for message in messages_:
            form.add_error(found[2], message)
    return general


def _added_message(accepted: suggesting.Accepted) -> str:
    count = len(accepted.chapters)
    what = f"Added {count} chapter{'s' if count != 1 else ''} from the transcript"
    if accepted.summary.is_working_copy:
        return (
            f"{what} to the unpublished changes: readers see them once a reviewer "
            "publishes the changes. Edit their text below."
        )
    return f"{what}. Each starts with the words said until the next one: edit them below."


def _page(model_admin, request, summary, formset, suggestions, errors):
    original = summary.working_copy_of if summary.is_working_copy else summary
    context = {
        **model_admin.admin_site.each_context(request),
        "title": f"Suggested chapters for “{original}”",
        "subtitle": None,
        "opts": model_admin.model._meta,
        "original": original,
        "formset": formset,
        "rows": rows(formset, suggestions),
        "errors": errors,
        "has_chapters": suggesting.has_chapters(original),
        "back_url": model_admin._receipts_page(original),
        "post_url": model_admin._receipts_url("chapter_suggestions", original),
    }
    request.current_app = model_admin.admin_site.name
    return TemplateResponse(request, PAGE_TEMPLATE, context)
