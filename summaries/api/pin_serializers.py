"""Pins in the read representations (?expand=pins): a statement pinned to the words
said, and the fields of the summary's parts that show it."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from summaries.text.pins import Status as PinStatus

from .fields import OutputOnlyField


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


@extend_schema_field(PinSerializer)
class PinField(OutputOnlyField):
    def __init__(self, **kwargs):
        super().__init__(allow_null=True, **kwargs)

    def to_representation(self, part):
        if part.pin is None:
            return None
        return pin_representation(part.pin, context=self.context)


@extend_schema_field(QuotePinSerializer(many=True))
class QuotePinsField(OutputOnlyField):
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
