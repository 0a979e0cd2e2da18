"""The pins of a summary's statements in the API, at
/api/v1/summaries/<slug>/<kind>/<id>/pin/: editors set, move, reject and approve them and
read where the transcript best says a part, reviewers override them.

Every write calls the services of `summaries.editing.pinning`, which check the user's
permission and keep the rules; on a published summary a pin is changed in its unpublished
changes (a working copy, made on the first write), as every edit of a summary is.
"""

from __future__ import annotations

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from summaries.editing import copies, pinning, receipts
from summaries.models import Caveat, Chapter, KeyPoint, Summary, Takeaway

from .conditional import check_if_match, edit_version
from .inputs import StrictSerializer
from .of_summary import OfSummaryViewSet, summary_url
from .permissions import can_see_unpublished
from .pin_serializers import PinSerializer, pin_representation
from .pin_serializers import quote_pin_representation as quote_representation
from .schema import PublicationProblemSerializer
from .summary_views import requires

CHANGE = "summaries.change_summary"
PUBLISH = "summaries.publish_summary"

PART_KINDS = {
    "key-points": KeyPoint,
    "takeaways": Takeaway,
    "chapters": Chapter,
    "caveats": Caveat,
}
PART_TYPES = {KeyPoint: "key_point", Takeaway: "takeaway", Chapter: "chapter", Caveat: "caveat"}
PART_PATH = r"(?P<kind>key-points|takeaways|chapters|caveats)/(?P<part_id>[0-9]+)/pin"
MAX_SUGGESTIONS = 10

QUOTE_HELP = (
    "A quotation of a chapter's body: its `index` in the chapter's `quote_pins` "
    "(?expand=pins). Left out: the part's own pin."
)


class PinInput(StrictSerializer):
    first = serializers.IntegerField(
        min_value=0, help_text="The span's first word: its index in the transcript's words."
    )
    end = serializers.IntegerField(min_value=1, help_text="The index after its last word.")
    quote = serializers.IntegerField(
        min_value=0, required=False, allow_null=True, help_text=QUOTE_HELP
    )

    def validate(self, attrs):
        if attrs["end"] <= attrs["first"]:
            raise serializers.ValidationError({"end": ["end must be greater than first."]})
        return attrs


class ApproveInput(StrictSerializer):
    quote = serializers.IntegerField(
        min_value=0, required=False, allow_null=True, help_text=QUOTE_HELP
    )


class OverrideInput(ApproveInput):
    note = serializers.CharField(
        max_length=2000,
        help_text="Why the statement may be published as it is (History shows it).",
    )


class SuggestionQuery(serializers.Serializer):
    limit = serializers.IntegerField(
        min_value=1, max_value=MAX_SUGGESTIONS, default=3, required=False
    )


class PartRefSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=list(PART_TYPES.values()))
    id = serializers.IntegerField(
        help_text="The part's id where it was changed: in the unpublished changes of a "
        "published summary."
    )
    position = serializers.IntegerField()
    text = serializers.CharField(help_text="The part, shortened.")


class PinWrittenSerializer(serializers.Serializer):
    summary = serializers.URLField(
        help_text="What was changed: the summary, or its unpublished changes when it is published."
    )
    part = PartRefSerializer()
    quote = serializers.IntegerField(allow_null=True, help_text="The quotation's index, or null.")
    pin = PinSerializer(
        allow_null=True,
        help_text="The pin as verified now (a quotation's has `index`, `quote` and "
        "`speaker` too); null once rejected.",
    )
    problems = PublicationProblemSerializer(
        many=True,
        help_text="What in the pins keeps it from being published now (empty: nothing): "
        "each statement's part, quotation and message.",
    )


class SuggestionSerializer(serializers.Serializer):
    first = serializers.IntegerField()
    end = serializers.IntegerField()
    start = serializers.FloatField()
    stop = serializers.FloatField()
    score = serializers.FloatField(help_text="How well the words match, 0 to 100.")
    words = serializers.CharField(help_text="What the transcript says there.")


PIN_PARAMETERS = [
    OpenApiParameter("slug", str, OpenApiParameter.PATH),
    OpenApiParameter(
        "kind",
        str,
        OpenApiParameter.PATH,
        enum=list(PART_KINDS),
        description="The kind of part.",
    ),
    OpenApiParameter(
        "part_id",
        int,
        OpenApiParameter.PATH,
        description="The part's `id`: of the summary, or of its unpublished changes.",
    ),
]
PIN_IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    required=True,
    description=(
        "The `ETag` or `Edit-Version` of the summary, or of its unpublished changes when it "
        "has them: a pin is set for the statement as it was read (428 without it, 412 "
        "when the summary was edited since). A pin write itself does not move the edit "
        "version."
    ),
)
PIN_WRITTEN = {200: PinWrittenSerializer}


@extend_schema(parameters=PIN_PARAMETERS)
class PinViewSet(OfSummaryViewSet):
    """The pin of a summary's part, at /api/v1/summaries/<slug>/<kind>/<id>/pin/."""

    serializer_class = PinWrittenSerializer  # what OPTIONS describes

    @extend_schema(
        methods=["PUT"],
        request=PinInput,
        responses=PIN_WRITTEN,
        parameters=[PIN_IF_MATCH],
        description=(
            "Pin the part (or a quotation of a chapter's body, `quote`) to the words "
            "`first`..`end` of the transcript: accept a suggestion or move the pin. The "
            "answer has the verdict. An approval or override does not carry over."
        ),
    )
    @extend_schema(
        methods=["DELETE"],
        request=None,
        responses=PIN_WRITTEN,
        parameters=[PIN_IF_MATCH],
        description="Reject the part's pin: the statement is no longer pinned.",
    )
    @action(detail=True, methods=["put", "delete"], url_path=PART_PATH, url_name="detail")
    @requires(CHANGE)
    def pin(self, request, slug=None, kind=None, part_id=None):
        if request.method == "DELETE":
            return self._write(request, kind, part_id, quote=None, change=_reject)
        payload = PinInput(data=request.data)
        payload.is_valid(raise_exception=True)
        values = payload.validated_data
        return self._write(
            request, kind, part_id, quote=values.get("quote"), change=_pinned(values)
        )

    @extend_schema(
        request=ApproveInput,
        responses=PIN_WRITTEN,
        parameters=[PIN_IF_MATCH],
        description="Approve a paraphrase: it says what the transcript says (editors).",
    )
    @action(detail=True, methods=["post"], url_path=PART_PATH + "/approve", url_name="approve")
    @requires(CHANGE)
    def approve(self, request, slug=None, kind=None, part_id=None):
        payload = ApproveInput(data=request.data)
        payload.is_valid(raise_exception=True)
        quote = payload.validated_data.get("quote")
        return self._write(request, kind, part_id, quote=quote, change=_approved)

    @extend_schema(
        request=OverrideInput,
        responses=PIN_WRITTEN,
        parameters=[PIN_IF_MATCH],
        description=(
            "Let a pin that keeps the summary from being published (not found, "
            "contradicted, a quotation's unapproved paraphrase) through, with a note "
            "(reviewers only)."
        ),
    )
    @action(detail=True, methods=["post"], url_path=PART_PATH + "/override", url_name="override")
    @requires(PUBLISH)
    def override(self, request, slug=None, kind=None, part_id=None):
        payload = OverrideInput(data=request.data)
        payload.is_valid(raise_exception=True)
        values = payload.validated_data
        return self._write(
            request, kind, part_id, quote=values.get("quote"), change=_overridden(values["note"])
        )

    @extend_schema(
        parameters=[SuggestionQuery],
        responses=SuggestionSerializer(many=True),
        filters=False,
        description=(
            "Where the transcript best says what the part says, best first (editors only: "
            "404 to others). Send one's `first` and `end` to pin the part there."
        ),
    )
    @action(
        detail=True,
        methods=["get"],
        url_path=PART_PATH + "/suggestions",
        url_name="suggestions",
        pagination_class=None,
        filter_backends=[],
    )
    def suggestions(self, request, slug=None, kind=None, part_id=None):
        if not can_see_unpublished(request.user):
            raise NotFound("No such summary.")
        query = SuggestionQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        summary = get_object_or_404(Summary.objects.originals(), video__slug=slug)
        edited = copies.working_copy_of(summary) or summary
        model = PART_KINDS[kind]
        part = _part_in(model, edited, int(part_id))
        spans = pinning.suggestions(summary=edited, part=part, limit=query.validated_data["limit"])
        words = _words_of(edited)
        found = [
            {
                "first": span.first_word,
                "end": span.end_word,
                "start": span.start,
                "stop": span.end,
                "score": span.score,
                "words": " ".join(w.text for w in words[span.first_word : span.end_word]),
            }
            for span in spans
        ]
        return Response(found)

    def _write(self, request, kind, part_id, *, quote, change):
        """Change the pin of a part of the summary addressed by the URL (of its
        unpublished changes when it is published, made now if needed), once If-Match
        names the version read. Answered before the commit: an error saved nothing."""
        with transaction.atomic():
            summary = get_object_or_404(
                Summary.objects.select_for_update(of=("self",)).select_related("video"),
                video__slug=self.kwargs["slug"],
            )
            edited = copies.working_copy_of(summary) or summary
            check_if_match(request, edit_version(edited), required=True)
            model = PART_KINDS[kind]
            part = _part_in(model, edited, int(part_id))
            target, ids, _made = copies.edit_target(summary=summary, user=request.user)
            if target.pk != edited.pk:  # the changes were made now: the copy of the part
                part = model._default_manager.get(pk=ids[(model, part.pk)])
            _check_quote(part, quote)
            pin = change(target, part, quote, request.user)
            return self._answer(request, target, summary, part, quote, pin)

    def _answer(self, request, target, summary, part, quote, pin):
        context = {"pin_editor": True}
        shown = None
        if pin is not None and quote is not None:
            stored = part.quote_pins[quote]  # with its quotation's text and speaker
            shown = quote_representation(quote, stored, context=context)
        elif pin is not None:
            shown = pin_representation(pin, context=context)
        if target.is_working_copy:
            target.working_copy_of = summary  # read already: no query for its video
        data = {
            "summary": summary_url(request, target),
            "part": {
                "type": PART_TYPES[type(part)],
                "id": part.pk,
                "position": part.position,
                "text": receipts.label(part),
            },
            "quote": quote,
            "pin": shown,
            "problems": [p.as_json() for p in receipts.publication_problems(target)],
        }
        response = Response(data)
        response["Edit-Version"] = edit_version(target)
        return response


def _part_in(model, edited: Summary, part_id: int):
    """The part `part_id` of `edited`; for unpublished changes also the copy of the live
    part with that id (the summary's read shows the live ids). 404 when there is none."""
    found = model.objects.filter(summary=edited, pk=part_id).first()
    if found is None and edited.is_working_copy:
        origins = edited.part_origins.get(model._meta.model_name, {})
        copied = [int(copy_id) for copy_id, live_id in origins.items() if live_id == part_id]
        found = model.objects.filter(summary=edited, pk__in=copied).first()
    if found is None:
        raise NotFound("This summary has no such part.")
    return found


def _check_quote(part, quote: int | None) -> None:
    if quote is None:
        return
    count = len(part.quote_pins) if isinstance(part, Chapter) else 0
    if quote >= count:
        where = f"has {count} quotation(s)" if count else "quotes nobody"
        raise serializers.ValidationError(
            {"quote": [f"This part {where}: there is no quotation {quote}."]}
        )


def _words_of(summary: Summary) -> list:
    transcript = receipts.transcript_for(summary)
    return receipts.words_of(transcript) if transcript is not None else []


def _reject(summary, part, quote, user):
    return pinning.set_pin(summary=summary, part=part, first=None, end=None, user=user)


def _pinned(values):
    def change(summary, part, quote, user):
        transcript = receipts.transcript_for(summary)
        count = len(receipts.words_of(transcript)) if transcript is not None else None
        if count is not None and values["end"] > count:
            raise serializers.ValidationError(
                {"end": [f"The transcript has {count} words: end is at most {count}."]}
            )
        return pinning.set_pin(
            summary=summary,
            part=part,
            first=values["first"],
            end=values["end"],
            user=user,
            quote=quote,
        )

    return change


def _approved(summary, part, quote, user):
    return pinning.approve_pin(summary=summary, part=part, user=user, quote=quote)


def _overridden(note: str):
    def change(summary, part, quote, user):
        return pinning.override_pin(summary=summary, part=part, note=note, user=user, quote=quote)

    return change
