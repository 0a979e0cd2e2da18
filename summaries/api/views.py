"""The catalogue: channels, people, topics and organisations (read by anyone, created and
changed by editors; never deleted through the API) and videos (read only)."""

from django.db import transaction
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework import serializers as drf_serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from summaries.editing import catalogue
from summaries.models import Channel, Organisation, Person, Topic, Video
from summaries.reader.absolute import site_url
from summaries.reader.related import STORED_COUNT, related_for_page

from . import catalogue_inputs, catalogue_serializers, representation
from .conditional import ConditionalResponseMixin, check_if_match, entity_tag
from .errors import PreconditionFailed, PreconditionRequired
from .filters import DateTimeFilter, FilterBackend, OrderingFilter, SearchFilter, VideoFilter
from .permissions import can_see_unpublished

SLUG_PATTERN = r"[-a-zA-Z0-9_]+"
RELATED_DEFAULT, RELATED_MAX = 10, STORED_COUNT


class ApiViewSet(ConditionalResponseMixin, viewsets.GenericViewSet):
    """Looked up by slug; filtered, searched, ordered and cursor-paginated."""

    lookup_field = "slug"
    lookup_value_regex = SLUG_PATTERN
    filter_backends = [FilterBackend, SearchFilter, OrderingFilter]


def _name_orderings():
    return {
        "name": ("name", "pk"),
        "-name": ("-name", "-pk"),
        "updated_at": ("updated_at", "pk"),
        "-updated_at": ("-updated_at", "-pk"),
    }


def _updated_since_filter(model_class):
    class UpdatedSinceFilter(filters.FilterSet):
        updated_since = DateTimeFilter(
            field_name="updated_at",
            lookup_expr="gte",
            help_text="Only rows changed at or after this time (ISO 8601).",
        )

        class Meta:
            model = model_class
            fields = []

    UpdatedSinceFilter.__name__ = f"{model_class.__name__}Filter"
    return UpdatedSinceFilter


CATALOGUE_IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=True,
    description="The ETag of the version being changed (from a GET). 428 without it.",
)


PRECONDITION_REQUIRED = "Send If-Match with the ETag of the version you edited (GET it to get it)."
PRECONDITION_FAILED = (
    "It changed since you read it (If-Match does not match its ETag). "
    "Nothing was saved: GET it again and reapply your edit."
)


class CatalogueWriteMixin:
    """POST creates, PUT replaces, PATCH changes the fields sent; each write is a revision.

    Updates need If-Match with the object's current ETag (the one a GET answers):
    missing -> 428, another version -> 412, and nothing is written.
    """

    input_class = None

    def _input(self, request, instance=None, *, partial=False):
        payload = self.input_class(
            instance, data=request.data, partial=partial, context=self.get_serializer_context()
        )
        payload.is_valid(raise_exception=True)
        return payload.to_model_values(payload.validated_data)

    def _respond(self, instance, status_code=status.HTTP_200_OK, headers=None):
        data = self.get_serializer(instance).data
        response = Response(data, status=status_code, headers=headers)
        response["ETag"] = entity_tag(data)
        return response

    @staticmethod
    def _save(instance, values: dict, *, user, comment: str):
        return catalogue.save_entry(instance=instance, values=values, user=user, comment=comment)

    def create(self, request, *args, **kwargs):
        values = self._input(request)
        with transaction.atomic():
            instance = self._save(
                self.get_queryset().model(),
                values,
                user=request.user,
                comment="Created through the API.",
            )
        url = reverse(f"api:{self.basename}-detail", kwargs={"slug": instance.slug})
        return self._respond(instance, status.HTTP_201_CREATED, headers={"Location": site_url(url)})

    def _update(self, request, *, partial):
        with transaction.atomic():
            instance = get_object_or_404(
                self.get_queryset().select_for_update(), slug=self.kwargs["slug"]
            )
            current = entity_tag(self.get_serializer(instance).data)
            try:
                check_if_match(request, current, required=True)
            except PreconditionRequired:
                raise PreconditionRequired(PRECONDITION_REQUIRED) from None
            except PreconditionFailed:
                raise PreconditionFailed(PRECONDITION_FAILED) from None
            values = self._input(request, instance, partial=partial)
            changed = ", ".join(values) or "nothing"
            self._save(
                instance,
                values,
                user=request.user,
                comment=f"Changed through the API ({changed}).",
            )
        return self._respond(instance)

    def update(self, request, *args, **kwargs):
        return self._update(request, partial=False)

    def partial_update(self, request, *args, **kwargs):
        return self._update(request, partial=True)


def catalogue_writes(input_class, output_class, kind):
    """The schema of a catalogue view's create, update and partial_update."""
    return extend_schema_view(
        create=extend_schema(
            request=input_class,
            responses={201: output_class},
            description=f"Create a {kind} (editors).",
        ),
        update=extend_schema(
            request=input_class,
            parameters=[CATALOGUE_IF_MATCH],
            description=f"Replace the {kind}: optional fields left out become empty.",
        ),
        partial_update=extend_schema(
            request=input_class,
            parameters=[CATALOGUE_IF_MATCH],
            description="Change only the fields sent.",
        ),
    )


class CatalogViewSet(
    CatalogueWriteMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    ApiViewSet,
):
    search_fields = ["name"]
    ordering_choices = _name_orderings()
    default_ordering = "name"


@catalogue_writes(catalogue_inputs.ChannelInput, catalogue_serializers.ChannelSerializer, "channel")
class ChannelViewSet(CatalogViewSet):
    """Channels (every channel is public; its videos follow their summaries' state)."""

    queryset = Channel.objects.all()
    serializer_class = catalogue_serializers.ChannelSerializer
    input_class = catalogue_inputs.ChannelInput
    filterset_class = _updated_since_filter(Channel)


@catalogue_writes(catalogue_inputs.PersonInput, catalogue_serializers.PersonSerializer, "person")
class PersonViewSet(CatalogViewSet):
    """People who appear in videos."""

    queryset = Person.objects.all()
    serializer_class = catalogue_serializers.PersonSerializer
    input_class = catalogue_inputs.PersonInput
    filterset_class = _updated_since_filter(Person)


@catalogue_writes(catalogue_inputs.TopicInput, catalogue_serializers.TopicSerializer, "topic")
class TopicViewSet(CatalogViewSet):
    queryset = Topic.objects.all()
    serializer_class = catalogue_serializers.TopicSerializer
    input_class = catalogue_inputs.TopicInput
    filterset_class = _updated_since_filter(Topic)


@catalogue_writes(
    catalogue_inputs.OrganisationInput, catalogue_serializers.OrganisationSerializer, "organisation"
)
class OrganisationViewSet(CatalogViewSet):
    """Organisations people speak for, with the web domains they publish on."""

    queryset = Organisation.objects.all()
    serializer_class = catalogue_serializers.OrganisationSerializer
    input_class = catalogue_inputs.OrganisationInput
    filterset_class = _updated_since_filter(Organisation)


class RelatedQuery(drf_serializers.Serializer):
    limit = drf_serializers.IntegerField(
        min_value=1, max_value=RELATED_MAX, default=RELATED_DEFAULT, required=False
    )


class VideoViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Videos with a live summary (editors: every video), newest first."""

    serializer_class = catalogue_serializers.VideoSerializer
    filterset_class = VideoFilter
    search_fields = ["title", "blurb"]
    ordering_choices = {
        "-published_on": ("-published_on", "-pk"),
        "published_on": ("published_on", "pk"),
        "-updated_at": ("-updated_at", "-pk"),
        "updated_at": ("updated_at", "pk"),
        "title": ("title", "pk"),
        "-title": ("-title", "-pk"),
    }
    default_ordering = "-published_on"

    def get_queryset(self):
        videos = self._videos()
        if self.action == "related":
            return videos
        return videos.with_listing_data()

    def _videos(self):
        videos = Video.objects.all()
        if not can_see_unpublished(self.request.user):
            videos = videos.published()
        return videos

    def list(self, request, *args, **kwargs):
        """Videos with a live summary (editors: every video), newest first."""
        # Built from plain rows as VideoSerializer shows them (representation.py).
        fields = ("id", *representation.VIDEO_COLUMNS)
        rows = self.paginate_queryset(self.filter_queryset(self._videos()).values(*fields)) or []
        return self.get_paginated_response(representation.video_items(rows, request))

    @extend_schema(
        parameters=[OpenApiParameter("limit", int, description=f"At most {RELATED_MAX}.")],
        responses=catalogue_serializers.RelatedVideoSerializer(many=True),
        filters=False,
    )
    @action(detail=True, pagination_class=None, filter_backends=[])
    def related(self, request, slug=None):
        """Live videos of any channel related to this one, best first, with the reasons."""
        video = self.get_object()
        query = RelatedQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        related = related_for_page(video, limit=query.validated_data["limit"])
        serializer = catalogue_serializers.RelatedVideoSerializer(
            related, many=True, context=self.get_serializer_context()
        )
        return Response(serializer.data)
