"""Updates and corrections in the API, at /api/v1/summaries/<slug>/corrections/: anyone
reads those of a live summary; staff who may change summaries also read typo fixes; a
reviewer withdraws one with a note (POST …/corrections/<id>/withdraw/).

The write calls `editing.corrections.withdraw_correction` with the request's user, which
checks the publish permission. Nothing here deletes a correction: there is no DELETE.
"""

from __future__ import annotations

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from summaries.editing import corrections, gate
from summaries.models import Correction, Summary
from summaries.models.corrections import NOTE_CHARS

from .correction_serializers import CorrectionSerializer, corrections_shown_to
from .of_summary import OfSummaryViewSet
from .permissions import can_see_unpublished
from .schema import ErrorSerializer
from .summary_views import requires


class WithdrawInput(serializers.Serializer):
    note = serializers.CharField(
        max_length=NOTE_CHARS, help_text="Why it is withdrawn (shown to readers)."
    )


@extend_schema(parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)])
class CorrectionViewSet(OfSummaryViewSet):
    """A summary's updates and corrections, at /api/v1/summaries/<slug>/corrections/."""

    serializer_class = CorrectionSerializer

    def get_queryset(self):
        summaries = Summary.objects.originals()
        if not can_see_unpublished(self.request.user):
            summaries = summaries.published()
        return summaries

    @extend_schema(
        responses={200: CorrectionSerializer(many=True)},
        description=(
            "The summary's updates and corrections, newest first (404 when it is not "
            "live, for anyone who cannot see unpublished work). Typo fixes are listed "
            "only to staff who may change summaries."
        ),
    )
    @action(detail=True, methods=["get"], url_path="corrections", url_name="list")
    def corrections(self, request, slug=None):
        summary = get_object_or_404(self.get_queryset(), video__slug=slug)
        found = corrections_shown_to(request.user, summary)
        return Response(CorrectionSerializer(found, many=True, context={"request": request}).data)

    @extend_schema(
        request=WithdrawInput,
        responses={
            200: CorrectionSerializer,
            400: OpenApiResponse(
                ErrorSerializer,
                description="`note` missing or too long; a typo fix or one withdrawn already.",
            ),
            404: OpenApiResponse(description="No such summary or correction."),
        },
        parameters=[OpenApiParameter("correction_id", int, OpenApiParameter.PATH)],
        description=(
            "Withdraw an update or correction (reviewers): it stays, marked withdrawn with "
            "the date and `note`, and readers see that."
        ),
    )
    @action(
        detail=True,
        methods=["post"],
        url_path=r"corrections/(?P<correction_id>[0-9]+)/withdraw",
        url_name="withdraw",
    )
    @requires(gate.PUBLISH)
    def withdraw(self, request, slug=None, correction_id=None):
        payload = WithdrawInput(data=request.data)
        payload.is_valid(raise_exception=True)
        with transaction.atomic():  # answered before the commit: an error saves nothing
            summary = get_object_or_404(Summary.objects.originals(), video__slug=slug)
            correction = get_object_or_404(Correction, summary=summary, pk=correction_id)
            withdrawn = corrections.withdraw_correction(
                correction=correction, user=request.user, note=payload.validated_data["note"]
            )
            data = CorrectionSerializer(withdrawn, context={"request": request}).data
            return Response(data)
