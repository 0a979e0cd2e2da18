"""The search page's filters: one django-filter FilterSet over live summaries.

Channel, person and topic are chosen by slug, language by code, from those of live videos
only (`filter_choices`, kept in the fragment cache); dates bound the video's publication
day, as on the cards. Any other value makes the form invalid, and the page says which
field is wrong (the view answers 400) instead of guessing.
"""

from dataclasses import dataclass

from django import forms
from django.db.models import Exists, OuterRef, Subquery
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django_filters import ChoiceFilter, DateFilter, FilterSet

from summaries.models import LANGUAGE_CHOICES, Appearance, Channel, Person, Summary, Topic, Video
from summaries.pagecache.fragments import cached_fragment

CHOICE_NAMES = ("channel", "person", "topic", "language")
DATE_NAMES = ("published_after", "published_before")
FILTER_NAMES = (*CHOICE_NAMES, *DATE_NAMES)
DATE_ERROR = "Enter a date such as 2026-12-03."


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
        if after and before and after > before:
            self.add_error("published_before", "The end date is before the start date.")
        return cleaned


def _choice(label: str, empty_label: str, **kwargs) -> ChoiceFilter:
    return ChoiceFilter(
        label=label,
        empty_label=empty_label,
        # The value itself is not repeated: it may be anything a visitor typed.
        error_messages={"invalid_choice": f"Choose a {label.lower()} from the list."},
        **kwargs,
    )


def _date(label: str, lookup: str) -> DateFilter:
    return DateFilter(
        field_name="video__published_on",
        lookup_expr=lookup,
        label=label,
        input_formats=["%Y-%m-%d"],
        error_messages={"invalid": DATE_ERROR},
    )


class SharedChoices(list):
    """Choices a form field keeps as they are: Django deep-copies a form's fields, and
    copying hundreds of (slug, name) pairs per request costs more than the search."""

    def __deepcopy__(self, memo):
        return self


class SearchFilter(FilterSet):
    """Filters of the search page over live summaries (the queryset given)."""

    channel = _choice("Channel", "Any channel", field_name="video__channel__slug")
    person = _choice("Person", "Anyone", method="filter_person")
    topic = _choice("Topic", "Any topic", method="filter_topic")
    language = _choice("Language", "Any language", field_name="video__language")
    published_after = _date("From", "gte")
    published_before = _date("To", "lte")

    class Meta:
        model = Summary
        fields = []
        form = SearchFilterForm

    def __init__(self, data=None, *args, choices: dict[str, list[tuple[str, str]]], **kwargs):
        super().__init__(data, *args, **kwargs)
        self.choices = choices
        for name in CHOICE_NAMES:
            self.filters[name].extra["choices"] = SharedChoices(choices[name])

    def filter_person(self, queryset, name, value):
        people = Appearance.objects.filter(person__slug=value).values("video_id")
        return queryset.filter(video__in=Subquery(people))

    def filter_topic(self, queryset, name, value):
        topics = Video.topics.through.objects.filter(topic__slug=value).values("video_id")
        return queryset.filter(video__in=Subquery(topics))

    def chosen(self) -> dict[str, str]:
        """{name: value} of the filters set, as query parameters (valid forms only): for
        page links and the form's selected values."""
        data = self.form.cleaned_data
        chosen = {name: data[name] for name in CHOICE_NAMES if data.get(name)}
        chosen |= {name: data[name].isoformat() for name in DATE_NAMES if data.get(name)}
        return chosen
