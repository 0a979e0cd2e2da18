"""Read representations of a summary: whole, as a list item and as a write answers it,
with its parts; and the inputs of publishing it and sending it back. Every field is
listed; nested parts come from prefetched rows only."""

from typing import cast

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.reverse import reverse

from summaries.models import Caveat, Chapter, Correction, KeyPoint, Summary, Takeaway
from summaries.models.corrections import NOTE_CHARS
from summaries.reader.absolute import site_url

from .catalogue_serializers import VideoCardSerializer, VideoSerializer
from .citation_serializers import CitationSerializer
from .correction_serializers import CorrectionsField
from .fields import ApiUrlField
from .permissions import can_see_unpublished
from .pin_serializers import (
    PIN_HELP,
    QUOTE_PINS_HELP,
    PinField,
    PinnedPartSerializer,
    QuotePinsField,
    pins_requested,
)


class KeyPointSerializer(PinnedPartSerializer):
    pin = PinField(help_text=PIN_HELP)

    class Meta:
        model = KeyPoint
        fields = ["id", "position", "title", "body", "body_html", "time", "pin"]


class TakeawaySerializer(PinnedPartSerializer):
    pin = PinField(help_text=PIN_HELP)

    class Meta:
        model = Takeaway
        fields = ["id", "position", "text", "text_html", "time", "pin"]


class ChapterSerializer(PinnedPartSerializer):
    anchor = serializers.CharField(read_only=True, help_text="The fragment id on the page.")
    pin = PinField(help_text="With ?expand=pins only: the chapter's start (its opening words).")
    quote_pins = QuotePinsField(help_text=QUOTE_PINS_HELP)

    class Meta:
        model = Chapter
        fields = [
            "id",
            "position",
            "anchor",
            "title",
            "start_time",
            "synopsis",
            "body",
            "body_html",
            "pin",
            "quote_pins",
        ]


class CaveatSerializer(PinnedPartSerializer):
    chapter = serializers.IntegerField(
        source="chapter_position",
        read_only=True,
        allow_null=True,
        help_text="Position of the chapter it qualifies.",
    )
    key_point = serializers.IntegerField(
        source="key_point_position",
        read_only=True,
        allow_null=True,
        help_text="Position of the key point it qualifies.",
    )
    takeaway = serializers.IntegerField(
        source="takeaway_position",
        read_only=True,
        allow_null=True,
        help_text="Position of the takeaway it qualifies.",
    )
    pin = PinField(help_text=PIN_HELP)

    class Meta:
        model = Caveat
        fields = [
            "id",
            "position",
            "chapter",
            "key_point",
            "takeaway",
            "claim",
            "text",
            "text_html",
            "pin",
        ]


class SummarySerializer(serializers.ModelSerializer):
    """A whole summary: its video, its parts in order and every source it cites."""

    slug = serializers.SlugField(source="video.slug", read_only=True)
    url = ApiUrlField("api:summary-detail", lookup="video.slug")
    html_url = serializers.SerializerMethodField(
        help_text="The reader page (it answers 404 until the summary is live)."
    )
    video = VideoSerializer(read_only=True)
    key_points = KeyPointSerializer(many=True, read_only=True)
    takeaways = TakeawaySerializer(many=True, read_only=True)
    chapters = ChapterSerializer(many=True, read_only=True)
    caveats = CaveatSerializer(many=True, read_only=True)
    citations = CitationSerializer(many=True, read_only=True)
    unpublished_changes = serializers.SerializerMethodField(
        help_text=(
            "Editors only: the address of this published summary's unpublished changes "
            "(its working copy), or null when it has none."
        )
    )
    review_note = serializers.SerializerMethodField(
        help_text="Editors only: what a reviewer asked for when sending it back, or null."
    )
    reviewer = serializers.SerializerMethodField(
        help_text="Editors only: the username of the reviewer asked to review it, or null."
    )
    corrections = CorrectionsField(
        help_text="With ?expand=corrections only: its updates and corrections, newest first."
    )

    class Meta:
        model = Summary
        fields = [
            "slug",
            "url",
            "html_url",
            "status",
            "unpublished_changes",
            "review_note",
            "reviewer",
            "publish_at",
            "first_published_at",
            "lock_version",
            "tldr",
            "video",
            "key_points",
            "takeaways",
            "chapters",
            "caveats",
            "citations",
            "corrections",
            "created_at",
            "updated_at",
        ]
        extra_kwargs = {"lock_version": {"help_text": "Raised by one on every save."}}

    def to_representation(self, instance):
        if pins_requested(self.context):
            context = cast(dict, self.context)  # the root's own dict, shared with its parts
            request = context.get("request")
            context["pins"] = True
            context["pin_editor"] = can_see_unpublished(getattr(request, "user", None))
        return super().to_representation(instance)

    @extend_schema_field({"type": "string", "format": "uri", "nullable": True})
    def get_unpublished_changes(self, summary) -> str | None:
        if not getattr(summary, "has_working_copy", False):
            return None
        url = reverse("api:summary-working-copy", kwargs={"slug": summary.video.slug})
        request = self.context.get("request")
        return site_url(url) if request else url

    @extend_schema_field({"type": "string", "nullable": True})
    def get_review_note(self, summary) -> str | None:
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if not summary.review_note or user is None or not user.is_staff:
            return None
        return summary.review_note

    @extend_schema_field({"type": "string", "nullable": True})
    def get_reviewer(self, summary) -> str | None:
        request = self.context.get("request")
        user = getattr(request, "user", None)
        if user is None or not user.is_staff:
            return None
        # A working copy is assigned through its summary.
        original = summary.working_copy_of if summary.working_copy_of_id else summary
        return original.assigned_to.get_username() if original.assigned_to_id else None

    @extend_schema_field(OpenApiTypes.URI)
    def get_html_url(self, summary) -> str:
        request = self.context.get("request")
        url = summary.video.get_absolute_url()
        return site_url(url) if request else url


# The parts a list item leaves out unless asked for with ?expand= (they are most of a
# summary's size: a page of 20 whole summaries is ~500 KB, of lean ones ~40 KB).
EXPANDABLE = ("key_points", "takeaways", "chapters", "caveats", "citations")


class SummaryCountsSerializer(serializers.Serializer):
    key_points = serializers.IntegerField(source="key_point_count", read_only=True)
    takeaways = serializers.IntegerField(source="takeaway_count", read_only=True)
    chapters = serializers.IntegerField(source="chapter_count", read_only=True)
    caveats = serializers.IntegerField(source="caveat_count", read_only=True)
    citations = serializers.IntegerField(source="citation_count", read_only=True)


class SummaryListItemSerializer(SummarySerializer):
    """A summary as lists show it: what a card needs (video, channel, people, times, the
    30-second text) and how many parts it has; the parts named in the context's `expand`
    (from ?expand=) in full, as the detail endpoint shows them."""

    video = VideoCardSerializer(read_only=True)
    counts = SummaryCountsSerializer(source="*", read_only=True)

    class Meta(SummarySerializer.Meta):
        fields = [*SummarySerializer.Meta.fields, "counts"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        expand = self.context.get("expand", ())
        for name in EXPANDABLE:
            if name not in expand:
                self.fields.pop(name, None)


class WarningSerializer(serializers.Serializer):
    where = serializers.CharField(help_text="The part it is about, e.g. Chapter 2 “Pricing”.")
    message = serializers.CharField()


class SummaryWrittenSerializer(SummarySerializer):
    """A summary as a write answers it: the representation plus the editor's warnings."""

    warnings = WarningSerializer(
        many=True,
        read_only=True,
        help_text=(
            "Soft problems that did not block the change, as the admin shows them: chapter "
            "times out of order, figures with no cited source, claims attributed to an "
            "organisation whose link is elsewhere, cited pages that are broken, unverifiable, "
            "blocked or erring in their latest check, and claims whose key phrase was not "
            "found on their page or whose page changed since it was confirmed. Not part of "
            "the ETag."
        ),
    )

    class Meta(SummarySerializer.Meta):
        fields = [*SummarySerializer.Meta.fields, "warnings"]


class SendBackSerializer(serializers.Serializer):
    note = serializers.CharField(
        max_length=2000, help_text="What the editor should change (shown on the summary)."
    )


class PublishSerializer(serializers.Serializer):
    publish_at = serializers.DateTimeField(
        required=False,
        allow_null=True,
        help_text="When it goes live; a future time schedules it. Default: now.",
    )
    change_kind = serializers.ChoiceField(
        choices=Correction.Kind.choices,
        required=False,
        help_text=(
            "For the unpublished changes of a published summary: `typo` (readers are told "
            "nothing), `update` (the default) or `correction` (needs `note`). Not used for "
            "a first publication."
        ),
    )
    note = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=NOTE_CHARS,
        help_text="The public note readers see with an update or correction.",
    )
