"""What editors send to create or update a whole summary: shapes, types and caps.

Checked here: field types, lengths (the models' and forms' caps), durations (the admin's
rules: 34:21, 1:02:03 or seconds), URL syntax, references by slug, list sizes, and unknown
fields (rejected by name). Rules that need the summary or other rows (time order, the
video's end, duplicate videos, item ids, cited-URL policy) are summaries.editing's.
"""

from django.core.validators import URLValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from summaries.models import (
    LANGUAGE_CODES,
    MAX_SECONDS,
    SHORT_TEXT,
    Channel,
    Citation,
    Organisation,
    Person,
    Topic,
)
from summaries.text.durations import DURATION_MESSAGES, DurationError, read_duration
from summaries.text.markdown import MAX_SOURCE_CHARS

MAX_KEY_POINTS = 100
MAX_TAKEAWAYS = 100
MAX_CHAPTERS = 200
MAX_CAVEATS = 200
MAX_PEOPLE = 20
MAX_TOPICS = 20

# Fields a client reads but cannot write, and what to do instead.
READ_ONLY_HINTS = {
    "status": "Read-only: use the publish, unpublish and submit-for-review actions.",
    "publish_at": "Read-only: use the publish action (with publish_at to schedule).",
}
READ_ONLY_NAMES = frozenset(
    {
        "url",
        "html_url",
        "summary_url",
        "first_published_at",
        "lock_version",
        "created_at",
        "updated_at",
        "citations",
        "position",
        "anchor",
        "body_html",
        "text_html",
        "platform",
        "platform_video_id",
        "duration_seconds",
    }
)


class StrictSerializer(serializers.Serializer):
    """Rejects keys it does not know, naming each (read-only ones say so)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            writable = {name for name, field in self.fields.items() if not field.read_only}
            unknown = {}
            for key in data:
                if key in writable:
                    continue
                if key in READ_ONLY_HINTS:
                    unknown[key] = [READ_ONLY_HINTS[key]]
                elif key in READ_ONLY_NAMES:
                    unknown[key] = ["Read-only: leave it out."]
                else:
                    unknown[key] = ["Unknown field."]
            if unknown:
                raise serializers.ValidationError(unknown)
        return super().to_internal_value(data)


@extend_schema_field(
    {
        "oneOf": [
            {"type": "integer", "minimum": 0, "maximum": MAX_SECONDS},
            {"type": "string", "maxLength": 16, "example": "34:21"},
        ],
        "description": "Seconds, or a clock: m:ss or h:mm:ss.",
    }
)
class SecondsField(serializers.Field):
    """A time or length typed as seconds (750) or as a clock ("12:30", "1:02:03")."""

    def __init__(self, *, allow_zero=False, **kwargs):
        self.allow_zero = allow_zero
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int | str):
            raise serializers.ValidationError(DURATION_MESSAGES["invalid"])
        if isinstance(data, str) and len(data) > 16:
            raise serializers.ValidationError(DURATION_MESSAGES["invalid"])
        if isinstance(data, int) and abs(data) > 10 * MAX_SECONDS:
            raise serializers.ValidationError(DURATION_MESSAGES["too_long"])
        try:
            return read_duration(str(data), allow_zero=self.allow_zero)
        except DurationError as error:
            raise serializers.ValidationError(str(error)) from None

    def to_representation(self, value):
        return value


class WebURLField(serializers.URLField):
    """An http(s) URL without a user name or password."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.validators = [v for v in self.validators if not isinstance(v, URLValidator)]
        self.validators.append(URLValidator(schemes=["http", "https"]))

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if value and "@" in value.split("//", 1)[-1].split("/", 1)[0]:
            raise serializers.ValidationError("Remove the user name and password from the URL.")
        return value


NOT_TEXT = 'A slug is text, e.g. "ai-explained"; got {kind}.'


def _refuse_non_text(data) -> None:
    # DRF reads 123 as the slug "123": a client that sent a number meant something else.
    if isinstance(data, str):
        return
    if isinstance(data, bool):
        kind = "true/false"
    elif isinstance(data, int | float):
        kind = "a number"
    else:
        kind = "a list" if isinstance(data, list) else "an object"
    raise serializers.ValidationError(NOT_TEXT.format(kind=kind))


class TextSlugField(serializers.SlugField):
    """A slug sent as text (a number or a list is refused, not turned into text)."""

    def to_internal_value(self, data):
        _refuse_non_text(data)
        return super().to_internal_value(data)


class TextSlugRelatedField(serializers.SlugRelatedField):
    """A reference by slug, sent as text."""

    def to_internal_value(self, data):
        _refuse_non_text(data)
        # Looked up as it is: PostgreSQL refuses text holding NUL (a DataError, a 500), and
        # no slug holds one. DRF's CharField says the same for the fields it reads.
        if "\x00" in data:
            raise serializers.ValidationError("Null characters are not allowed.")
        return super().to_internal_value(data)


def _not_only_spaces(value: str) -> None:
    if value and not value.strip():
        raise serializers.ValidationError("This field may not be blank.")


def _text(max_length, *, markdown=False, **kwargs):
    """A string field with the model's cap; Markdown keeps its leading spaces."""
    validators = [_not_only_spaces] if markdown and not kwargs.get("allow_blank") else []
    return serializers.CharField(
        max_length=max_length, trim_whitespace=not markdown, validators=validators, **kwargs
    )


class AppearanceInput(StrictSerializer):
    person = TextSlugRelatedField(slug_field="slug", queryset=Person.objects.all())
    organisation = TextSlugRelatedField(
        slug_field="slug",
        queryset=Organisation.objects.all(),
        allow_null=True,
        required=False,
        help_text="Who the person speaks for on this video.",
    )


class VideoInput(StrictSerializer):
    slug = TextSlugField(
        max_length=200, help_text="The video's address; also the summary's. Cannot change."
    )
    title = _text(300)
    channel = TextSlugRelatedField(slug_field="slug", queryset=Channel.objects.all())
    source_url = WebURLField(max_length=500)
    duration = SecondsField(help_text="The video's length: seconds, m:ss or h:mm:ss.")
    language = serializers.ChoiceField(choices=LANGUAGE_CODES, required=False)
    published_on = serializers.DateField()
    thumbnail_url = WebURLField(max_length=500, allow_blank=True, required=False)
    blurb = _text(300, allow_blank=True, required=False)
    topics = serializers.ListField(
        child=TextSlugRelatedField(slug_field="slug", queryset=Topic.objects.all()),
        max_length=MAX_TOPICS,
        required=False,
        help_text="Topic slugs.",
    )
    people = AppearanceInput(many=True, max_length=MAX_PEOPLE, required=False)

    def __init__(self, *args, partial_update=False, **kwargs):
        super().__init__(*args, **kwargs)
        if partial_update:
            for field in self.fields.values():
                field.required = False


class ItemInput(StrictSerializer):
    id = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="An existing item of this summary to keep (and move); leave out for a new one.",
    )


class KeyPointInput(ItemInput):
    title = _text(200)
    body = _text(SHORT_TEXT, markdown=True, help_text="Markdown.")
    time = SecondsField(allow_zero=True, required=False, allow_null=True)


class TakeawayInput(ItemInput):
    text = _text(SHORT_TEXT, markdown=True, help_text="Markdown; cite with [text](https://…).")
    time = SecondsField(allow_zero=True, required=False, allow_null=True)


class ChapterInput(ItemInput):
    title = _text(200)
    start_time = SecondsField(allow_zero=True, required=False, allow_null=True)
    synopsis = _text(SHORT_TEXT, allow_blank=True, required=False)
    body = _text(
        MAX_SOURCE_CHARS, markdown=True, help_text="Markdown; cite with [text](https://…)."
    )


class CaveatInput(ItemInput):
    chapter = serializers.IntegerField(
        min_value=1,
        max_value=MAX_CHAPTERS,
        required=False,
        allow_null=True,
        help_text="The chapter it qualifies: its position (1-based) in `chapters`.",
    )
    key_point = serializers.IntegerField(
        min_value=1,
        max_value=MAX_KEY_POINTS,
        required=False,
        allow_null=True,
        help_text="The key point it qualifies: its position (1-based) in `key_points`.",
    )
    takeaway = serializers.IntegerField(
        min_value=1,
        max_value=MAX_TAKEAWAYS,
        required=False,
        allow_null=True,
        help_text="The takeaway it qualifies: its position (1-based) in `takeaways`.",
    )
    claim = _text(300, allow_blank=True, required=False)
    text = _text(SHORT_TEXT, markdown=True, help_text="The note, in Markdown.")


class SummaryInput(StrictSerializer):
    """A whole summary. Lists are in reading order and replace what the summary had."""

    video = VideoInput()
    tldr = _text(SHORT_TEXT, help_text="What a reader should know in 30 seconds (plain text).")
    key_points = KeyPointInput(many=True, max_length=MAX_KEY_POINTS, required=False)
    takeaways = TakeawayInput(many=True, max_length=MAX_TAKEAWAYS, required=False)
    chapters = ChapterInput(many=True, max_length=MAX_CHAPTERS, required=False)
    caveats = CaveatInput(many=True, max_length=MAX_CAVEATS, required=False)

    def __init__(self, *args, partial_update=False, **kwargs):
        super().__init__(*args, **kwargs)
        if partial_update:
            self.fields["video"] = VideoInput(partial_update=True, required=False)
            for field in self.fields.values():
                field.required = False


class KeyPhraseInput(StrictSerializer):
    """A citation's key phrase, as an editor sets it."""

    key_phrase = serializers.CharField(
        max_length=Citation._meta.get_field("key_phrase").max_length,
        allow_blank=True,
        help_text=(
            "A phrase or figure the cited page must contain for the claim to count as "
            "supported (runs of spaces become one). It need not be words of the claim: a "
            "page may state the claim's figure differently. Empty: back to the phrase "
            "extracted from the claim. A new phrase clears the claim's verdict until the "
            "source's next check, which is queued."
        ),
    )
