"""Receipts in the API: a video's transcript (anyone reads the live one; editors read the
one waiting for review and import a file) and the pins of a summary's statements (editors
set, move, reject and approve them, reviewers override them).

Every write calls the services of `summaries.editing.pinning`, which check the user's
permission and keep the rules; on a published summary a pin is changed in its unpublished
changes (a working copy, made on the first write), as every edit of a summary is.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import BaseParser, MultiPartParser
from rest_framework.response import Response

from summaries.editing import copies, pinning, receipts
from summaries.models import (
    LANGUAGE_CHOICES,
    Caveat,
    Chapter,
    KeyPoint,
    Summary,
    Takeaway,
    Transcript,
    Video,
)
from summaries.reader.absolute import site_url
from summaries.text.durations import format_duration
from summaries.text.transcripts import Segment, TranscriptTooLarge, timed_words

from .conditional import check_if_match, edit_version
from .errors import PayloadTooLarge
from .inputs import StrictSerializer
from .permissions import can_see_unpublished
from .pin_serializers import PinSerializer, pin_representation
from .pin_serializers import quote_pin_representation as quote_representation
from .schema import PublicationProblemSerializer
from .summary_views import requires
from .views import ApiViewSet

CHANGE = "summaries.change_summary"
PUBLISH = "summaries.publish_summary"

# --- Uploads ---------------------------------------------------------------------------

# A form's fields and boundaries around the file: a body this much over the file's cap is
# still read (the file itself is held to the cap once parsed).
FORM_OVERHEAD = 64 * 1024


@dataclass(frozen=True)
class Upload:
    """A transcript file as sent: its bytes, and its name when the client gave one."""

    data: bytes
    filename: str


def _declared_length(parser_context) -> int:
    request = (parser_context or {}).get("request")
    declared = request.META.get("CONTENT_LENGTH") if request is not None else None
    try:
        return int(declared or 0)
    except ValueError:
        return 0


def _sent_name(parser_context) -> str:
    """The file name of a Content-Disposition header (`attachment; filename="a.vtt"`)."""
    request = (parser_context or {}).get("request")
    header = request.META.get("HTTP_CONTENT_DISPOSITION", "") if request is not None else ""
    for item in header.split(";"):
        name, _, value = item.strip().partition("=")
        if name.lower() == "filename" and value:
            return value.strip().strip('"')[-255:]
    return ""


class RawTranscriptParser(BaseParser):
    """The request body is the transcript file itself, of at most TRANSCRIPT_MAX_BYTES
    (not the API's general API_MAX_BODY_BYTES, which is smaller): a 413 above it, checked
    on the declared length and while reading, so a larger body is never read whole."""

    media_type = "application/octet-stream"
    # The file name the media type suggests to the transcript parser (a hint only: the
    # content decides).
    extension = ""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.TRANSCRIPT_MAX_BYTES
        if _declared_length(parser_context) > limit:
            raise PayloadTooLarge(limit)
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise PayloadTooLarge(limit)
        name = _sent_name(parser_context) or (f"transcript{self.extension}" * bool(self.extension))
        return Upload(raw, name)


class WebVttParser(RawTranscriptParser):
    media_type = "text/vtt"
    extension = ".vtt"


class SubRipParser(RawTranscriptParser):
    media_type = "application/x-subrip"
    extension = ".srt"


class JsonTranscriptParser(RawTranscriptParser):
    media_type = "application/json"
    extension = ".json"


class PlainTranscriptParser(RawTranscriptParser):
    media_type = "text/plain"


class TranscriptFormParser(MultiPartParser):
    """A form (multipart/form-data) with the file in its `file` field."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.TRANSCRIPT_MAX_BYTES
        if _declared_length(parser_context) > limit + FORM_OVERHEAD:
            raise PayloadTooLarge(limit)
        parsed = super().parse(stream, media_type, parser_context)
        sent = parsed.files.get("file")
        if sent is None:
            raise serializers.ValidationError(
                {"file": ["Send the transcript file in the form's `file` field."]}
            )
        if sent.size > limit:
            raise PayloadTooLarge(limit)
        return Upload(sent.read(), (sent.name or "")[-255:])


TRANSCRIPT_PARSERS = [
    WebVttParser,
    SubRipParser,
    JsonTranscriptParser,
    PlainTranscriptParser,
    RawTranscriptParser,
    TranscriptFormParser,
]


class TranscriptForm(serializers.Serializer):
    file = serializers.FileField(help_text="The transcript file (WebVTT, SubRip, json3, Whisper).")


def _upload_of(request) -> Upload:
    data = request.data
    if not isinstance(data, Upload) or not data.data:
        raise serializers.ValidationError(
            {"file": ["Send the transcript file as the request body (or a form's `file`)."]}
        )
    return data


def _import_error(error: DjangoValidationError) -> Exception:
    """The answer to a file the import refused: 413 over the byte cap, else a 400 naming
    the line (or the words over TRANSCRIPT_MAX_WORDS) in `file`, or the field the service
    named."""
    if getattr(error, "code", None) == "too_large" and isinstance(
        error.__cause__, TranscriptTooLarge
    ):
        return PayloadTooLarge(settings.TRANSCRIPT_MAX_BYTES)
    if hasattr(error, "error_dict"):
        return serializers.ValidationError(error.message_dict)
    # The message as written: it quotes the file, which may hold a "%".
    messages = [str(e.message) for e in error.error_list]
    return serializers.ValidationError({"file": messages})


# --- Transcripts -----------------------------------------------------------------------


class TranscriptQuery(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=Transcript.State.choices,
        default=Transcript.State.LIVE.value,
        help_text="live (what readers see; the default) or draft (waiting for review: "
        "editors only, 404 to anyone else).",
    )
    language = serializers.ChoiceField(
        choices=LANGUAGE_CHOICES,
        required=False,
        help_text="The transcript's language; default the video's.",
    )


class TranscriptImportQuery(serializers.Serializer):
    language = serializers.ChoiceField(
        choices=LANGUAGE_CHOICES,
        required=False,
        help_text="The transcript's language; default the video's.",
    )


class TranscriptSegmentSerializer(serializers.Serializer):
    start = serializers.FloatField(help_text="Seconds into the video.")
    end = serializers.FloatField()
    text = serializers.CharField(allow_blank=True)
    speaker = serializers.CharField(allow_blank=True, help_text="Empty when the file names none.")
    first_word = serializers.IntegerField(
        help_text="The index of the segment's first word among the transcript's words (what "
        "a pin's `first` and `end` count)."
    )


class TranscriptSerializer(serializers.Serializer):
    video = serializers.SlugField(help_text="The video's slug.")
    url = serializers.URLField()
    language = serializers.CharField()
    state = serializers.ChoiceField(choices=Transcript.State.choices)
    format = serializers.CharField(help_text="vtt, srt, json3 or whisper: how the file was read.")
    encoding = serializers.CharField(allow_blank=True)
    word_count = serializers.IntegerField()
    words = serializers.IntegerField(help_text="How many timed words pins count in.")
    length = serializers.FloatField(help_text="When the last segment ends, in seconds.")
    duration = serializers.CharField(help_text="The same as m:ss or h:mm:ss.")
    digest = serializers.CharField(help_text="Changes whenever the segments do.")
    warnings = serializers.ListField(
        child=serializers.CharField(), help_text="What the import noticed about the file."
    )
    updated_at = serializers.DateTimeField()
    segments = TranscriptSegmentSerializer(many=True)


class TranscriptImportedSerializer(TranscriptSerializer):
    summary = serializers.URLField(
        allow_null=True,
        help_text="The summary whose pins were verified again against this transcript: its "
        "unpublished changes when it is published (readers see the transcript once a "
        "reviewer publishes them), null when the video has no summary.",
    )


def transcript_tag(transcript: Transcript) -> str:
    """The transcript's ETag: its row, when it was last written and its video's slug
    (everything its representation shows follows from these)."""
    written = int(transcript.updated_at.timestamp() * 1_000_000)
    return f'"{transcript.pk}-{written}-{transcript.video.slug}"'


def _segments(transcript: Transcript) -> tuple[list[dict], int]:
    """The segments as the API shows them, and how many timed words they hold."""
    shown, first = [], 0
    for data in transcript.segments:
        segment = Segment.from_json(data)
        shown.append(
            {
                "start": segment.start,
                "end": segment.end,
                "text": segment.text,
                "speaker": segment.speaker,
                "first_word": first,
            }
        )
        first += len(timed_words([segment]))
    return shown, first


def transcript_url(request, transcript: Transcript) -> str:
    url = reverse("api:video-transcript-detail", kwargs={"slug": transcript.video.slug})
    query = "?state=draft" if transcript.state == Transcript.State.DRAFT else ""
    return site_url(url + query)


def transcript_data(request, transcript: Transcript) -> dict:
    segments, words = _segments(transcript)
    return {
        "video": transcript.video.slug,
        "url": transcript_url(request, transcript),
        "language": transcript.language,
        "state": transcript.state,
        "format": transcript.format,
        "encoding": transcript.encoding,
        "word_count": transcript.word_count,
        "words": words,
        "length": float(transcript.ends_at),
        "duration": format_duration(int(transcript.ends_at)),
        "digest": transcript.digest,
        "warnings": [str(warning) for warning in transcript.warnings],
        "updated_at": serializers.DateTimeField().to_representation(transcript.updated_at),
        "segments": segments,
    }


TRANSCRIPT_IF_MATCH = OpenApiParameter(
    "If-Match",
    OpenApiTypes.STR,
    location=OpenApiParameter.HEADER,
    description=(
        "The ETag of the transcript waiting for review (GET …/transcript/?state=draft): "
        "required when there is one (428 without it, 412 when another import replaced it "
        "since), left out when there is none."
    ),
)
IMPORT_BODY = {
    "text/vtt": OpenApiTypes.BINARY,
    "application/x-subrip": OpenApiTypes.BINARY,
    "application/json": OpenApiTypes.BINARY,
    "text/plain": OpenApiTypes.BINARY,
    "application/octet-stream": OpenApiTypes.BINARY,
    "multipart/form-data": TranscriptForm,
}
IMPORT_RESPONSES = {
    200: OpenApiResponse(TranscriptImportedSerializer, description="Replaced the draft."),
    201: OpenApiResponse(TranscriptImportedSerializer, description="Imported a first draft."),
    400: OpenApiResponse(
        description="The file cannot be read as a transcript: `fields.file` names the line "
        "(`line 212: …`) or the cue, event or segment."
    ),
    413: OpenApiResponse(description="The file is larger than TRANSCRIPT_MAX_BYTES."),
}
IMPORT_DESCRIPTION = (
    "Import a transcript file as the video's transcript waiting for review (editors): "
    "WebVTT, SubRip, YouTube json3 or Whisper JSON, sent as the body (its Content-Type "
    "text/vtt, application/x-subrip, application/json, text/plain or "
    "application/octet-stream; a `Content-Disposition` file name is kept) or as a form's "
    "`file`. Up to TRANSCRIPT_MAX_BYTES (20 MB by default), not the smaller cap of other "
    "bodies. The summary's pins are verified against it at once; on a published summary "
    "this is an edit of its unpublished changes, which readers see once a reviewer "
    "publishes them. The answer has the file's warnings."
)


@extend_schema(parameters=[OpenApiParameter("slug", str, OpenApiParameter.PATH)])
class TranscriptViewSet(ApiViewSet):
    """A video's transcript, at /api/v1/videos/<slug>/transcript/."""

    serializer_class = TranscriptSerializer  # what OPTIONS describes
    filter_backends: list = []
    pagination_class = None

    def get_queryset(self):
        videos = Video.objects.all()
        if not can_see_unpublished(self.request.user):
            videos = videos.published()
        return videos

    @extend_schema(
        methods=["GET"],
        parameters=[TranscriptQuery],
        responses=TranscriptSerializer,
        description=(
            "The video's transcript readers see, once its summary is live: segments with "
            "times and the index of their first word (pins count words). Editors read "
            "the one waiting for review with ?state=draft; anyone else gets a 404 for it."
        ),
    )
    @extend_schema(
        methods=["PUT", "POST"],
        request=IMPORT_BODY,
        parameters=[TranscriptImportQuery, TRANSCRIPT_IF_MATCH],
        responses=IMPORT_RESPONSES,
        description=IMPORT_DESCRIPTION,
    )
    @action(
        detail=True,
        methods=["get", "put", "post"],
        url_path="transcript",
        url_name="detail",
        parser_classes=TRANSCRIPT_PARSERS,
        pagination_class=None,
        filter_backends=[],
    )
    @requires(CHANGE)
    def transcript(self, request, slug=None):
        if request.method == "GET":
            return self._read(request, slug)
        return self._import(request, slug)

    def _read(self, request, slug):
        query = TranscriptQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        video = get_object_or_404(self.get_queryset(), slug=slug)
        state = query.validated_data["state"]
        if state == Transcript.State.DRAFT and not can_see_unpublished(request.user):
            raise NotFound("No such transcript.")
        transcript = get_object_or_404(
            Transcript.objects.select_related("video").defer("original"),
            video=video,
            language=query.validated_data.get("language") or video.language,
            state=state,
        )
        response = Response(transcript_data(request, transcript))
        response["ETag"] = transcript_tag(transcript)
        setattr(response, "last_modified", transcript.updated_at)  # noqa: B010 - read by the mixin
        return response

    def _import(self, request, slug):
        query = TranscriptImportQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        upload = _upload_of(request)
        # Answered before the commit, as every write: an error answer saved nothing.
        with transaction.atomic():
            video = get_object_or_404(Video.objects.select_for_update(), slug=slug)
            language = query.validated_data.get("language") or video.language
            current = (
                Transcript.objects.select_related("video")
                .only("pk", "updated_at", "video__slug")
                .filter(video=video, language=language, state=Transcript.State.DRAFT)
                .first()
            )
            tag = transcript_tag(current) if current is not None else '"none"'
            check_if_match(request, tag, required=current is not None)
            try:
                imported = pinning.import_transcript(
                    video=video,
                    data=upload.data,
                    user=request.user,
                    filename=upload.filename,
                    language=language,
                )
            except DjangoValidationError as error:
                raise _import_error(error) from None
            transcript = imported.transcript
            transcript.video = video
            data = {
                **transcript_data(request, transcript),
                "summary": _summary_url(request, imported.summary),
            }
            code = status.HTTP_200_OK if current is not None else status.HTTP_201_CREATED
            response = Response(data, status=code)
            response["ETag"] = transcript_tag(transcript)
            if current is None:
                response["Location"] = data["url"]
            return response


def _summary_url(request, summary: Summary | None) -> str | None:
    if summary is None:
        return None
    name = "api:summary-working-copy" if summary.is_working_copy else "api:summary-detail"
    url = reverse(name, kwargs={"slug": summary.summarised_video.slug})
    return site_url(url)


# --- Pins ------------------------------------------------------------------------------

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


class OfSummaryViewSet(ApiViewSet):
    """Endpoints below a summary's URL (/api/v1/summaries/<slug>/…): one summary, found by
    its video's slug; no filters, no pages."""

    lookup_field = "video__slug"
    lookup_url_kwarg = "slug"
    filter_backends: list = []
    pagination_class = None

    def get_queryset(self):
        return Summary.objects.originals()


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
            "summary": _summary_url(request, target),
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
