"""Query parameters of the lists: django-filter sets, a whitelisted ordering, search."""

import datetime

from django import forms
from django.db.models import Subquery
from django_filters import fields as filter_fields
from django_filters import rest_framework as filters
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.filters import SearchFilter as DRFSearchFilter

from summaries.models import LANGUAGE_CHOICES, Appearance, Summary, Video
from summaries.reader import search

SLUG_MAX = 200
# Each word is one more LIKE over the searched columns; later words are ignored.
MAX_SEARCH_WORDS = 8


def to_utc(value: datetime.datetime) -> datetime.datetime:
    """An aware datetime in UTC; ValueError when that falls outside the years 1-9999.

    Python accepts offsets up to 24 hours, PostgreSQL only up to 16: a time such as
    2026-01-01T00:00+20:00 must reach the database in UTC, or the query fails.
    """
    try:
        return value.astimezone(datetime.UTC)
    except OverflowError:
        raise ValueError("out of range") from None


class UtcDateTimeField(filter_fields.IsoDateTimeField):
    def to_python(self, value):
        value = super().to_python(value)
        if value is None:
            return None
        try:
            return to_utc(value)
        except ValueError:
            raise forms.ValidationError("This time is out of range.", code="invalid") from None


class DateTimeFilter(filters.IsoDateTimeFilter):
    """An ISO 8601 time (a date means its midnight, UTC), compared in UTC."""

    field_class = UtcDateTimeField


def _video_ids_with_person(slug):
    return Appearance.objects.filter(person__slug=slug).values("video_id")


def _video_ids_with_topic(slug):
    return Video.topics.through.objects.filter(topic__slug=slug).values("video_id")


class VideoFilter(filters.FilterSet):
    channel = filters.CharFilter(
        field_name="channel__slug", max_length=SLUG_MAX, help_text="A channel's slug."
    )
    person = filters.CharFilter(
        method="filter_person", max_length=SLUG_MAX, help_text="A person's slug."
    )
    topic = filters.CharFilter(
        method="filter_topic", max_length=SLUG_MAX, help_text="A topic's slug."
    )
    language = filters.ChoiceFilter(field_name="language", choices=LANGUAGE_CHOICES)
    published_after = filters.DateFilter(
        field_name="published_on", lookup_expr="gte", help_text="Videos published on or after."
    )
    published_before = filters.DateFilter(
        field_name="published_on", lookup_expr="lte", help_text="Videos published on or before."
    )
    updated_since = DateTimeFilter(
        field_name="updated_at",
        lookup_expr="gte",
        help_text="Only videos changed at or after this time (ISO 8601), to sync changes.",
    )

    class Meta:
        model = Video
        fields = []

    def filter_person(self, queryset, name, value):
        return queryset.filter(pk__in=Subquery(_video_ids_with_person(value)))

    def filter_topic(self, queryset, name, value):
        return queryset.filter(pk__in=Subquery(_video_ids_with_topic(value)))


class SummaryFilter(filters.FilterSet):
    channel = filters.CharFilter(
        field_name="video__channel__slug", max_length=SLUG_MAX, help_text="A channel's slug."
    )
    person = filters.CharFilter(
        method="filter_person", max_length=SLUG_MAX, help_text="A person's slug."
    )
    topic = filters.CharFilter(
        method="filter_topic", max_length=SLUG_MAX, help_text="A topic's slug."
    )
    language = filters.ChoiceFilter(field_name="video__language", choices=LANGUAGE_CHOICES)
    status = filters.ChoiceFilter(
        field_name="status",
        choices=Summary.Status.choices,
        help_text="Editors only see other states than published.",
    )
    published_after = DateTimeFilter(
        field_name="publish_at", lookup_expr="gte", help_text="Published at or after (ISO 8601)."
    )
    published_before = DateTimeFilter(
        field_name="publish_at", lookup_expr="lte", help_text="Published at or before (ISO 8601)."
    )
    updated_since = DateTimeFilter(
        field_name="updated_at",
        lookup_expr="gte",
        help_text="Only summaries changed at or after this time (ISO 8601), to sync changes.",
    )

    class Meta:
        model = Summary
        fields = []

    def filter_person(self, queryset, name, value):
        return queryset.filter(video__in=Subquery(_video_ids_with_person(value)))

    def filter_topic(self, queryset, name, value):
        return queryset.filter(video__in=Subquery(_video_ids_with_topic(value)))


class OrderingFilter(BaseFilterBackend):
    """`?ordering=` from the view's `ordering_choices` (name -> order_by fields).

    Cursor pagination pages on the first field of the chosen ordering, so every choice
    starts with a field that is never null; the last field breaks ties.
    """

    param = "ordering"

    def get_ordering(self, request, queryset, view):
        choices = view.ordering_choices
        value = request.query_params.get(self.param, view.default_ordering)
        if value not in choices:
            raise ValidationError(
                {self.param: [f"Unknown ordering; choose one of: {', '.join(choices)}."]}
            )
        return choices[value]

    def filter_queryset(self, request, queryset, view):
        return queryset.order_by(*self.get_ordering(request, queryset, view))

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": self.param,
                "required": False,
                "in": "query",
                "description": f"Order of the results (default {view.default_ordering}).",
                "schema": {"type": "string", "enum": list(view.ordering_choices)},
            }
        ]


class SearchFilter(DRFSearchFilter):
    """`?search=` over the view's `search_fields`, at most MAX_SEARCH_WORDS words."""

    def get_search_terms(self, request):
        value = request.query_params.get(self.search_param, "")
        return search.clean_query(value).split()[:MAX_SEARCH_WORDS]


class SummarySearchFilter(BaseFilterBackend):
    """`?search=`: the live summaries that summaries.reader.search finds (full-text on PostgreSQL).

    Results keep the list's ordering; search only narrows it (drafts never match).
    """

    param = "search"

    def filter_queryset(self, request, queryset, view):
        query = request.query_params.get(self.param, "")
        if not search.clean_query(query):
            return queryset
        matches = search.search_summaries(query).order_by().values("pk")
        return queryset.filter(pk__in=Subquery(matches))

    def get_schema_operation_parameters(self, view):
        return [
            {
                "name": self.param,
                "required": False,
                "in": "query",
                "description": "Words to find in published summaries (web-search syntax).",
                "schema": {"type": "string"},
            }
        ]
