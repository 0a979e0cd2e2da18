"""Suggested chapters in the API, at /api/v1/summaries/<slug>/chapter-suggestions/: editors
read where the transcript of a summary without chapters changes subject (GET) and add the
chapters they kept, edited or not (POST).

The write calls `editing.chapter_suggestions.accept_chapter_suggestions` with the request's
user, which checks the permission, refuses a summary with chapters already and writes a
published summary's chapters to its unpublished changes, as every edit of a summary.
"""

from __future__ import annotations

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from summaries.editing import chapter_suggestions as suggesting
from summaries.editing import copies, receipts

from .conditional import check_if_match, edit_version
from .inputs import SecondsField, StrictSerializer
from .of_summary import OfSummaryViewSet, summary_url
from .permissions import can_see_unpublished
from .schema import ErrorSerializer, PublicationProblemSerializer
from .summary_views import requires

CHANGE = "summaries.change_summary"


class SuggestedChapterSerializer(serializers.Serializer):
    start = serializers.IntegerField(help_text="Seconds into the video.")
    time = serializers.CharField(help_text="The same as m:ss or h:mm:ss.")
    title = serializers.CharField(help_text="Up to three words said often there.")
    said = serializers.CharField(help_text="The first words said from there.")


class ChapterSuggestionsSerializer(serializers.Serializer):
    chapters = SuggestedChapterSerializer(
        many=True,
        help_text="In time order; empty when the summary (or its unpublished changes) has "
        "chapters already, or its video has no transcript.",
    )


class ChosenChapterInput(StrictSerializer):
    start = SecondsField(
        allow_zero=True, help_text="When the chapter starts: seconds, or m:ss / h:mm:ss."
    )
    title = serializers.CharField(max_length=suggesting.TITLE_MAX)


class ChosenChaptersInput(StrictSerializer):
    chapters = serializers.ListField(
        child=ChosenChapterInput(),
        min_length=1,
        max_length=suggesting.MAX_CHOSEN,
        help_text="The chapters to add, each a suggested one kept as it is or edited.",
    )


class AddedChapterSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="Of the summary, or of its unpublished changes.")
    position = serializers.IntegerField()
    start = serializers.IntegerField(help_text="Seconds into the video.")
    title = serializers.CharField()
    pin = serializers.CharField(help_text="The status of the chapter start's pin.")


class ChaptersAddedSerializer(serializers.Serializer):
    summary = serializers.URLField(
        help_text="What was changed: the summary, or its unpublished changes when it is published."
    )
    chapters = AddedChapterSerializer(many=True)
    problems = PublicationProblemSerializer(
        many=True,
        help_text="What in the pins keeps it from being published now (empty: nothing): "
        "each statement's part, quotation and message.",
    )


OPTIONAL_IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=False,
    description=(
        "The `ETag` or `Edit-Version` of the summary, or of its unpublished changes when it "
        "has them (412 when it was edited since). Optional: chapters are only ever added to "
        "a summary that has none."
    ),
)
POST_RESPONSES = {
    201: ChaptersAddedSerializer,
    400: OpenApiResponse(
        ErrorSerializer,
        description="Bad input, named in `fields`: `chapters[2].start` (not a time, outside "
        "the transcript or after the video's end, the same as another chapter's, nothing "
        "said before the next), `chapters[0].title` (empty, too long), `chapters` (none "
        "given, the summary has chapters already, the video has no transcript).",
    ),
}


@extend_schema(parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)])
class ChapterSuggestionViewSet(OfSummaryViewSet):
    """Suggested chapters of a summary, at /api/v1/summaries/<slug>/chapter-suggestions/."""

    serializer_class = ChapterSuggestionsSerializer  # what OPTIONS describes

    @extend_schema(
        methods=["GET"],
        responses={200: ChapterSuggestionsSerializer},
        filters=False,
        description=(
            "Where the transcript of a summary without chapters changes subject: chapter "
            "starts with a title each (editors only: 404 to others). Send the ones to keep, "
            "edited or not, with POST."
        ),
    )
    @extend_schema(
        methods=["POST"],
        request=ChosenChaptersInput,
        responses=POST_RESPONSES,
        parameters=[OPTIONAL_IF_MATCH],
        description=(
            "Add chapters to a summary that has none (editors): each starts at its `start` "
            "with its `title`, and its text is the words said until the next one, its start "
            "pinned to them. On a published summary they are added to its unpublished "
            "changes, which readers see once a reviewer publishes them. Sent again, it is "
            "refused: the summary has chapters then."
        ),
    )
    @action(
        detail=True,
        methods=["get", "post"],
        url_path="chapter-suggestions",
        url_name="detail",
        pagination_class=None,
        filter_backends=[],
    )
    @requires(CHANGE)
    def chapter_suggestions(self, request, slug=None):
        if request.method == "POST":
            return self._accept(request, slug)
        if not can_see_unpublished(request.user):
            raise NotFound("No such summary.")
        summary = get_object_or_404(self.get_queryset(), video__slug=slug)
        found = suggesting.chapter_suggestions(summary)
        return Response(
            {
                "chapters": [
                    {"start": s.start, "time": s.time, "title": s.title, "said": s.said}
                    for s in found
                ]
            }
        )

    def _accept(self, request, slug):
        payload = ChosenChaptersInput(data=request.data)
        payload.is_valid(raise_exception=True)
        chosen = [(item["start"], item["title"]) for item in payload.validated_data["chapters"]]
        # Answered before the commit: an error answer saved nothing.
        with transaction.atomic():
            summary = get_object_or_404(
                self.get_queryset().select_related("video"), video__slug=slug
            )
            edited = copies.working_copy_of(summary) or summary
            check_if_match(request, edit_version(edited), required=False)
            accepted = suggesting.accept_chapter_suggestions(
                summary=summary, user=request.user, chosen=chosen
            )
            target = accepted.summary
            if target.is_working_copy:
                target.working_copy_of = summary  # read already: no query for its video
            data = {
                "summary": summary_url(request, target),
                "chapters": [
                    {
                        "id": chapter.pk,
                        "position": chapter.position,
                        "start": chapter.start_time,
                        "title": chapter.title,
                        "pin": chapter.pin["status"] if chapter.pin else "",
                    }
                    for chapter in accepted.chapters
                ],
                "problems": [p.as_json() for p in receipts.publication_problems(target)],
            }
            response = Response(data, status=status.HTTP_201_CREATED)
            response["Edit-Version"] = edit_version(target)
            return response
