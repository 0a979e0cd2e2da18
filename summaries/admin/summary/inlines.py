"""The parts of the summary change page: key points, takeaways, chapters, caveats and the
citation table, each an inline with its empty rows and time fields."""

from adminsortable2.admin import SortableStackedInline, SortableTabularInline
from django import forms
from django.contrib import admin
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from summaries import checking
from summaries.models import Caveat, Chapter, Citation, KeyPoint, Takeaway
from summaries.text.citations import suggest_key_phrase
from summaries.text.durations import format_duration
from summaries.text.links import http_url

from ..forms import (
    CaveatForm,
    CitationFormSet,
    DurationField,
    OrderedInlineFormSet,
    SummaryItemForm,
)
from ..sources import page_summary, state_badge, verdict_badge

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
