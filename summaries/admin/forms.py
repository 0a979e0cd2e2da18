"""Admin form pieces: durations typed as 34:21, optimistic locking, ordered inlines."""

import re

from adminsortable2.admin import CustomInlineFormSet
from django import forms
from django.core.exceptions import ValidationError
from django.forms.utils import flatatt
from django.utils.functional import cached_property
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from summaries.editing import corrections, video_changes
from summaries.editing.rules import (
    TIMED_PARTS,
    duplicate_video_problem,
    link_problems,
    parts_after_end,
    review_note_problem,
    time_after_end,
)
from summaries.models import Chapter, KeyPoint, Summary, Takeaway, Video
from summaries.text.durations import (
    DURATION_MESSAGES,
    DurationError,
    format_duration,
    read_duration,
)
from summaries.text.line_endings import normalised_text

# The change form's "Send back to the editor" button (its note is checked with the form).
SEND_BACK_BUTTON = "_send_back"
# The change form's publish button; on a published summary it asks what kind of change
# goes live (CHANGE_KIND_FIELD) and its public note (CHANGE_NOTE_FIELD).
PUBLISH_BUTTON = "_publish"
CHANGE_KIND_FIELD = "change_kind"
CHANGE_NOTE_FIELD = "change_note"
PUBLISH_AT_HINT = (
    "Date as YYYY-MM-DD and time as HH:MM (24-hour), in the server's time zone (UTC); "
    "the calendar and clock buttons pick them. Empty: publishing makes it live at once."
)
# The largest place in an order a posted position is read as (a small integer column).
MAX_POSITION = 32767


class DurationField(forms.CharField):
    """A positive length in seconds, typed as seconds or as a clock (34:21, 1:02:03)."""

    default_error_messages = DURATION_MESSAGES

    def __init__(self, *, allow_zero=False, **kwargs):
        self.allow_zero = allow_zero
        kwargs.setdefault("help_text", "mm:ss, h:mm:ss or seconds.")
        kwargs.setdefault("widget", forms.TextInput(attrs={"size": 9, "inputmode": "numeric"}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        if isinstance(value, int):
            return format_duration(value)
        return value

    def to_python(self, value):
        value = super().to_python(value)
        if value in self.empty_values:
            return None
        try:
            return read_duration(value, allow_zero=self.allow_zero)
        except DurationError as error:
            raise ValidationError(str(error), code=error.code) from None


def publishes_changes(summary: Summary) -> bool:
    """Whether publishing from this summary's page makes changes of a published summary
    live (so asks what kind they are), not a first publication."""
    return summary.pk is not None and (
        summary.is_working_copy or summary.status == Summary.Status.PUBLISHED
    )


class StoredTextForm(forms.ModelForm):
    """A text counts as changed only when it changes as it is stored (editing.save_summary
    stores it normalised: text.line_endings): a browser sends a textarea's line breaks as
    CRLF, and the admin's change message (the revision's line in History) and the buttons
    that act only on a save with changes must not take that for an edit."""

    @cached_property
    def changed_data(self):
        return [name for name in super().changed_data if not self._same_text(name)]

    def _same_text(self, name) -> bool:
        field = self.fields[name]
        if not isinstance(field, forms.CharField) or isinstance(field, forms.ChoiceField):
            return False
        bound = self[name]
        try:
            posted = field.to_python(bound.data)
        except ValidationError:
            return False
        initial = bound.initial
        if not isinstance(posted, str) or not isinstance(initial, str | None):
            return False
        return normalised_text(posted) == normalised_text(initial or "")


class SummaryForm(StoredTextForm):
    """The summary's own fields plus the lock version the editor started from."""

    expected_lock_version = forms.IntegerField(widget=forms.HiddenInput, required=False)
    # When restoring a revision the admin reverts the row before the form is built, so the
    # version to compare with is the one read before the revert (set by SummaryAdmin).
    lock_baseline = None

    class Meta:
        model = Summary
        fields = ["video", "tldr", "publish_at"]
        widgets = {"tldr": forms.Textarea(attrs={"rows": 4, "cols": 90})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["expected_lock_version"].initial = self._current_version(self.instance)
        if "publish_at" in self.fields:
            publish_at = self.fields["publish_at"]
            publish_at.help_text = PUBLISH_AT_HINT
            # The admin's split date and time boxes say "Date:" and "Time:" as bare text.
            for widget, name in zip(
                getattr(publish_at.widget, "widgets", ()), ("date", "time"), strict=False
            ):
                widget.attrs["aria-label"] = f"Publish at: {name}"

    def _current_version(self, summary):
        return self.lock_baseline if self.lock_baseline is not None else summary.lock_version

    def clean(self):
        cleaned = super().clean()
        publish_at = cleaned.get("publish_at", self.instance.publish_at)
        if self.instance.status == Summary.Status.PUBLISHED and publish_at is None:
            self.add_error(
                "publish_at",
                "A published summary needs a publish time. To take it down, use Unpublish.",
            )
        if SEND_BACK_BUTTON in self.data:
            problem = review_note_problem(self.data.get("review_note", ""))
            if problem:
                self.add_error(None, ValidationError(problem, code="review_note"))
        if PUBLISH_BUTTON in self.data and publishes_changes(self.instance):
            self._check_change()
        self._check_not_stale(cleaned.get("expected_lock_version"))
        return cleaned

    def _check_change(self) -> None:
        """The kind and note of the changes to publish, checked before anything is saved
        (as copies.publish_changes checks them), so that a refused one changes nothing."""
        try:
            corrections.checked_change(
                kind=self.data.get(CHANGE_KIND_FIELD), note=self.data.get(CHANGE_NOTE_FIELD)
            )
        except ValidationError as error:
            for message in error.messages:
                self.add_error(None, ValidationError(message, code="change_note"))

    def _check_not_stale(self, expected):
        """Refuse to save over a version saved by someone else since this form was opened.

        The row is locked until the admin's transaction ends, so two simultaneous saves
        cannot both pass this check (on SQLite the save's own conditional update catches it).
        """
        if not self.instance.pk:
            return
        current = (
            Summary.objects.select_for_update(of=("self",))
            .select_related("updated_by")
            .filter(pk=self.instance.pk)
            .first()
        )
        if current is None or expected is None or self._current_version(current) == expected:
            return
        who = current.updated_by.get_username() if current.updated_by else "someone else"
        when = current.updated_at.strftime("%Y-%m-%d %H:%M:%S %Z")
        raise ValidationError(
            f"{who} saved this summary at {when}, after you opened it. Your changes are "
            "still in this form but were NOT saved. Open the summary in a new tab to see "
            "their version, copy your edits over there, and save that.",
            code="edit_conflict",
        )


class VideoForm(forms.ModelForm):
    duration_seconds = DurationField(label="Duration")

    class Meta:
        model = Video
        fields = [
            "title",
            "slug",
            "channel",
            "blurb",
            "source_url",
            "thumbnail_url",
            "duration_seconds",
            "language",
            "published_on",
            "topics",
        ]

    def clean_source_url(self):
        url = self.cleaned_data["source_url"]
        problem = duplicate_video_problem(url, exclude_pk=self.instance.pk)
        if problem:
            raise ValidationError(problem, code="duplicate_video")
        return url

    def clean_duration_seconds(self):
        """The summary's times must stay before the video's end (as in the API)."""
        duration = self.cleaned_data["duration_seconds"]
        summary = Summary.objects.filter(video=self.instance).first() if self.instance.pk else None
        problems = parts_after_end(summary, duration)
        if problems:
            raise ValidationError(
                [f"{problem} Change the summary first." for problem in problems],
                code="parts_after_end",
            )
        return duration


class PositionField(forms.IntegerField):
    """A place in an order: whatever is posted is read as a number from 0 (no place) to
    MAX_POSITION, never as an error."""

    def to_python(self, value):
        try:
            number = int(str(value).strip())
        except (TypeError, ValueError):
            return 0
        return min(max(number, 0), MAX_POSITION)


class SummaryItemForm(StoredTextForm):
    """A key point, takeaway, chapter or caveat on the summary page.

    Its position only orders it: OrderedInlineFormSet numbers the rows 1..n when saving,
    so no position posted (none, the same twice, nonsense) is ever an error. Every link of
    its Markdown must be one that may be cited (editing.rules.link_problems, as in the API).
    """

    markdown_fields = ("body", "text")
    # Hidden (adminsortable2 sets the widget).
    position = PositionField(required=False)

    def clean(self):
        cleaned = super().clean()
        for name in self.markdown_fields:
            for problem in link_problems(cleaned.get(name) or ""):
                self.add_error(name, f"{self.item_name(cleaned)}: {problem}")
        return cleaned

    def item_name(self, cleaned) -> str:
        kind = self._meta.model._meta.verbose_name.capitalize()
        title = cleaned.get("title")
        return f"{kind} “{title}”" if title else kind

    def has_changed(self):
        # A new row's position alone is no content: moving an empty row (the page's move
        # buttons number every row) must not save it nor make its empty fields errors.
        if self.instance.pk is None:
            return any(name != "position" for name in self.changed_data)
        return super().has_changed()

    def _get_validation_exclusions(self):
        # Positions are unique per summary only once the formset has numbered the rows.
        return {*super()._get_validation_exclusions(), "position"}


# What a caveat on the summary page may qualify: a saved part, as "<field>:<id>", or a part
# added in the same save, as "new:<inline prefix>:<row index>"; "" is the whole summary.
CAVEAT_TARGET_FIELDS = {"chapter": Chapter, "key_point": KeyPoint, "takeaway": Takeaway}
NEW_TARGET_FIELDS = {"chapters": "chapter", "key_points": "key_point", "takeaways": "takeaway"}
NEW_TARGET_RE = re.compile(r"new:(chapters|key_points|takeaways):(\d{1,4})")


class FastHiddenInput(forms.HiddenInput):
    """A hidden input written directly rather than through a widget template: the page of
    a long summary holds a hundred of them (each row's id, summary and position)."""

    def render(self, name, value, attrs=None, renderer=None):
        value = self.format_value(value)
        return format_html(
            '<input type="hidden" name="{}"{}{}>',
            name,
            format_html(' value="{}"', value) if value is not None else "",
            flatatt(self.build_attrs(self.attrs, attrs)),
        )


class FastSelect(forms.Select):
    """A select written directly rather than one template per option: every caveat row
    lists each chapter, key point and takeaway of the summary."""

    def render(self, name, value, attrs=None, renderer=None):
        chosen = {str(v) for v in self.format_value(value)}

        def options(choices):
            return format_html_join(
                "",
                "<option{}{}>{}</option>",
                (
                    (
                        flatatt({"value": str(key)}),
                        mark_safe(" selected") if str(key) in chosen else "",  # noqa: S308
                        label,
                    )
                    for key, label in choices
                ),
            )

        parts = []
        for key, label in self.choices:
            if isinstance(label, (list, tuple)):
                parts.append(format_html('<optgroup label="{}">{}</optgroup>', key, options(label)))
            else:
                parts.append(options([(key, label)]))
        return format_html(
            '<select name="{}"{}>{}</select>',
            name,
            flatatt(self.build_attrs(self.attrs, attrs)),
            mark_safe("".join(parts)),  # noqa: S308 - each part escaped above
        )


class CaveatTargetField(forms.ChoiceField):
    """The part a caveat qualifies. The choices list this summary's parts and the empty
    rows the page was drawn with; any new row is accepted too (rows added by script)."""

    def valid_value(self, value):
        return bool(NEW_TARGET_RE.fullmatch(str(value))) or super().valid_value(value)


class CaveatForm(SummaryItemForm):
    """A caveat with one chooser for what it qualifies (CaveatTargetField).

    A saved part is set on the caveat here; a new row's is kept in `new_target`
    (prefix, row index) for SummaryAdmin.save_related, which attaches the caveat to the
    part once that row is known to be saved.
    """

    target = CaveatTargetField(
        required=False,
        widget=FastSelect,
        label="Qualifies",
        help_text="A chapter, key point or takeaway (also one added in this save), or none.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in CAVEAT_TARGET_FIELDS:
            target_id = getattr(self.instance, f"{name}_id", None)
            if target_id:
                self.initial.setdefault("target", f"{name}:{target_id}")
        self.new_target = None

    def clean(self):
        cleaned = super().clean()
        target = cleaned.get("target") or ""
        for name in CAVEAT_TARGET_FIELDS:
            setattr(self.instance, name, None)
        new = NEW_TARGET_RE.fullmatch(target)
        if new:
            self.new_target = (new.group(1), int(new.group(2)))
        elif target:
            name, _, target_id = target.partition(":")
            setattr(self.instance, f"{name}_id", int(target_id))
        return cleaned


class _KnownRowField(forms.ModelChoiceField):
    """A row's hidden id, read from the rows the formset loaded (one query for all) rather
    than by a query per row as Django's ModelChoiceField does; an id it did not load is
    looked up as Django would."""

    def __init__(self, queryset, *, known, **kwargs):
        self.known = known
        super().__init__(queryset, **kwargs)

    def to_python(self, value):
        if value not in self.empty_values:
            try:
                row = self.known(int(value))
            except (TypeError, ValueError):
                row = None
            if row is not None:
                return row
        return super().to_python(value)


class KnownRowsMixin:
    """For inline formsets of many rows (36 citations): no query per posted row id."""

    def add_fields(self, form, index):
        super().add_fields(form, index)
        name = self.model._meta.pk.name
        field = form.fields.get(name)
        if isinstance(field, forms.ModelChoiceField):
            form.fields[name] = _KnownRowField(
                field.queryset,
                known=self._existing_object,
                initial=field.initial,
                required=False,
                widget=FastHiddenInput,
            )
        for hidden in form.fields.values():  # the summary's id, the position
            if type(hidden.widget) is forms.HiddenInput:
                hidden.widget = FastHiddenInput(attrs=hidden.widget.attrs)


class OrderedInlineFormSet(KnownRowsMixin, CustomInlineFormSet):
    """Drag-and-drop ordered parts of a summary (key points, takeaways, chapters, caveats).

    Rows are ordered as their positions give (rows without one, such as new rows added
    without JavaScript, after the others; ties in the order shown); editing.save_summary
    numbers them 1..n when it saves the whole summary.
    """

    def clean(self):
        super().clean()
        self._check_times()

    def _check_times(self) -> None:
        """A time into the video must fall before its end (editing.rules, as in the API)."""
        field = dict(TIMED_PARTS).get(self.model)
        summary = self.instance
        if field is None or summary is None or not (summary.video_id or summary.is_working_copy):
            return
        duration = video_changes.duration_of(summary)  # a working copy's: its live video's
        for form in self._kept_in_order():
            problem = time_after_end(form.cleaned_data.get(field), duration)
            if problem:
                form.add_error(field, f"{form.item_name(form.cleaned_data)}: {problem}")

    def parts(self) -> list:
        """Every part of this kind after the save, in its new order, for
        editing.save_summary (which writes them). Also records what changed, as
        `save(commit=False)` does, for the admin's change message."""
        self.save(commit=False)
        return [form.instance for form in self._kept_in_order()]

    def _kept_in_order(self) -> list:
        """The forms whose rows remain after saving, in their new order."""
        kept = []
        for index, form in enumerate(self.forms):
            if self.can_delete and self._should_delete_form(form):
                continue
            if form not in self.initial_forms and not form.has_changed():
                continue  # an empty extra row: nothing is saved
            position = form.cleaned_data.get("position") or 0
            kept.append((position if position > 0 else MAX_POSITION + 1, index, form))
        return [form for *_, form in sorted(kept, key=lambda item: item[:2])]


class CitationFormSet(KnownRowsMixin, forms.BaseInlineFormSet):
    """The summary page's citations (only their key phrases are edited)."""
