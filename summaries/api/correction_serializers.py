"""Read representations of a summary's published changes: its updates and corrections
(?expand=corrections, …/corrections/)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from summaries.editing import gate
from summaries.models import Correction, Summary
from summaries.reader.absolute import site_url

from .fields import OutputOnlyField
from .permissions import can_see_unpublished


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
class CorrectionsField(OutputOnlyField):
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
