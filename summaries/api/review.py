"""The API's shapes of a summary's review: what its changes change, and its conversation."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from summaries.models import REVIEW_MESSAGE_CHARS, ReviewMessage


class SegmentSerializer(serializers.Serializer):
    text = serializers.CharField(help_text="A run of the text, exactly as written.")
    changed = serializers.BooleanField(help_text="Whether these words are not in the other side.")


class FieldChangeSerializer(serializers.Serializer):
    name = serializers.CharField(
        help_text='The field: "tldr", a part\'s field, or "video.<field>" for a pending change '
        "of the video (title, channel, blurb, topics, people…)."
    )
    label = serializers.CharField(help_text="The field as the admin names it.")
    changed = serializers.BooleanField()
    old = serializers.CharField(help_text="As readers see it now, as text (times as m:ss).")
    new = serializers.CharField(help_text="As the changes would make it.")
    old_segments = SegmentSerializer(
        many=True,
        help_text="`old` cut into runs, the words that differ marked (empty if unchanged).",
    )
    new_segments = SegmentSerializer(many=True, help_text="`new` cut the same way.")


class PartChangeSerializer(serializers.Serializer):
    id = serializers.IntegerField(
        source="pk",
        help_text="The live part's id; for a part the changes add, the new part's own id.",
    )
    label = serializers.CharField(help_text='e.g. "Chapter 2: Pricing".')
    change = serializers.SerializerMethodField(
        help_text="added, removed or edited; moved when only its place changed."
    )
    old_position = serializers.IntegerField(allow_null=True, help_text="Null when added.")
    new_position = serializers.IntegerField(allow_null=True, help_text="Null when removed.")
    moved = serializers.BooleanField(help_text="It changed place among the parts kept.")
    fields = FieldChangeSerializer(
        source="changed_fields", many=True, help_text="Only the fields that differ."
    )

    def get_change(self, part) -> str:
        if part.added:
            return "added"
        if part.removed:
            return "removed"
        return "edited" if part.changed_fields else "moved"


class PartsChangeSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="key points, takeaways, chapters or caveats.")
    added = serializers.SerializerMethodField()
    removed = serializers.SerializerMethodField()
    moved = serializers.SerializerMethodField()
    edited = serializers.SerializerMethodField()
    unchanged = serializers.SerializerMethodField()
    items = serializers.SerializerMethodField(
        help_text="The parts that differ, in the changes' order, then those removed."
    )

    def get_added(self, kind) -> int:
        return len(kind.added)

    def get_removed(self, kind) -> int:
        return len(kind.removed)

    def get_moved(self, kind) -> int:
        return len(kind.moved)

    def get_edited(self, kind) -> int:
        return len(kind.edited)

    def get_unchanged(self, kind) -> int:
        return len(kind.unchanged)

    @staticmethod
    def _items(kind):
        return [part for part in kind.parts if not part.unchanged]

    # drf-spectacular reads the items' shape from here (a method field has none of its own).
    @extend_schema_field(PartChangeSerializer(many=True))
    def get_items(self, kind) -> list[dict]:
        return PartChangeSerializer(self._items(kind), many=True).data


class ChangesDiffSerializer(serializers.Serializer):
    """What a published summary's unpublished changes change, against the live summary."""

    changed = serializers.BooleanField(help_text="Whether the changes differ from it at all.")
    fields = FieldChangeSerializer(
        many=True,
        help_text="The summary's own fields (its 30-second text) and the video's fields the "
        "changes set, changed or not.",
    )
    parts = PartsChangeSerializer(many=True, help_text="Each kind of part, with counts.")


class ReviewMessageSerializer(serializers.ModelSerializer):
    author = serializers.SlugRelatedField(
        slug_field="username", read_only=True, help_text="Username; null for the system."
    )

    class Meta:
        model = ReviewMessage
        fields = ["id", "kind", "author", "text", "created_at"]
        read_only_fields = fields


class ReplySerializer(serializers.Serializer):
    text = serializers.CharField(
        max_length=REVIEW_MESSAGE_CHARS, help_text="Plain text, shown escaped."
    )


class SubmitSerializer(serializers.Serializer):
    message = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=REVIEW_MESSAGE_CHARS,
        help_text="Optional: what the reviewer should know (kept in the conversation).",
    )


class AssignSerializer(serializers.Serializer):
    reviewer = serializers.CharField(
        allow_null=True,
        help_text="The username of a user who may publish; null for no reviewer in particular.",
    )
