"""Query parameters of the lists: django-filter sets, a whitelisted ordering, search."""

import datetime

from django import forms
from django.db.models import Subquery
from django_filters import fields as filter_fields
from django_filters import rest_framework as filters
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import extend_schema_field
from rest_framework.exceptions import ValidationError
from rest_framework.filters import BaseFilterBackend
from rest_framework.filters import SearchFilter as DRFSearchFilter

from summaries.models import LANGUAGE_CHOICES, Appearance, Summary, Video
from summaries.reader import search, search_filters

SLUG_MAX = search_filters.SLUG_MAX
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


class DayOrTimeField(forms.Field):
    """A day (YYYY-MM-DD, as the search page takes) or an ISO 8601 time (then in UTC)."""

    def to_python(self, value):
        if value in self.empty_values:
            return None
        try:
            return datetime.datetime.strptime(value, "%Y-%m-%d").date()
        except (TypeError, ValueError):
            pass
        try:
            return UtcDateTimeField().to_python(value)
        except forms.ValidationError:
            if ":" in str(value):  # meant as a time: say what is wrong with it
                raise
            raise forms.ValidationError(
                search_filters.DATE_ERROR.removesuffix(".") + " (or an ISO 8601 time).",
                code="invalid",
            ) from None


class PublishedFilter(filters.DateFilter):
    """The search page's date filter (a day bounds the video's publication day) that also
    takes a time, which bounds the summary's publish time: what this list's dates meant
    before it shared the search page's filters, so clients that send times get what they
    did. (A bare day used to mean midnight UTC of the publish time; it now means the
    video's day, as on the search page.)"""

    field_class = DayOrTimeField

    def filter(self, qs, value):
        if isinstance(value, datetime.datetime):
            return qs.filter(**{f"publish_at__{self.lookup_expr}": value})
        return super().filter(qs, value)


def _published(name: str, kind: str) -> PublishedFilter:
    """The search page's filter `name`, taking a time too."""
    shared = search_filters.SearchFilter.base_filters[name]
    help_text = (
        f"{shared.extra['help_text']} A time (ISO 8601) instead means summaries "
        f"published at or {kind} that time."
    )
    day_or_time = {
        "oneOf": [{"type": "string", "format": "date"}, {"type": "string", "format": "date-time"}],
        "description": help_text,  # the schema given here replaces the one from help_text
    }
    published = PublishedFilter(
        field_name=shared.field_name,
        lookup_expr=shared.lookup_expr,
        label=shared.label,
        help_text=help_text,
    )
    return extend_schema_field(day_or_time)(published)


class SummaryFilter(search_filters.SearchFilter):
    """The search page's filters (channel, person, topic, language, published_after,
    published_before: summaries.reader.search_filters), so each means the same here and
    there, and the API's own: status and updated_since.

    Channel, person and topic take any slug (one naming nothing finds nothing: editors
    also list drafts, whose channels the search page does not offer); a bad value, or an
    end before the start, answers 400 naming the field.
    """

    status = filters.ChoiceFilter(
        field_name="status",
        choices=Summary.Status.choices,
        help_text="Editors only see other states than published.",
    )
    published_after = _published("published_after", "after")
    published_before = _published("published_before", "before")
    updated_since = DateTimeFilter(
        field_name="updated_at",
        lookup_expr="gte",
        help_text="Only summaries changed at or after this time (ISO 8601), to sync changes.",
    )


class FilterBackend(DjangoFilterBackend):
    """django-filter's backend, which builds no filter set (its filters deep-copied, a form
    built and cleaned: about 2 ms a request) for a request that names none of its
    filters: a filter given no value leaves the list as it is."""

    def filter_queryset(self, request, queryset, view):
        filterset_class = self.get_filterset_class(view, queryset)
        if filterset_class is not None and not any(
            name in request.query_params for name in filterset_class.base_filters
        ):
            return queryset
        return super().filter_queryset(request, queryset, view)


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
