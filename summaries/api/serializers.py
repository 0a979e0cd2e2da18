"""Read representations. Every field is listed; nested parts come from prefetched rows only."""

from functools import cached_property
from typing import cast

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import relations, serializers
from rest_framework.fields import SkipField
from rest_framework.reverse import reverse

from summaries.archive.events import copy_data
from summaries.editing import gate
from summaries.models import (
    Appearance,
    Caveat,
    Channel,
    Chapter,
    Citation,
    Correction,
    KeyPoint,
    Organisation,
    Person,
    Source,
    Summary,
    Takeaway,
    Topic,
    Video,
)
from summaries.models.corrections import NOTE_CHARS
from summaries.reader.absolute import site_url
from summaries.text.citations import suggest_key_phrase
from summaries.text.durations import format_duration
from summaries.text.pins import Status as PinStatus

from .links import api_url
from .permissions import can_see_unpublished


@extend_schema_field(OpenApiTypes.URI)
class ApiUrlField(serializers.Field):
    """The absolute API address of an object looked up by `lookup` (a slug)."""

    def __init__(self, view_name, lookup="slug", **kwargs):
        self.view_name, self.lookup = view_name, lookup
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, value):
        slug = value
        for part in self.lookup.split("."):
            slug = getattr(slug, part)
        request = self.context.get("request")
        if request is None:
            return reverse(self.view_name, kwargs={"slug": slug})
        return api_url(self.view_name, kwargs={"slug": slug}, request=request)


@extend_schema_field(OpenApiTypes.URI)
class PageUrlField(serializers.Field):
    """The absolute address of the object's reader page."""

    def __init__(self, **kwargs):
        super().__init__(source="*", read_only=True, **kwargs)

    def to_representation(self, value):
        request = self.context.get("request")
        url = value.get_absolute_url()
        return site_url(url) if request else url


# --- Catalogue ---------------------------------------------------------------------------


class ChannelRefSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:channel-detail")

    class Meta:
        model = Channel
        fields = ["slug", "name", "url"]


class PersonRefSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:person-detail")

    class Meta:
        model = Person
        fields = ["slug", "name", "url"]


class TopicRefSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:topic-detail")

    class Meta:
        model = Topic
        fields = ["slug", "name", "url"]


class OrganisationRefSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:organisation-detail")

    class Meta:
        model = Organisation
        fields = ["slug", "name", "url"]


class ChannelSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:channel-detail")
    html_url = PageUrlField()

    class Meta:
        model = Channel
        fields = ["slug", "name", "description", "site_url", "url", "html_url", "updated_at"]


class PersonSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:person-detail")
    html_url = PageUrlField()

    class Meta:
        model = Person
        fields = ["slug", "name", "url", "html_url", "updated_at"]


class TopicSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:topic-detail")
    html_url = PageUrlField()

    class Meta:
        model = Topic
        fields = ["slug", "name", "url", "html_url", "updated_at"]


class OrganisationSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:organisation-detail")
    domains = serializers.ListField(
        child=serializers.CharField(), source="domain_list", read_only=True
    )

    class Meta:
        model = Organisation
        fields = ["slug", "name", "domains", "url", "updated_at"]


class AppearanceSerializer(serializers.ModelSerializer):
    person = PersonRefSerializer(read_only=True)
    organisation = OrganisationRefSerializer(read_only=True, allow_null=True)

    class Meta:
        model = Appearance
        fields = ["person", "organisation"]


class VideoSerializer(serializers.ModelSerializer):
    url = ApiUrlField("api:video-detail")
    html_url = PageUrlField()
    summary_url = ApiUrlField("api:summary-detail")
    channel = ChannelRefSerializer(read_only=True)
    duration = serializers.SerializerMethodField(help_text="The length as m:ss or h:mm:ss.")
    people = AppearanceSerializer(source="appearances", many=True, read_only=True)
    topics = TopicRefSerializer(many=True, read_only=True)

    class Meta:
        model = Video
        fields = [
            "slug",
            "title",
            "url",
            "html_url",
            "summary_url",
            "channel",
            "source_url",
            "platform",
            "platform_video_id",
            "duration_seconds",
            "duration",
            "language",
            "published_on",
            "thumbnail_url",
            "blurb",
            "people",
            "topics",
            "created_at",
            "updated_at",
        ]

    def get_duration(self, video) -> str:
        return format_duration(video.duration_seconds)


class RelatedVideoSerializer(serializers.Serializer):
    video = VideoSerializer(read_only=True)
    score = serializers.FloatField(read_only=True)
    reasons = serializers.ListField(child=serializers.CharField(), read_only=True)


# --- Pins (?expand=pins) ------------------------------------------------------------------


class PinApprovalSerializer(serializers.Serializer):
    by = serializers.CharField(help_text="The editor's username.")
    at = serializers.CharField(help_text="When (ISO 8601).")


class PinOverrideSerializer(PinApprovalSerializer):
    by = serializers.CharField(help_text="The reviewer's username.")
    note = serializers.CharField(help_text="Why the statement may be published as it is.")


# The statuses of a pin, as values and labels (also the schema's PinStatusEnum).
PIN_STATUSES = [(status.value, status.value) for status in PinStatus]


class PinSerializer(serializers.Serializer):
    """A statement pinned to the words said: where, and how well the words support it."""

    status = serializers.ChoiceField(
        choices=PIN_STATUSES,
        help_text=(
            "verbatim (said word for word), paraphrase (said in other words), not_found, "
            "contradicted (the transcript says otherwise, e.g. another number) or mis_timed "
            "(said, but not at the time the part states)."
        ),
    )
    first = serializers.IntegerField(
        help_text="The first word of the span: its index in the transcript's words."
    )
    end = serializers.IntegerField(help_text="The index after the span's last word.")
    start = serializers.FloatField(help_text="When the span's words are said, in seconds.")
    stop = serializers.FloatField(help_text="When they end, in seconds.")
    words = serializers.CharField(
        allow_null=True,
        help_text=(
            "The words quoted: what the transcript says in the span, as verified (the first "
            "40 words, then “…”)."
        ),
    )
    score = serializers.FloatField(help_text="How close the words are, 0 to 100.")
    reason = serializers.CharField(help_text="Why this status, in an editor's words.")
    suggested_time = serializers.FloatField(
        allow_null=True, help_text="Where the words are said, when the stated time is off."
    )
    approved = serializers.BooleanField(help_text="An editor accepted the paraphrase.")
    overridden = serializers.BooleanField(
        help_text="A reviewer let the statement through although the transcript does not "
        "support it."
    )
    approval = PinApprovalSerializer(
        allow_null=True, help_text="Editors only: who approved the paraphrase, and when."
    )
    override = PinOverrideSerializer(
        allow_null=True, help_text="Editors only: who overrode the pin, when and why."
    )


class QuotePinSerializer(PinSerializer):
    """A quotation of a chapter's body, pinned where the transcript says it."""

    index = serializers.IntegerField(
        help_text="Its place among the chapter's quotations (send it as `quote` to change it)."
    )
    quote = serializers.CharField(help_text="The quotation as the chapter writes it.")
    speaker = serializers.CharField(help_text="Who says it, when the chapter names them.")


def pins_requested(context) -> bool:
    """Whether the representation shows pins: a list says so in `expand` (it never does:
    pins are not a list's part), the detail in the request's ?expand=."""
    if "expand" in context:
        return "pins" in context["expand"]
    request = context.get("request")
    if request is None:
        return False
    names = request.query_params.get("expand", "")
    return "pins" in {name.strip() for name in names.split(",")}


def pin_representation(pin: dict, *, context) -> dict:
    """A stored pin as the API shows it (editors also see who approved or overrode it)."""
    editor = context.get("pin_editor", False)
    approval, override = pin.get("approved"), pin.get("override")
    return {
        "status": pin["status"],
        "first": pin["first"],
        "end": pin["end"],
        "start": pin["start"],
        "stop": pin["stop"],
        "words": pin.get("said"),
        "score": pin.get("score", 0.0),
        "reason": pin.get("reason", ""),
        "suggested_time": pin.get("suggested_time"),
        "approved": bool(approval),
        "overridden": bool(override),
        "approval": {"by": approval["by"], "at": approval["at"]} if editor and approval else None,
        "override": (
            {"by": override["by"], "at": override["at"], "note": override["note"]}
            if editor and override
            else None
        ),
    }


def quote_pin_representation(index: int, pin: dict, *, context) -> dict:
    shown = pin_representation(pin, context=context)
    return {**shown, "index": index, "quote": pin["quote"], "speaker": pin.get("speaker", "")}


class _OutputOnlyField(serializers.Field):
    """A field only representations have; not required, so the schema lets it be absent
    (shown with ?expand=pins only)."""

    def __init__(self, **kwargs):
        super().__init__(source="*", required=False, **kwargs)

    def to_internal_value(self, data):
        raise serializers.ValidationError("This field is read only.")


@extend_schema_field(PinSerializer)
class PinField(_OutputOnlyField):
    def __init__(self, **kwargs):
        super().__init__(allow_null=True, **kwargs)

    def to_representation(self, part):
        if part.pin is None:
            return None
        return pin_representation(part.pin, context=self.context)


@extend_schema_field(QuotePinSerializer(many=True))
class QuotePinsField(_OutputOnlyField):
    def to_representation(self, chapter):
        return [
            quote_pin_representation(index, pin, context=self.context)
            for index, pin in enumerate(chapter.quote_pins)
        ]


PIN_HELP = "With ?expand=pins only: the statement pinned to the words said, or null."
QUOTE_PINS_HELP = "With ?expand=pins only: the pins of the quotations in the chapter's body."


class PinnedPartSerializer(serializers.ModelSerializer):
    """A part of a summary; its pin is shown only when the request asks for pins."""

    PIN_FIELDS = ("pin", "quote_pins")

    def to_representation(self, instance):
        data = super().to_representation(instance)
        if not self.context.get("pins"):
            for name in self.PIN_FIELDS:
                data.pop(name, None)
        return data


# --- Summary parts -----------------------------------------------------------------------


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


# Fields whose to_representation gives a value of this type back unchanged.
_UNCHANGED = {
    serializers.CharField: str,
    serializers.URLField: str,
    serializers.IntegerField: int,
    serializers.BooleanField: bool,
}
_SKIPPED = object()


class ManyRowsSerializer(serializers.ModelSerializer):
    """A ModelSerializer for rows shown by the thousand (a summary's citations and their
    sources), with the same output: each field's attribute is read directly, and a value
    its field would give back unchanged (a str of a CharField) is used as it is. DRF's
    per-field lookup took most of the time of answering a save of a long chapter."""

    @cached_property
    def _plan(self) -> list[tuple[str | None, serializers.Field, str | None, type | None]] | None:
        """(name, field, attribute to read or None: DRF's lookup, type it gives back
        unchanged) for each field; None when a field is a relation (DRF's own way)."""
        plan = []
        for field in self._readable_fields:
            if isinstance(field, relations.RelatedField | relations.ManyRelatedField):
                return None
            attribute = field.source_attrs[0] if len(field.source_attrs) == 1 else None
            if callable(getattr(self.Meta.model, attribute or "", None)):
                attribute = None  # a method, which DRF calls
            plan.append((field.field_name, field, attribute, _UNCHANGED.get(type(field))))
        return plan

    def to_representation(self, instance):
        if self._plan is None or not isinstance(instance, Model):
            return super().to_representation(instance)
        row = {}
        for name, field, attribute, unchanged in self._plan:
            if attribute is None:
                value = self._value(field, instance)
            else:
                try:
                    value = getattr(instance, attribute)
                except (AttributeError, ObjectDoesNotExist):
                    value = self._value(field, instance)  # DRF's answer: default, None, skip
            if value is _SKIPPED:
                continue
            if value is None or type(value) is unchanged:
                row[name] = value
            else:
                row[name] = field.to_representation(value)
        return row

    @staticmethod
    def _value(field, instance):
        """The field's value as DRF looks it up (_SKIPPED: the field is left out)."""
        try:
            return field.get_attribute(instance)
        except SkipField:
            return _SKIPPED


class SourceSerializer(ManyRowsSerializer):
    """A cited page and the result of its latest check."""

    class Meta:
        model = Source
        fields = [
            "url",
            "host",
            "state",
            "status_code",
            "final_url",
            "title",
            "content_type",
            "response_ms",
            "redirect_chain",
            "error_class",
            "last_checked_at",
        ]


class ArchivedCopySerializer(serializers.Serializer):
    url = serializers.URLField(help_text="The archived copy (a web archive's capture).")
    captured_at = serializers.DateTimeField(allow_null=True, help_text="When it was captured.")
    verified = serializers.BooleanField(
        help_text="Fetched and found to hold the key phrase, and no error or redirect page."
    )
    verified_at = serializers.DateTimeField(allow_null=True)
    shown = serializers.BooleanField(
        help_text="Readers are shown it: the live page is gone or no longer holds the claim."
    )


class CitationEvidenceSerializer(serializers.Serializer):
    """What the cited page said when the citation was cited (the evidence vault)."""

    passage = serializers.CharField(
        help_text="Where the key phrase was found on the page (about 200 characters)."
    )
    captured_at = serializers.DateTimeField(help_text="When the page was captured.")
    digest = serializers.CharField(
        help_text="sha256 (hex) of the response body kept as a WARC record."
    )
    stored = serializers.BooleanField(
        help_text="Whether the record is in the vault (false: a size cap was reached or "
        "the storage failed; the passage and digest are still kept)."
    )


class CitationSerializer(ManyRowsSerializer):
    chapter = serializers.IntegerField(source="chapter_position", read_only=True, allow_null=True)
    key_point = serializers.IntegerField(
        source="key_point_position", read_only=True, allow_null=True
    )
    takeaway = serializers.IntegerField(source="takeaway_position", read_only=True, allow_null=True)
    source = SourceSerializer(read_only=True)
    suggested_key_phrase = serializers.SerializerMethodField(
        help_text="For a citation without a key phrase: words of its claim to use as one "
        "(send them as `key_phrase` to accept); otherwise empty."
    )
    archived_copy = serializers.SerializerMethodField(
        help_text="The archived copy kept for this citation, or null (also in the answer "
        "to a write: read the summary for it)."
    )
    evidence = serializers.SerializerMethodField(
        help_text="What the cited page said when the citation was cited: the passage that "
        "held the key phrase, the capture time and the digest of the stored response; "
        "null when nothing was kept."
    )

    class Meta:
        model = Citation
        fields = [
            "id",
            "position",
            "url",
            "link_text",
            "claim",
            "key_phrase",
            "key_phrase_edited",
            "suggested_key_phrase",
            "chapter",
            "key_point",
            "takeaway",
            "source",
            "verdict",
            "verdict_excerpt",
            "verdict_checked_at",
            "confirmed_at",
            "archived_copy",
            "evidence",
        ]

    def get_suggested_key_phrase(self, citation) -> str:
        return "" if citation.key_phrase else suggest_key_phrase(citation.claim)

    @extend_schema_field(ArchivedCopySerializer(allow_null=True))
    def get_archived_copy(self, citation) -> dict | None:
        # Read only where the query loaded it (select_related): never a query per row.
        if not Citation.archived_copy.is_cached(citation):
            return None
        return copy_data(getattr(citation, "archived_copy", None))

    @extend_schema_field(CitationEvidenceSerializer(allow_null=True))
    def get_evidence(self, citation):
        """The "cited" evidence, read with the citation (annotations of the API's query);
        null when nothing was kept."""
        digest = getattr(citation, "evidence_digest", None)
        if not digest:
            return None
        captured_at = citation.evidence_captured_at
        return {
            "passage": citation.evidence_passage,
            "captured_at": serializers.DateTimeField().to_representation(captured_at),
            "digest": digest,
            "stored": citation.evidence_state == "stored",
        }


# --- Updates and corrections (?expand=corrections, …/corrections/) -----------------------


class ChangedFieldSerializer(serializers.Serializer):
    # "label" is also a Field attribute (its title), which this serializer does not use.
    label = serializers.CharField(  # type: ignore[assignment]
        help_text="What changed: a field, or a part's field."
    )
    old = serializers.ListField(
        child=serializers.ListField(),
        help_text="The words before, as [text, changed] runs ([] for a part added).",
    )
    new = serializers.ListField(
        child=serializers.ListField(),
        help_text="The words after, as [text, changed] runs ([] for a part removed).",
    )


class CorrectionSerializer(serializers.ModelSerializer):
    """A published change of a summary: its kind, public note and what changed."""

    kind = serializers.ChoiceField(
        choices=Correction.Kind.choices,
        help_text="typo (shown to staff only), update or correction.",
    )
    changes = ChangedFieldSerializer(many=True, help_text="What changed, word by word.")
    url = serializers.SerializerMethodField(help_text="Where readers see it.")
    withdrawn = serializers.BooleanField(source="is_withdrawn")

    class Meta:
        model = Correction
        fields = [
            "id",
            "kind",
            "note",
            "published_at",
            "url",
            "changes",
            "withdrawn",
            "withdrawn_at",
            "withdrawal_note",
        ]
        read_only_fields = fields

    def get_url(self, correction) -> str:
        url = f"{correction.summary.get_absolute_url()}#correction-{correction.pk}"
        request = self.context.get("request")
        return site_url(url) if request else url


def corrections_shown_to(user, summary: Summary):
    """The published changes of `summary` that `user` may read: updates and corrections,
    and typo fixes too for staff who may change summaries. Newest first."""
    found = Correction.objects.filter(summary=summary).select_related("summary__video")
    if can_see_unpublished(user) and gate.may(user, gate.CHANGE):
        return found
    return found.public()


def corrections_requested(context) -> bool:
    """Whether the detail shows its corrections: the request's ?expand= names them."""
    request = context.get("request")
    if request is None or "expand" in context:  # a list item never has them
        return False
    names = request.query_params.get("expand", "")
    return "corrections" in {name.strip() for name in names.split(",")}


@extend_schema_field(CorrectionSerializer(many=True))
class CorrectionsField(_OutputOnlyField):
    """A summary's updates and corrections as its reader sees them (with
    ?expand=corrections only; one query then)."""

    def get_attribute(self, instance):
        if not corrections_requested(self.context):
            raise serializers.SkipField()
        return instance

    def to_representation(self, summary):
        request = self.context.get("request")
        found = corrections_shown_to(getattr(request, "user", None), summary)
        return CorrectionSerializer(found, many=True, context=self.context).data


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


class VideoCardSerializer(VideoSerializer):
    """A video as a list item shows it: what a card needs (the detail has the rest)."""

    class Meta(VideoSerializer.Meta):
        fields = [
            "slug",
            "title",
            "url",
            "html_url",
            "channel",
            "duration_seconds",
            "duration",
            "language",
            "published_on",
            "thumbnail_url",
            "people",
            "topics",
        ]


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
