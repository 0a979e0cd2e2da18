"""The filters of summaries, for readers: one django-filter FilterSet, `SearchFilter`.

The search page and the API's summary list (summaries/api/filters.py adds the API's own
filters to it) filter with it, so a filter means the same on both. Channel, person and
topic are named by slug, language by code; dates bound the video's publication day, as on
the cards. The search page offers those of live videos only (`filter_choices`, kept in the
fragment cache) and any other value makes the form invalid: the page says which field is
wrong (the view answers 400) instead of guessing. The API answers 400 naming the field too.
"""

from dataclasses import dataclass

from django import forms
from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django_filters import DateFilter, Filter, FilterSet
from django_filters.fields import ChoiceField

from summaries.models import LANGUAGE_CHOICES, Appearance, Channel, Person, Summary, Topic, Video
from summaries.pagecache.fragments import cached_fragment

CHOICE_NAMES = ("channel", "person", "topic", "language")
DATE_NAMES = ("published_after", "published_before")
FILTER_NAMES = (*CHOICE_NAMES, *DATE_NAMES)
DATE_ERROR = "Enter a date such as 2026-12-03."
SLUG_MAX = 200  # longer values are refused, not looked up


def filter_choices() -> dict[str, list[tuple[str, str]]]:
    """(value, label) pairs of the channels, people, topics and languages of live videos,
    by name. Four queries; drafts and scheduled videos add nothing."""
    live = Video.objects.published().order_by()
    # EXISTS per channel, person or topic (a few hundred rows) rather than DISTINCT over
    # the joins of every live video.
    channels = Channel.objects.filter(Exists(live.filter(channel=OuterRef("pk"))))
    people = Person.objects.filter(
        Exists(Appearance.objects.filter(person=OuterRef("pk"), video__in=live))
    )
    topics = Topic.objects.filter(
        Exists(Video.topics.through.objects.filter(topic=OuterRef("pk"), video__in=live))
    )
    languages = set(live.values_list("language", flat=True).distinct())
    return {
        "channel": list(channels.order_by("name", "pk").values_list("slug", "name")),
        "person": list(people.order_by("name", "pk").values_list("slug", "name")),
        "topic": list(topics.order_by("name", "pk").values_list("slug", "name")),
        "language": [(code, name) for code, name in LANGUAGE_CHOICES if code in languages],
    }


@dataclass(frozen=True)
class SearchChoices:
    """The filter choices, and each as an <option> escaped once (hundreds of people:
    escaping them on every page would cost more than the search)."""

    choices: dict[str, list[tuple[str, str]]]
    options: dict[str, list[tuple[str, str]]]  # name: [(value, "<option …>…</option>")]

    @classmethod
    def build(cls) -> "SearchChoices":
        choices = filter_choices()
        options = {
            name: [
                (value, format_html('<option value="{}">{}</option>', value, label))
                for value, label in pairs
            ]
            for name, pairs in choices.items()
        }
        return cls(choices, options)

    def options_html(self, name: str, selected: str) -> SafeString:
        """The <option>s of a filter, `selected` marked."""
        return mark_safe(  # noqa: S308 - each option was built by format_html
            "".join(
                html.replace("<option ", "<option selected ", 1) if value == selected else html
                for value, html in self.options[name]
            )
        )


def cached_filter_choices() -> SearchChoices:
    """The filter choices, computed again only after content changed."""
    return cached_fragment("choices:search", SearchChoices.build)


class SearchFilterForm(forms.Form):
    def clean(self):
        cleaned = super().clean()
        after, before = cleaned.get("published_after"), cleaned.get("published_before")
        # Like with like only: the API also takes times, which bound another field.
        if after and before and type(after) is type(before) and after > before:
            self.add_error("published_before", "The end date is before the start date.")
        return cleaned


class AnyValueField(forms.CharField):
    """A pick not checked against a list: a value that names nothing finds nothing."""

    def __init__(self, *, empty_label=None, **kwargs):
        super().__init__(max_length=SLUG_MAX, **kwargs)


class PickFilter(Filter):
    """One channel, person, topic or language: a value from `choices` when the filter has
    them (an error otherwise), else any value of up to SLUG_MAX characters."""

    def __init__(self, *, label: str, empty_label: str, **kwargs):
        super().__init__(
            label=label,
            empty_label=empty_label,
            # The value itself is not repeated: it may be anything a visitor typed.
            error_messages={"invalid_choice": f"Choose a {label.lower()} from the list."},
            **kwargs,
        )

    @property
    def field_class(self):
        return ChoiceField if "choices" in self.extra else AnyValueField


def _date(label: str, lookup: str, help_text: str) -> DateFilter:
    return DateFilter(
        field_name="video__published_on",
        lookup_expr=lookup,
        label=label,
        help_text=help_text,
        input_formats=["%Y-%m-%d"],
        error_messages={"invalid": DATE_ERROR},
    )


class SharedChoices(list):
    """Choices a form field keeps as they are: Django deep-copies a form's fields, and
    copying hundreds of (slug, name) pairs per request costs more than the search."""

    def __deepcopy__(self, memo):
        return self


class SearchFilter(FilterSet):
    """Filters of summaries (the queryset given): the search page's, and the API's list's.

    With `choices` (the search page: those of live videos), a channel, person, topic or
    language outside them is an error. Without (the API, whose editors also list drafts),
    channel, person and topic may be any slug, and one that names nothing finds nothing;
    a language must be one of LANGUAGE_CHOICES.
    """

    channel = PickFilter(
        field_name="video__channel__slug",
        label="Channel",
        empty_label="Any channel",
        help_text="A channel's slug.",
    )
    person = PickFilter(
        method="filter_person", label="Person", empty_label="Anyone", help_text="A person's slug."
    )
    topic = PickFilter(
        method="filter_topic", label="Topic", empty_label="Any topic", help_text="A topic's slug."
    )
    language = PickFilter(
        field_name="video__language",
        label="Language",
        empty_label="Any language",
        choices=SharedChoices(LANGUAGE_CHOICES),
        help_text="The video's language.",
    )
    published_after = _date("From", "gte", "Videos published on or after this day (YYYY-MM-DD).")
    published_before = _date("To", "lte", "Videos published on or before this day (YYYY-MM-DD).")

    class Meta:
        model = Summary
        fields = []
        form = SearchFilterForm

    def __init__(
        self, data=None, *args, choices: dict[str, list[tuple[str, str]]] | None = None, **kwargs
    ):
        super().__init__(data, *args, **kwargs)
        self.choices = choices
        for name in CHOICE_NAMES if choices is not None else ():
            pick = self.filters[name]
            pick.extra["choices"] = SharedChoices(choices[name])
            # A field built before the copy (the API schema builds the shared filter's)
            # would keep other choices.
            vars(pick).pop("_field", None)

    # `value: str` tells the API schema (drf-spectacular) the parameter's type.
    def filter_person(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        people = Appearance.objects.filter(person__slug=value).values("video_id")
        return queryset.filter(video__in=Subquery(people))

    def filter_topic(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        topics = Video.topics.through.objects.filter(topic__slug=value).values("video_id")
        return queryset.filter(video__in=Subquery(topics))

    def chosen(self) -> dict[str, str]:
        """{name: value} of the filters set, as query parameters (valid forms only): for
        page links and the form's selected values."""
        data = self.form.cleaned_data
        chosen = {name: data[name] for name in CHOICE_NAMES if data.get(name)}
        chosen |= {name: data[name].isoformat() for name in DATE_NAMES if data.get(name)}
        return chosen
