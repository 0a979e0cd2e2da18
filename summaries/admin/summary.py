"""The summary page: one page per summary with its parts, history, preview and warnings."""

import json
import re

from adminsortable2.admin import SortableAdminBase, SortableStackedInline, SortableTabularInline
from django import forms
from django.contrib import admin, messages
from django.contrib.admin.models import LogEntry
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import models
from django.db.models import Count, Q
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from summaries import checking
from summaries.checking.record import PROBLEM_STATES, PROBLEM_VERDICTS
from summaries.editing import copies, derived, gate, receipts, rules, save, workflow
from summaries.models import (
    LANGUAGE_CHOICES,
    Caveat,
    Chapter,
    Citation,
    KeyPoint,
    Summary,
    Takeaway,
)
from summaries.text.citations import suggest_key_phrase
from summaries.text.durations import format_duration
from summaries.text.links import http_url
from summaries.text.remembered import remembering

from .base import ContentAdmin
from .copies import WorkingCopyMixin
from .forms import (
    CHANGE_KIND_FIELD,
    CHANGE_NOTE_FIELD,
    NEW_TARGET_FIELDS,
    CaveatForm,
    CitationFormSet,
    DurationField,
    OrderedInlineFormSet,
    SummaryForm,
    SummaryItemForm,
)
from .history import RevisionHistoryMixin
from .preview import MarkdownPreviewMixin
from .receipts import ReceiptsMixin, publication_problems_html, refusal_html
from .restore import RestoreMixin
from .review import SUBMIT_MESSAGE_FIELD, ReviewMixin
from .sources import page_summary, state_badge, verdict_badge

MARKDOWN_WIDGET = forms.Textarea(
    attrs={"rows": 12, "cols": 100, "class": "vLargeTextField markdown-source"}
)


class MarkdownAdminMixin:
    """A roomy monospace textarea for every Markdown field."""

    markdown_fields = ("body", "text")

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name in self.markdown_fields and isinstance(db_field, models.TextField):
            kwargs["widget"] = MARKDOWN_WIDGET
        return super().formfield_for_dbfield(db_field, request, **kwargs)


class TimeFieldMixin:
    """Times into the video are typed as 12:30 rather than 750."""

    time_fields = ("time", "start_time")

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name in self.time_fields:
            # The format in the label rather than a help text under every row's field.
            return DurationField(
                allow_zero=True,
                required=False,
                label=f"{db_field.verbose_name.capitalize()} (mm:ss)",
                help_text="",
            )
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    # Who may only view the parts reads each time as a clock time, as editors type it,
    # never as raw seconds (the admin would print the stored number).

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if self.has_change_permission(request, obj):
            return fields
        return [f"{name}_shown" if name in self.time_fields else name for name in fields]

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if self.has_change_permission(request, obj):
            return readonly
        return [*readonly, *(f"{name}_shown" for name in self.time_fields)]

    @admin.display(description="Time")
    def time_shown(self, part):
        return format_duration(part.time) if part.time is not None else "—"

    @admin.display(description="Start time")
    def start_time_shown(self, part):
        return format_duration(part.start_time) if part.start_time is not None else "—"


# --- Inlines of the summary page --------------------------------------------------------

# Empty rows each part offers, so that parts can be added without JavaScript; the page's
# "Save and add empty rows" button reloads it with MORE_ROWS of them (?rows=N).
EXTRA_ROWS = 1
MORE_ROWS = 3
MAX_ROWS_PARAMETER = 20
MORE_ROWS_BUTTON = "_more_rows"


# Django's own inline templates rather than adminsortable2's: those add "move to first /
# last" icons to every row, which a keyboard cannot reach; the page's script gives each row
# "Move up" and "Move down" buttons instead (drag and drop still works).
STACKED_TEMPLATE = "admin/edit_inline/stacked.html"
TABULAR_TEMPLATE = "admin/summaries/summary/includes/tabular_parts.html"


class EmptyRowsMixin:
    """One empty row per part, or as many as ?rows=N asks for (at most MAX_ROWS_PARAMETER).

    Empty rows are neither saved nor errors (OrderedInlineFormSet skips unchanged new rows).
    """

    def get_extra(self, request, obj=None, **kwargs):
        asked = request.GET.get("rows", "")
        if asked.isdigit():
            return min(int(asked), MAX_ROWS_PARAMETER)
        return EXTRA_ROWS


class KeyPointInline(EmptyRowsMixin, TimeFieldMixin, MarkdownAdminMixin, SortableStackedInline):
    model = KeyPoint
    jump_label = "Key points"  # in the page's links to its sections
    template = STACKED_TEMPLATE
    form = SummaryItemForm
    formset = OrderedInlineFormSet
    fields = ["title", "body", "time", "position"]
    markdown_fields = ()
    formfield_overrides = {models.TextField: {"widget": forms.Textarea(attrs={"rows": 4})}}


class TakeawayInline(EmptyRowsMixin, TimeFieldMixin, SortableTabularInline):
    model = Takeaway
    jump_label = "Takeaways"
    template = TABULAR_TEMPLATE
    form = SummaryItemForm
    formset = OrderedInlineFormSet
    fields = ["text", "time", "position"]
    formfield_overrides = {
        models.TextField: {"widget": forms.Textarea(attrs={"rows": 2, "cols": 80})}
    }


class ChapterInline(EmptyRowsMixin, TimeFieldMixin, MarkdownAdminMixin, SortableStackedInline):
    model = Chapter
    jump_label = "Chapters"
    template = STACKED_TEMPLATE
    form = SummaryItemForm
    formset = OrderedInlineFormSet
    # No saved preview of each body in the page: twelve chapters of transcript would double
    # its weight. The page's script previews a body when it is opened; without JavaScript,
    # "Preview (nothing is saved)" shows the reader page.
    fields = ["title", "start_time", "synopsis", "body", "position"]
    formfield_overrides = {
        models.TextField: {"widget": forms.Textarea(attrs={"rows": 2, "cols": 100})}
    }

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name == "synopsis" and field is not None:
            # Its help in the label: one line less under each of a dozen chapters.
            field.label, field.help_text = "Synopsis (two sentences above the text)", ""
        return field


class CaveatInline(EmptyRowsMixin, MarkdownAdminMixin, SortableTabularInline):
    model = Caveat
    jump_label = "Caveats"
    template = TABULAR_TEMPLATE
    form = CaveatForm
    formset = OrderedInlineFormSet
    fields = ["target", "claim", "text", "position"]
    formfield_overrides = {
        models.TextField: {"widget": forms.Textarea(attrs={"rows": 2, "cols": 60})}
    }

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        formset.form.base_fields["target"].choices = self._target_choices(request, obj)
        return formset

    def _target_choices(self, request, obj) -> list:
        """This summary's own chapters, key points and takeaways (short labels: a whole
        takeaway would make the row overflow the page), then the page's empty rows of each
        ("new:<prefix>:<row index>"), which the page's script names by their title."""
        extra = self.get_extra(request, obj)
        groups = []
        for label, model, prefix, name, text in (
            ("Chapter", Chapter, "chapters", "chapter", "title"),
            ("Key point", KeyPoint, "key_points", "key_point", "title"),
            ("Takeaway", Takeaway, "takeaways", "takeaway", "text"),
        ):
            saved = (
                list(model.objects.filter(summary=obj).values_list("pk", "position", text))
                if obj
                else []
            )
            options = [
                (f"{name}:{pk}", f"{label} {position}: {Truncator(words).chars(32)}")
                for pk, position, words in saved
            ]
            options += [
                (f"new:{prefix}:{len(saved) + row}", f"New {label.lower()} (empty row {row + 1})")
                for row in range(extra)
            ]
            groups.append((f"{label}s", options))
        return [("", "The whole summary"), *groups]


class CitationCellsMixin:
    """A citation row's read-only cells as one piece of HTML each side of its key phrase:
    36 rows of six cells through the admin's per-field machinery cost more time than the
    rest of the page."""

    inline = None  # the CitationInline, set by its get_formset

    def _cells(self, names):
        inline = self.inline
        return format_html_join(
            "",
            '<td class="field-{}">{}</td>',
            ((name, getattr(inline, name)(self.instance)) for name in names),
        )

    @property
    def cells_before(self):
        return self._cells(self.inline.cells_before)

    @property
    def cells_after(self):
        return self._cells(self.inline.cells_after)


class CitationForm(CitationCellsMixin, forms.ModelForm):
    pass


class CitationInline(admin.TabularInline):
    """Citations are found in the text on save; editors read them here."""

    model = Citation
    jump_label = "Citations"
    form = CitationForm
    formset = CitationFormSet
    template = "admin/summaries/summary/includes/citations_inline.html"
    extra = 0
    can_delete = False
    fields = [
        "position",
        "where",
        "link",
        "claim_text",
        "key_phrase",
        "source_state",
        "claim_check",
    ]
    readonly_fields = ["position", "where", "link", "claim_text", "source_state", "claim_check"]
    verbose_name_plural = "Citations found in the text (updated on save)"

    # The read-only cells before and after the key phrase, in the order of `fields`.
    cells_before = ("where", "link", "claim_text")
    cells_after = ("source_state", "claim_check")

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .select_related("source", "chapter", "key_point", "takeaway", "confirmed_by")
        )

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        formset.form.inline = self  # for its rows' cells (CitationCellsMixin)
        return formset

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name == "key_phrase":
            # Said once, in the column's heading (the page's citations template), not per row;
            # each box is named for screen readers by a short aria-label.
            field.label = "Key phrase (words the source must say)"
            field.help_text = ""
            field.widget.attrs["aria-label"] = "Key phrase"
        return field

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        # Only the key phrase is editable (what the source must still say), by whoever
        # may change the summary; it is saved through editing.derived.set_key_phrase.
        return request.user.has_perm("summaries.change_summary")

    @admin.display(description="In")
    def where(self, citation):
        # Positions, not titles: the title of each chapter once per citation weighs a lot.
        if citation.chapter_id:
            return f"Chapter {citation.chapter.position}"
        if citation.takeaway_id:
            return f"Takeaway {citation.takeaway.position}"
        if citation.key_point_id:
            return f"Key point {citation.key_point.position}"
        return "Summary"

    @admin.display(description="Link")
    def link(self, citation):
        if not http_url(citation.url):  # a javascript: URL must not become a live link
            return format_html(
                "{} → {} ({})", citation.link_text, citation.url, citation.source.host
            )
        return format_html(
            '{} → <a href="{}" rel="noopener noreferrer">{}</a><br>{}',
            citation.link_text,
            citation.url,
            citation.source.host,
            page_summary(citation.source),
        )

    @admin.display(description="Sentence cited")
    def claim_text(self, citation):
        """The claim, and for a citation without a key phrase the claim's words to use as
        one, with a button that saves the page with them (SummaryAdmin.save_related)."""
        suggestion = "" if citation.key_phrase else suggest_key_phrase(citation.claim)
        if not suggestion:
            return citation.claim
        return format_html(
            '{}<p class="key-phrase-suggestion">Suggested key phrase: “{}”<br>'
            '<button type="submit" name="{}" value="{}" class="button">Use it</button></p>',
            citation.claim,
            suggestion,
            ACCEPT_KEY_PHRASE_BUTTON,
            citation.pk,
        )

    @admin.display(description="Source check")
    def source_state(self, citation):
        history = reverse("admin:summaries_source_change", args=[citation.source_id])
        return format_html('{} <a href="{}">history</a>', state_badge(citation.source), history)

    @admin.display(description="Claim check")
    def claim_check(self, citation):
        """The claim verdict, what the page says, and a button to confirm the citation."""
        parts = [verdict_badge(citation)]
        if citation.verdict_excerpt:
            parts.append(format_html("<br><q>{}</q>", citation.verdict_excerpt))
        if citation.confirmed_at:
            who = citation.confirmed_by.get_username() if citation.confirmed_by else "unknown"
            when = f"{timezone.localtime(citation.confirmed_at):%Y-%m-%d}"
            parts.append(format_html("<br><small>Confirmed by {}, {}</small>", who, when))
        if citation.source.fingerprint and citation.source.state in checking.READABLE_STATES:
            parts.append(
                format_html(
                    '<br><button type="submit" name="{}" value="{}" class="button">'
                    "Save and confirm</button>",
                    CONFIRM_BUTTON,
                    citation.pk,
                )
            )
        return format_html_join("", "{}", ((part,) for part in parts))


# The summary form's per-citation "confirm" button (handled in SummaryAdmin.save_related).
CONFIRM_BUTTON = "_confirm_citation"
# A citation's "Use it" button for its suggested key phrase (SummaryAdmin.save_related).
ACCEPT_KEY_PHRASE_BUTTON = "_accept_key_phrase"
# "Check the sources now" (handled in SummaryAdmin.save_related).
CHECK_NOW_BUTTON = "_check_now"
# The change form's workflow buttons (SummaryAdmin._apply_workflow_button).
WORKFLOW_BUTTONS = ("_publish", "_unpublish", "_review", "_send_back")


# --- Summary ----------------------------------------------------------------------------


class ScheduleForm(forms.Form):
    publish_at = forms.DateTimeField(
        label="Publish at",
        help_text="YYYY-MM-DD HH:MM, server time zone (UTC). A past time publishes now.",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )


class LanguageFilter(admin.SimpleListFilter):
    """The languages summaries are written about, not every language Django knows."""

    title = "language"
    parameter_name = "language"

    def lookups(self, request, model_admin):
        used = set(Summary.objects.originals().values_list("video__language", flat=True).distinct())
        return [(code, name) for code, name in LANGUAGE_CHOICES if code in used]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(video__language=self.value())
        return queryset


@admin.register(Summary)
class SummaryAdmin(
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

    @admin.display(description="Sources", ordering="failing")
    def failing_sources(self, summary):
        failing = getattr(summary, "failing", 0)
        if not failing:
            return "—"
        return format_html(
            '<span class="source-state source-state-broken">{} failing</span>', failing
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

    # Columns and read-only fields.

    @admin.display(description="Video", ordering="video__title")
    def title(self, summary):
        title = summary.video.title
        return format_html('<span title="{}">{}</span>', title, Truncator(title).chars(60))

    @admin.display(ordering="video__channel__name")
    def channel(self, summary):
        return summary.video.channel

    @admin.display(description="Last edit", ordering="updated_at")
    def last_edit(self, summary):
        who = _last_editor(summary)
        when = f"{timezone.localtime(summary.updated_at):%Y-%m-%d %H:%M}"
        return f"{when}, {who}" if who else when

    @admin.display(description="State", ordering="status")
    def list_state(self, summary):
        """The state in a word or two: the publish time has a column of its own."""
        if summary.is_scheduled():
            state = "Scheduled"
        elif summary.is_live():
            state = "Live"
        else:
            state = _status_label(summary)
        copy = getattr(summary, "working_copy", None)
        if copy is not None:
            state = f"{state} · changes ({_status_label(copy).lower()})"
        return format_html('<span class="nowrap">{}</span>', state)

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

    def _save_key_phrases(self, request, summary, key_phrases: dict) -> None:
        citations = Citation.objects.select_related("source", "summary").filter(
            summary=summary, pk__in=list(key_phrases)
        )
        for citation in citations:  # a citation whose link left the text is gone
            derived.set_key_phrase(
                citation=citation, phrase=key_phrases[citation.pk], user=request.user
            )

    def _accept_suggested_key_phrase(self, request, summary) -> None:
        """A citation's "Use it" button: its claim's suggested words become its key phrase
        (as if typed), unless it got a key phrase meanwhile."""
        pk = request.POST.get(ACCEPT_KEY_PHRASE_BUTTON, "")
        citation = (
            Citation.objects.select_related("source", "summary")
            .filter(summary=summary, pk=pk, key_phrase="")
            .first()
            if pk.isdigit()
            else None
        )
        suggestion = suggest_key_phrase(citation.claim) if citation else ""
        if suggestion:
            derived.set_key_phrase(citation=citation, phrase=suggestion, user=request.user)
            messages.success(
                request, f"Key phrase of “{citation.link_text}” set to “{suggestion}”."
            )

    def _apply_check_now_button(self, request, summary) -> None:
        """ "Check the sources now": queue checks of every source the summary cites."""
        if CHECK_NOW_BUTTON not in request.POST:
            return
        sources, queued = checking.request_summary_checks(summary=summary, user=request.user)
        busy = len(sources) - len(queued)
        message = f"Queued a check of {len(queued)} source{'s' if len(queued) != 1 else ''}."
        if busy:
            message += f" {busy} already being checked or ignored."
        messages.success(request, message)

    def _apply_confirm_button(self, request, summary):
        """The "Save and confirm" button of a citation: record what its source says now."""
        pk = request.POST.get(CONFIRM_BUTTON, "")
        citation = (
            Citation.objects.select_related("source").filter(summary=summary, pk=pk).first()
            if pk.isdigit()
            else None
        )
        if citation is None:
            return
        try:
            checking.confirm_citation(citation=citation, user=request.user)
            messages.success(request, f"Confirmed “{citation.link_text}” against its source.")
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))

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

    def _apply_workflow_button(self, request, summary) -> bool:
        """The change form's extra buttons: send to review, publish/schedule, unpublish.
        Returns False when the step was refused (the reason is the error message)."""
        try:
            if "_publish" in request.POST and self._may_publish(request):
                at = getattr(request, "publish_at_asked", summary.publish_at)
                summary = workflow.publish_summary(
                    summary=summary,
                    user=request.user,
                    at=at,
                    change_kind=request.POST.get(CHANGE_KIND_FIELD) or None,
                    note=request.POST.get(CHANGE_NOTE_FIELD, ""),
                )
                messages.success(request, self._published_message(summary, at))
            elif "_unpublish" in request.POST and self._may_publish(request):
                workflow.unpublish_summary(summary=summary, user=request.user)
                messages.success(request, "Unpublished: readers no longer see this summary.")
            elif "_review" in request.POST:
                message = request.POST.get(SUBMIT_MESSAGE_FIELD, "")
                workflow.submit_for_review(summary=summary, user=request.user, message=message)
                messages.success(request, "Sent for review.")
            elif "_send_back" in request.POST and self._may_publish(request):
                note = request.POST.get("review_note", "")
                workflow.send_back(summary=summary, user=request.user, note=note)
                messages.success(request, "Sent back to the editor with your note.")
        except receipts.PublicationRefused as refused:
            messages.error(request, refusal_html(refused, _change_page(summary)))
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
        except PermissionDenied as error:
            messages.error(request, str(error))
        else:
            return True
        return False

    def _may_publish(self, request):
        if gate.may_publish(request.user):
            return True
        raise PermissionDenied("You do not have permission to publish summaries.")

    @staticmethod
    def _published_message(summary, at=None):
        if summary.is_scheduled():
            local = timezone.localtime(summary.publish_at)
            return f"Scheduled: goes live at {local:%Y-%m-%d %H:%M %Z}."
        if at is not None and at > timezone.now() and copies.working_copy_of(summary):
            local = timezone.localtime(at)
            return f"Scheduled: the changes go live at {local:%Y-%m-%d %H:%M %Z}."
        return "Published: readers can see this summary now."

    # Changelist actions.

    def _run_on_each(self, request, queryset, service, done, **kwargs):
        count = 0
        for summary in queryset:
            try:
                service(summary=summary, user=request.user, **kwargs)
                count += 1
            except receipts.PublicationRefused as refused:
                page = _change_page(summary)
                messages.error(request, refusal_html(refused, page, title=str(summary)))
            except ValidationError as error:
                messages.error(request, f"{summary}: {' '.join(error.messages)}")
            except PermissionDenied as error:
                messages.error(request, str(error))
                return
        if count:
            messages.success(request, f"{done} {count} summar{'y' if count == 1 else 'ies'}.")

    @admin.action(description="Publish selected summaries now")
    def publish_now(self, request, queryset):
        self._run_on_each(request, queryset, _publish_first_versions, "Published")

    @admin.action(description="Unpublish selected summaries")
    def unpublish(self, request, queryset):
        self._run_on_each(request, queryset, workflow.unpublish_summary, "Unpublished")

    @admin.action(description="Send selected summaries to review")
    def send_to_review(self, request, queryset):
        self._run_on_each(request, queryset, workflow.submit_for_review, "Sent to review")

    @admin.action(description="Schedule selected summaries…")
    def schedule(self, request, queryset):
        form = ScheduleForm(request.POST if "apply" in request.POST else None)
        if form.is_valid():
            self._run_on_each(
                request,
                queryset,
                _publish_first_versions,
                "Scheduled",
                at=form.cleaned_data["publish_at"],
            )
            return HttpResponseRedirect(request.get_full_path())
        context = {
            **self.admin_site.each_context(request),
            "title": "Schedule summaries",
            "summaries": queryset,
            "form": form,
            "opts": self.model._meta,
            "action_checkbox_name": admin.helpers.ACTION_CHECKBOX_NAME,
        }
        return TemplateResponse(request, "admin/summaries/summary/schedule.html", context)


def _change_page(summary) -> str:
    """The change page a summary (or its unpublished changes) is edited on."""
    original = summary.working_copy_of or summary
    return reverse("admin:summaries_summary_change", args=[original.pk])


def _back_with_the_refusal(request, summary):
    """Back to the summary's page after a refused workflow step, its refusal the answer:
    the admin's "changed successfully" would say the step was done."""
    kept = [m for m in messages.get_messages(request) if m.level != messages.SUCCESS]
    for message in kept:
        messages.add_message(request, message.level, message.message, message.extra_tags)
    return HttpResponseRedirect(_change_page(summary))


def _publish_first_versions(*, summary, user, **kwargs):
    """Publish (or schedule) a summary from the list; changes to a live one are refused,
    since the list's actions cannot ask what kind of change they are (typo fix, update
    or correction with its note), which readers are told."""
    if summary.working_copy_of is not None or copies.working_copy_of(summary) is not None:
        raise ValidationError(
            "it has changes to its live version: publish them from its page, where you say "
            "what kind of change they are."
        )
    return workflow.publish_summary(summary=summary, user=user, **kwargs)


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


def _last_editor(summary) -> str:
    """Who saved the summary last: its last editor, else whoever created it ("" if unknown)."""
    user = summary.updated_by or summary.created_by
    return user.get_username() if user else ""


def _status_label(summary) -> str:
    """The status as editors read it: a draft a reviewer sent back says so."""
    if summary.status == Summary.Status.DRAFT and summary.review_note:
        return "Draft (sent back)"
    return summary.get_status_display()


def change_comment(message) -> str:
    """The admin's change message (a JSON list) as the sentence its history shows."""
    return LogEntry(change_message=json.dumps(message) if message else "").get_change_message()
