"""Read representations of a summary's citations and the sources they cite, shown by
the thousand (ManyRowsSerializer)."""

from functools import cached_property

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import Model
from drf_spectacular.utils import extend_schema_field
from rest_framework import relations, serializers
from rest_framework.fields import SkipField

from summaries.archive.events import copy_data
from summaries.models import Citation, Source
from summaries.text.citations import suggest_key_phrase

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
