"""The summary change page: SummaryAdmin, its read-only fields and how it saves a summary
with all its parts."""

import json
import re

from adminsortable2.admin import SortableAdminBase
from django.contrib import admin, messages
from django.contrib.admin.models import LogEntry
from django.db.models import Count, Q
from django.http import HttpResponseRedirect
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from summaries.checking.record import PROBLEM_STATES, PROBLEM_VERDICTS
from summaries.editing import gate, rules, save
from summaries.models import Caveat, Summary
from summaries.text.remembered import remembering

from ..base import ContentAdmin
from ..copies import WorkingCopyMixin
from ..forms import NEW_TARGET_FIELDS, OrderedInlineFormSet, SummaryForm
from ..history import RevisionHistoryMixin
from ..preview import MarkdownPreviewMixin
from ..receipts import ReceiptsMixin, publication_problems_html
from ..restore import RestoreMixin
from ..review import ReviewMixin
from .actions import SummaryActionsMixin
from .buttons import (
    CHECK_NOW_BUTTON,
    WORKFLOW_BUTTONS,
    WorkflowButtonsMixin,
    _back_with_the_refusal,
)
from .columns import LanguageFilter, SummaryColumnsMixin, _last_editor, _status_label
from .inlines import (
    ACCEPT_KEY_PHRASE_BUTTON,
    CONFIRM_BUTTON,
    EXTRA_ROWS,
    MAX_ROWS_PARAMETER,
    MORE_ROWS,
    MORE_ROWS_BUTTON,
    CaveatInline,
    ChapterInline,
    CitationInline,
    KeyPointInline,
    TakeawayInline,
)


@admin.register(Summary)
class SummaryAdmin(
    SummaryColumnsMixin,
    WorkflowButtonsMixin,
    SummaryActionsMixin,
    ReceiptsMixin,
    ReviewMixin,
    WorkingCopyMixin,
    RestoreMixin,
    RevisionHistoryMixin,
    MarkdownPreviewMixin,
    SortableAdminBase,
    ContentAdmin,
):
    form = SummaryForm
    change_form_template = "admin/summaries/summary/change_form.html"
    inlines = [KeyPointInline, TakeawayInline, ChapterInline, CaveatInline, CitationInline]
    autocomplete_fields = ["video"]
    # Short columns: the list must show state, publish time and failing sources at 1280 px.
    list_display = ["title", "channel", "list_state", "publish_at", "failing_sources", "last_edit"]
    list_filter = ["status", "video__channel", "video__topics", LanguageFilter]
    # Spanning parts and citations may match a summary several times; the admin's
    # changelist keeps each summary once (ModelAdmin.get_search_results: may_have_duplicates).
    search_fields = [
        "video__title",
        "tldr",
        "chapters__title",
        "chapters__body",
        "caveats__text",
        "caveats__claim",
        "citations__link_text",
        "citations__claim",
        "citations__url",
        "video__channel__name",
    ]
    list_select_related = ["video", "video__channel", "updated_by", "created_by"]
    date_hierarchy = "publish_at"
    readonly_fields = ["state", "preview_link", "editor_warnings", "edited", "reviewer"]
    fieldsets = [
        (None, {"fields": ["video", "tldr"]}),
        ("Publishing", {"fields": ["state", "publish_at", "preview_link", "edited", "reviewer"]}),
        ("Warnings", {"fields": ["editor_warnings"]}),
        (None, {"fields": ["expected_lock_version"], "classes": ["hidden"]}),
    ]
    actions = ["publish_now", "schedule", "unpublish", "send_to_review", "assign_to_me"]

    def get_queryset(self, request):
        failing = Q(citations__source__state__in=[str(state) for state in PROBLEM_STATES]) | Q(
            citations__verdict__in=list(PROBLEM_VERDICTS)
        )
        return (
            super()
            .get_queryset(request)
            .with_admin_data()
            .annotate(failing=Count("citations__source", filter=failing, distinct=True))
        )

    def has_delete_permission(self, request, obj=None):
        # Deleting a published summary takes it from readers: a reviewer's decision.
        if obj is not None and obj.status == Summary.Status.PUBLISHED:
            if not gate.may_publish(request.user):
                return False
        return super().has_delete_permission(request, obj)

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if not gate.may_publish(request.user):
            readonly.append("publish_at")
        return readonly

    def get_actions(self, request):
        actions = super().get_actions(request)
        if not gate.may_publish(request.user):
            for name in ("publish_now", "schedule", "unpublish", "assign_to_me"):
                actions.pop(name, None)
        return actions

    @admin.display(description="State", ordering="status")
    def state(self, summary):
        if not summary.pk:
            return "Draft (not saved yet)"
        if summary.is_working_copy:
            # The summary's state says where its changes are (the banner above the form
            # says only that these are they).
            return self.state(summary.working_copy_of)
        if summary.is_scheduled():
            local = timezone.localtime(summary.publish_at)
            state = format_html("<strong>Scheduled</strong> for {}", f"{local:%Y-%m-%d %H:%M %Z}")
        elif summary.is_live():
            local = timezone.localtime(summary.publish_at)
            state = format_html("<strong>Live</strong> since {}", f"{local:%Y-%m-%d %H:%M %Z}")
        else:
            return _status_label(summary)
        copy = getattr(summary, "working_copy", None)
        if copy is None:
            return state
        return format_html("{} · Unpublished changes ({})", state, _status_label(copy).lower())

    @admin.display(description="Preview")
    def preview_link(self, summary):
        if not summary.pk:
            return "Available after the first save."
        slug = summary.summarised_video.slug  # a working copy's is its summary's video
        url = reverse("summaries:summary-preview", kwargs={"slug": slug})
        return format_html('<a href="{}" target="_blank">Open the reader page preview</a>', url)

    @admin.display(description="Last edit")
    def edited(self, summary):
        if not summary.pk:
            return "—"
        when = f"{timezone.localtime(summary.updated_at):%Y-%m-%d %H:%M %Z}"
        who = _last_editor(summary)
        return f"{who}, {when}" if who else when

    @admin.display(description="Things to check")
    def editor_warnings(self, summary):
        if not summary.pk:
            return "—"
        warnings = rules.explained_warnings(summary=summary)
        refused = publication_problems_html(summary)  # the publish gate's, from the pins
        if not warnings and not refused:
            return format_html('<p id="things-to-check">{}</p>', "No warnings.")
        if not warnings:
            return format_html('<div id="things-to-check">{}</div>', refused)
        # Warnings saying the same (36 sources whose host could not be looked up) are one
        # item naming every link, their technical reasons behind one disclosure.
        grouped = {}
        for warning in warnings:
            grouped.setdefault(warning.message, []).append(warning)
        items = format_html_join(
            "",
            "<li><strong>{}</strong>: {}{}</li>",
            (
                (
                    ", ".join(warning.where for warning in same),
                    message,
                    _technical_reasons([w.detail for w in same if w.detail]),
                )
                for message, same in grouped.items()
            ),
        )
        return format_html(
            '<div id="things-to-check">{}<p>{}.</p><ul class="editor-warnings">{}</ul></div>',
            refused,
            rules.warnings_headline(warnings),
            items,
        )

    # Saving.

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        obj.updated_by = request.user
        # Saved with its parts in save_related, through editing.save_summary.

    def save_related(self, request, form, formsets, change):
        """Save the summary and every part on the page in one go, as the API does."""
        parts, key_phrases = {}, {}
        for formset in formsets:
            if isinstance(formset, OrderedInlineFormSet):
                parts[formset.model] = formset.parts()
            else:  # the citations: only their key phrases, once the text is saved
                formset.save(commit=False)  # records what changed, for the change message
                key_phrases = {
                    f.instance.pk: f.cleaned_data["key_phrase"]
                    for f in formset.forms
                    if f.instance.pk and "key_phrase" in f.changed_data
                }
        self._attach_caveats_to_new_parts(request, formsets, parts)
        changes = self.construct_change_message(request, form, formsets, not change)
        request.publish_at_asked = form.cleaned_data.get("publish_at", form.instance.publish_at)
        buttons = (*WORKFLOW_BUTTONS, MORE_ROWS_BUTTON)
        if change and not changes and any(name in request.POST for name in buttons):
            # Only a button was pressed (or more empty rows asked for): no revision that
            # changes nothing; what a workflow button does is recorded by its service.
            request.saved_summary = form.instance
            return
        summary = save.save_summary(
            summary=form.instance, parts=parts, user=request.user, comment=change_comment(changes)
        )
        self._save_key_phrases(request, summary, key_phrases)
        self._accept_suggested_key_phrase(request, summary)
        headline = rules.warnings_headline(rules.explained_warnings(summary=summary))
        if headline:  # one message; each warning is listed in "Things to check"
            messages.warning(request, f"{headline} — see Things to check.")
        # The buttons act once the save is kept (SummaryAdmin.changeform_view).
        request.saved_summary = summary

    def _attach_caveats_to_new_parts(self, request, formsets, parts: dict) -> None:
        """A caveat whose target is a row added in this save qualifies that row's part,
        which editing.save_summary writes before the caveats; a row left empty is not
        saved, so its caveat stays on the whole summary (and the editor is told)."""
        by_prefix = {formset.prefix: formset for formset in formsets}
        for formset in formsets:
            if formset.model is not Caveat:
                continue
            for form in formset.forms:
                new_target = getattr(form, "new_target", None)
                if new_target is None or form.instance not in parts.get(Caveat, []):
                    continue
                prefix, index = new_target
                rows = by_prefix[prefix].forms if prefix in by_prefix else []
                part = rows[index].instance if index < len(rows) else None
                if part is not None and part in parts.get(type(part), []):
                    setattr(form.instance, NEW_TARGET_FIELDS[prefix], part)
                else:
                    messages.warning(
                        request,
                        f"The caveat “{Truncator(form.instance.text).chars(40)}” was for a "
                        "new row that stayed empty, so it qualifies the whole summary.",
                    )

    def render_change_form(self, request, context, add=False, change=False, form_url="", obj=None):
        # The whole width for the parts and the citation table, and a lighter page: the
        # sidebar repeats the admin index, one link away.
        context["is_nav_sidebar_enabled"] = False
        response = super().render_change_form(request, context, add, change, form_url, obj)
        if hasattr(response, "add_post_render_callback"):
            response.add_post_render_callback(compact_html)
        return response

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        # The form's link checks, the save and the page each read every text: converted once.
        with remembering():
            response = super().changeform_view(request, object_id, form_url, extra_context)
        saved = getattr(request, "saved_summary", None)
        if saved is not None and response.status_code == 302:
            saved.refresh_from_db()
            refused = not self._apply_workflow_button(request, saved)
            self._apply_confirm_button(request, saved)
            self._apply_check_now_button(request, saved)
            if refused:
                return _back_with_the_refusal(request, saved)
        return response

    def response_change(self, request, obj):
        if MORE_ROWS_BUTTON in request.POST:  # saved; back with more empty rows
            asked = request.GET.get("rows", "")
            rows = (int(asked) if asked.isdigit() else EXTRA_ROWS) + MORE_ROWS
            rows = min(rows, MAX_ROWS_PARAMETER)
            return HttpResponseRedirect(f"{request.path}?rows={rows}")
        workflow = any(name in request.POST for name in WORKFLOW_BUTTONS)
        stay = any(
            button in request.POST
            for button in (CONFIRM_BUTTON, CHECK_NOW_BUTTON, ACCEPT_KEY_PHRASE_BUTTON)
        )
        if stay or (workflow and "_stay" in request.POST):
            request.POST = request.POST.copy()
            request.POST["_continue"] = "1"  # stay on the page
        return super().response_change(request, obj)


def _technical_reasons(details: list[str]):
    """The checker's reasons behind a <details> disclosure ("" when there are none)."""
    if not details:
        return ""
    if len(details) == 1:
        return format_html("<details><summary>Technical reason</summary>{}</details>", details[0])
    return format_html(
        "<details><summary>Technical reasons</summary><ul>{}</ul></details>",
        format_html_join("", "<li>{}</li>", ((detail,) for detail in details)),
    )


# The admin's templates indent deeply: on a page of a hundred rows the indentation alone
# weighs tens of KB. Runs of whitespace holding a line break render as one space (a line
# break keeps scripts' meaning), except in textareas and <pre>, which are left alone.
_VERBATIM_RE = re.compile(rb"(<textarea\b.*?</textarea>|<pre\b.*?</pre>)", re.DOTALL)
_INDENTATION_RE = re.compile(rb"[ \t\r]*\n[ \t\r\n]*")


def compact_html(response):
    """The response with each run of whitespace holding a line break reduced to one line
    break, outside textareas and <pre>: the same page, a third lighter."""
    parts = _VERBATIM_RE.split(response.content)
    for index in range(0, len(parts), 2):  # the even parts are outside the verbatim ones
        parts[index] = _INDENTATION_RE.sub(b"\n", parts[index])
    response.content = b"".join(parts)
    return response


def change_comment(message) -> str:
    """The admin's change message (a JSON list) as the sentence its history shows."""
    return LogEntry(change_message=json.dumps(message) if message else "").get_change_message()
