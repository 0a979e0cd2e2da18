"""A video's transcript in the API, at /api/v1/videos/<slug>/transcript/: anyone reads the
live one; editors read the one waiting for review and import a file (sent as the body or
as a form's `file`: the parsers of an upload are here).

The import calls `summaries.editing.pinning.import_transcript`, which checks the user's
permission and verifies the summary's pins against the new transcript; on a published
summary that is an edit of its unpublished changes (a working copy, made on the first
write), as every edit of a summary is.
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

from summaries.editing import pinning
from summaries.models import LANGUAGE_CHOICES, Transcript, Video
from summaries.reader.absolute import site_url
from summaries.text.durations import format_duration
from summaries.text.transcripts import Segment, TranscriptTooLarge, timed_words

from .conditional import check_if_match
from .errors import PayloadTooLarge
from .of_summary import summary_url
from .permissions import can_see_unpublished
from .summary_views import requires
from .views import ApiViewSet

CHANGE = "summaries.change_summary"

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
                "summary": summary_url(request, imported.summary),
            }
            code = status.HTTP_200_OK if current is not None else status.HTTP_201_CREATED
            response = Response(data, status=code)
            response["ETag"] = transcript_tag(transcript)
            if current is None:
                response["Location"] = data["url"]
            return response
