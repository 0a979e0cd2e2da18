"""A summary's published versions in the API, at /api/v1/summaries/<slug>/versions/: the
addresses of its Memento TimeGate and TimeMap and each version readers saw, with its time
and address (reader/memento.py). Only a live summary has them; anything else is a 404."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from summaries.reader import memento

from .of_summary import OfSummaryViewSet


class PublishedVersionSerializer(serializers.Serializer):
    datetime = serializers.DateTimeField(help_text="When this version went live (UTC).")
    url = serializers.URLField(help_text="The version as readers saw it (a Memento).")


class PublishedVersionsSerializer(serializers.Serializer):
    original = serializers.URLField(
        help_text="The summary page: the Original Resource, and its own TimeGate "
        "(send Accept-Datetime to be redirected to the version live then)."
    )
    timemap = serializers.URLField(help_text="The TimeMap, in application/link-format.")
    versions = PublishedVersionSerializer(
        many=True, help_text="Every published version, oldest first."
    )


@extend_schema(parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)])
class VersionViewSet(OfSummaryViewSet):
    """A live summary's published versions, at /api/v1/summaries/<slug>/versions/."""

    serializer_class = PublishedVersionsSerializer

    @extend_schema(
        responses={
            200: PublishedVersionsSerializer,
            404: OpenApiResponse(description="No live summary at this address."),
        },
        description=(
            "The versions of a live summary readers saw (Memento, RFC 7089), oldest first: "
            "never drafts, unpublished changes or a scheduled time not reached yet. Also "
            "the addresses of its TimeGate and TimeMap."
        ),
    )
    @action(detail=True, methods=["get"], url_path="versions", url_name="list")
    def versions(self, request, slug=None):
        times = memento.live_times_at(slug)
        if not times:
            raise Http404("No live summary at this address.")
        data = {
            "original": memento.original_url(request, slug),
            "timemap": memento.timemap_url(request, slug),
            "versions": [
                {"datetime": moment, "url": memento.memento_url(request, slug, moment)}
                for moment in times
            ],
        }
        return Response(PublishedVersionsSerializer(data).data)
