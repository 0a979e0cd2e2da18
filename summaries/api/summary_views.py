"""Summaries: read (anyone: live ones; editors: all), write whole, publish, re-check."""

from dataclasses import asdict

from django.db import transaction
from django.db.models import F, Prefetch
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.http import http_date
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from summaries import checking
from summaries.editing import derived, rules, save, workflow
from summaries.models import Appearance, Caveat, Citation, Summary

from .conditional import check_if_match, summary_tag
from .filters import OrderingFilter, SummaryFilter, SummarySearchFilter
from .inputs import KeyPhraseInput, SummaryInput
from .permissions import can_see_unpublished
from .serializers import PublishSerializer, SummarySerializer, SummaryWrittenSerializer
from .views import ApiViewSet

IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=True,
    description="The ETag of the version being changed (from a GET). 428 without it.",
)
IF_MATCH_OPTIONAL = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=False,
    description="Optional: the ETag the action expects (412 when the summary changed).",
)


def summary_details(queryset):
    """Everything a summary's representation shows, in a fixed number of queries."""
    return queryset.select_related("video", "video__channel").prefetch_related(
        Prefetch(
            "video__appearances",
            queryset=Appearance.objects.select_related("person", "organisation"),
        ),
        "video__topics",
        "key_points",
        "takeaways",
        "chapters",
        Prefetch(
            "caveats",
            queryset=Caveat.objects.annotate(
                chapter_position=F("chapter__position"),
                takeaway_position=F("takeaway__position"),
            ),
        ),
        Prefetch(
            "citations",
            queryset=Citation.objects.select_related("source").annotate(
                chapter_position=F("chapter__position"),
                key_point_position=F("key_point__position"),
                takeaway_position=F("takeaway__position"),
            ),
        ),
    )


def last_modified(summary):
    """The latest change to anything the summary's representation shows."""
    video = summary.video
    stamps = [summary.updated_at, video.updated_at, video.channel.updated_at]
    for appearance in video.appearances.all():
        stamps.append(appearance.person.updated_at)
        if appearance.organisation is not None:
            stamps.append(appearance.organisation.updated_at)
    stamps += [topic.updated_at for topic in video.topics.all()]
    stamps += [citation.source.updated_at for citation in summary.citations.all()]
    return max(stamps)


class RecheckSerializer(serializers.Serializer):
    sources = serializers.IntegerField(help_text="How many sources the summary cites.")
    queued = serializers.IntegerField(help_text="Checks queued (0 until link checking ships).")


def requires(permission):
    """Name the permission an action needs (read by permissions.ReadOrEditorWrite)."""

    def decorate(view_method):
        view_method.required_permission = permission
        return view_method

    return decorate


@extend_schema(parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)])
class SummaryViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    ApiViewSet,
):
    """Summaries with their parts and cited sources. Addressed by their video's slug."""

    serializer_class = SummarySerializer
    lookup_field = "video__slug"
    lookup_url_kwarg = "slug"
    filter_backends = [DjangoFilterBackend, SummarySearchFilter, OrderingFilter]
    filterset_class = SummaryFilter
    ordering_choices = {
        "-publish_at": ("-publish_order", "-pk"),
        "publish_at": ("publish_order", "pk"),
        "-updated_at": ("-updated_at", "-pk"),
        "updated_at": ("updated_at", "pk"),
        "-created_at": ("-created_at", "-pk"),
        "created_at": ("created_at", "pk"),
    }
    default_ordering = "-publish_at"

    def get_queryset(self):
        if can_see_unpublished(self.request.user):
            # Drafts have no publish time; they sort by when they were created.
            summaries = Summary.objects.annotate(publish_order=Coalesce("publish_at", "created_at"))
        else:
            summaries = Summary.objects.published().annotate(publish_order=F("publish_at"))
        return summary_details(summaries)

    # --- Reading -----------------------------------------------------------------------

    def _respond(self, summary, status_code=status.HTTP_200_OK, headers=None):
        """The summary after a write: as the detail endpoint shows it (with its ETag and
        Last-Modified), plus the editor's warnings, as the admin shows them."""
        fresh = get_object_or_404(summary_details(Summary.objects.all()), pk=summary.pk)
        data = self.get_serializer(fresh).data
        warnings = [asdict(warning) for warning in rules.summary_warnings(summary=fresh)]
        response = Response({**data, "warnings": warnings}, status=status_code, headers=headers)
        response["ETag"] = summary_tag(fresh, data)
        response["Last-Modified"] = http_date(last_modified(fresh).timestamp())
        return response

    def retrieve(self, request, *args, **kwargs):
        summary = self.get_object()
        data = self.get_serializer(summary).data
        response = Response(data)
        response["ETag"] = summary_tag(summary, data)
        response.last_modified = last_modified(summary)
        return response

    # --- Writing -----------------------------------------------------------------------

    def _locked(self):
        """The summary addressed by the URL, locked until the transaction ends."""
        summaries = Summary.objects.select_for_update(of=("self",)).select_related("video")
        return get_object_or_404(summaries, video__slug=self.kwargs["slug"])

    def _current_tag(self, summary):
        fresh = summary_details(Summary.objects.filter(pk=summary.pk)).get()
        return summary_tag(fresh, self.get_serializer(fresh).data)

    @extend_schema(request=SummaryInput, responses={201: SummaryWrittenSerializer})
    def create(self, request, *args, **kwargs):
        """Create a draft summary, its video and all its parts in one request."""
        payload = SummaryInput(data=request.data, context=self.get_serializer_context())
        payload.is_valid(raise_exception=True)
        summary = save.create_summary(data=payload.validated_data, user=request.user)
        url = reverse("api:summary-detail", kwargs={"slug": summary.video.slug})
        return self._respond(
            summary, status.HTTP_201_CREATED, headers={"Location": request.build_absolute_uri(url)}
        )

    def _update(self, request, *, partial):
        with transaction.atomic():
            summary = self._locked()
            check_if_match(request, self._current_tag(summary), required=True)
            payload = SummaryInput(
                data=request.data, partial_update=partial, context=self.get_serializer_context()
            )
            payload.is_valid(raise_exception=True)
            summary = save.update_summary(
                summary=summary, data=payload.validated_data, user=request.user, partial=partial
            )
        return self._respond(summary)

    @extend_schema(request=SummaryInput, responses=SummaryWrittenSerializer, parameters=[IF_MATCH])
    def update(self, request, *args, **kwargs):
        """Replace the whole summary: lists left out become empty."""
        return self._update(request, partial=False)

    @extend_schema(request=SummaryInput, responses=SummaryWrittenSerializer, parameters=[IF_MATCH])
    def partial_update(self, request, *args, **kwargs):
        """Replace only the fields sent (a list sent replaces that whole list)."""
        return self._update(request, partial=True)

    # --- Workflow ----------------------------------------------------------------------

    def _workflow(self, request, service, **kwargs):
        with transaction.atomic():
            summary = self._locked()
            check_if_match(request, self._current_tag(summary), required=False)
            service(summary=summary, user=request.user, **kwargs)
        return self._respond(summary)

    @extend_schema(
        request=PublishSerializer,
        responses=SummaryWrittenSerializer,
        parameters=[IF_MATCH_OPTIONAL],
    )
    @action(detail=True, methods=["post"])
    @requires("summaries.publish_summary")
    def publish(self, request, slug=None):
        """Publish now, or schedule with a future `publish_at`."""
        payload = PublishSerializer(data=request.data)
        payload.is_valid(raise_exception=True)
        at = payload.validated_data.get("publish_at")
        return self._workflow(request, workflow.publish_summary, at=at)

    @extend_schema(request=None, responses=SummaryWrittenSerializer, parameters=[IF_MATCH_OPTIONAL])
    @action(detail=True, methods=["post"])
    @requires("summaries.publish_summary")
    def unpublish(self, request, slug=None):
        """Take a live or scheduled summary back to draft."""
        return self._workflow(request, workflow.unpublish_summary)

    @extend_schema(request=None, responses=SummaryWrittenSerializer, parameters=[IF_MATCH_OPTIONAL])
    @action(detail=True, methods=["post"], url_path="submit-for-review")
    @requires("summaries.change_summary")
    def submit_for_review(self, request, slug=None):
        """Mark a draft as ready for review (a published summary must be unpublished first)."""
        return self._workflow(request, workflow.submit_for_review)

    @extend_schema(
        request=None,
        responses={202: OpenApiResponse(RecheckSerializer, description="Accepted.")},
    )
    @action(detail=True, methods=["post"], url_path="recheck-sources")
    @requires("summaries.change_summary")
    def recheck_sources(self, request, slug=None):
        """Ask for the summary's cited sources to be checked again (answers 202)."""
        summary = get_object_or_404(Summary.objects.all(), video__slug=slug)
        sources, queued = checking.request_summary_checks(summary=summary, user=request.user)
        return Response(
            {"sources": len(sources), "queued": len(queued)}, status=status.HTTP_202_ACCEPTED
        )

    # --- Citations ---------------------------------------------------------------------

    @extend_schema(
        request=KeyPhraseInput,
        responses=SummaryWrittenSerializer,
        parameters=[
            IF_MATCH,
            OpenApiParameter(
                "citation_id",
                int,
                OpenApiParameter.PATH,
                description="The citation's `id` (in the summary's `citations`).",
            ),
        ],
    )
    @action(detail=True, methods=["patch"], url_path=r"citations/(?P<citation_id>[0-9]+)")
    @requires("summaries.change_summary")
    def citation(self, request, slug=None, citation_id=None):
        """Set a citation's key phrase: what its source page must still say.

        An empty phrase goes back to the one extracted from the claim; an edited phrase is
        kept when the text is edited later; a body without `key_phrase` changes nothing.
        Answers with the summary, as other writes do.
        """
        with transaction.atomic():
            summary = self._locked()
            citations = Citation.objects.select_related(
                "source", "chapter", "key_point", "takeaway"
            )
            citation = get_object_or_404(citations, pk=citation_id, summary=summary)
            check_if_match(request, self._current_tag(summary), required=True)
            payload = KeyPhraseInput(data=request.data, partial=True)
            payload.is_valid(raise_exception=True)
            if "key_phrase" in payload.validated_data:  # a PATCH without it changes nothing
                citation.summary = summary
                derived.set_key_phrase(
                    citation=citation,
                    phrase=payload.validated_data["key_phrase"],
                    user=request.user,
                )
        return self._respond(summary)
