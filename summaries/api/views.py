"""Read endpoints for the catalogue: channels, people, topics, organisations and videos."""

from django_filters import rest_framework as filters
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, viewsets
from rest_framework import serializers as drf_serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from summaries.models import Channel, Organisation, Person, Topic, Video
from summaries.related import related_videos

from . import serializers
from .conditional import ConditionalResponseMixin
from .filters import DateTimeFilter, OrderingFilter, SearchFilter, VideoFilter
from .permissions import can_see_unpublished

SLUG_PATTERN = r"[-a-zA-Z0-9_]+"
RELATED_DEFAULT, RELATED_MAX = 10, 20


class ApiViewSet(ConditionalResponseMixin, viewsets.GenericViewSet):
    """Looked up by slug; filtered, searched, ordered and cursor-paginated."""

    lookup_field = "slug"
    lookup_value_regex = SLUG_PATTERN
    filter_backends = [DjangoFilterBackend, SearchFilter, OrderingFilter]


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


class CatalogViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    search_fields = ["name"]
    ordering_choices = _name_orderings()
    default_ordering = "name"


class ChannelViewSet(CatalogViewSet):
    """Channels (every channel is public; its videos follow their summaries' state)."""

    queryset = Channel.objects.all()
    serializer_class = serializers.ChannelSerializer
    filterset_class = _updated_since_filter(Channel)


class PersonViewSet(CatalogViewSet):
    """People who appear in videos."""

    queryset = Person.objects.all()
    serializer_class = serializers.PersonSerializer
    filterset_class = _updated_since_filter(Person)


class TopicViewSet(CatalogViewSet):
    queryset = Topic.objects.all()
    serializer_class = serializers.TopicSerializer
    filterset_class = _updated_since_filter(Topic)


class OrganisationViewSet(CatalogViewSet):
    """Organisations people speak for, with the web domains they publish on."""

    queryset = Organisation.objects.all()
    serializer_class = serializers.OrganisationSerializer
    filterset_class = _updated_since_filter(Organisation)


class RelatedQuery(drf_serializers.Serializer):
    limit = drf_serializers.IntegerField(
        min_value=1, max_value=RELATED_MAX, default=RELATED_DEFAULT, required=False
    )


class VideoViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ApiViewSet):
    """Videos with a live summary (editors: every video), newest first."""

    serializer_class = serializers.VideoSerializer
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
        videos = Video.objects.all()
        if not can_see_unpublished(self.request.user):
            videos = videos.published()
        if self.action == "related":
            return videos
        return videos.with_listing_data()

    @extend_schema(
        parameters=[OpenApiParameter("limit", int, description=f"At most {RELATED_MAX}.")],
        responses=serializers.RelatedVideoSerializer(many=True),
        filters=False,
    )
    @action(detail=True, pagination_class=None, filter_backends=[])
    def related(self, request, slug=None):
        """Live videos of any channel related to this one, best first, with the reasons."""
        video = self.get_object()
        query = RelatedQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        related = related_videos(video, limit=query.validated_data["limit"])
        serializer = serializers.RelatedVideoSerializer(
            related, many=True, context=self.get_serializer_context()
        )
        return Response(serializer.data)
