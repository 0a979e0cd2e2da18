"""What editors send to create or update channels, people, topics and organisations.

POST and PUT send the whole object (optional fields left out become empty); PATCH sends
only the fields it changes. Unknown fields are rejected by name; a slug another row of
the same kind already has is rejected under `slug`.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from summaries.models import SHORT_TEXT, Channel, Organisation, Person, Topic, validate_domains

from .inputs import StrictSerializer, TextSlugField, WebURLField, _text

MAX_DOMAINS = 50


class CatalogueInput(StrictSerializer):
    """name and slug, with the slug unique among rows of `model` (other than `instance`)."""

    model = None
    max_length = 200

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["name"] = _text(self.max_length)
        self.fields["slug"] = TextSlugField(
            max_length=self.max_length, help_text="Its address; unique among its kind."
        )

    def validate_slug(self, value):
        others = self.model.objects.filter(slug=value)
        if self.instance is not None:
            others = others.exclude(pk=self.instance.pk)
        if others.exists():
            name = self.model._meta.verbose_name
            raise serializers.ValidationError(f"Another {name} already has this slug.")
        return value

    def to_model_values(self, data: dict) -> dict:
        """Validated data as model field values."""
        return data


class ChannelInput(CatalogueInput):
    """A channel: name, slug, description and its own site's address."""

    model = Channel

    description = _text(SHORT_TEXT, allow_blank=True, required=False, default="")
    site_url = WebURLField(
        max_length=200,
        allow_blank=True,
        required=False,
        default="",
        help_text="The channel's own page.",
    )


class PersonInput(CatalogueInput):
    """A person who appears in videos."""

    model = Person


class TopicInput(CatalogueInput):
    """A topic videos are filed under."""

    model = Topic
    max_length = 100


class DomainField(serializers.CharField):
    """One bare web domain (anthropic.com), as the admin accepts them; stored lower case."""

    def __init__(self, **kwargs):
        super().__init__(max_length=253, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data).lower()
        if any(character.isspace() for character in value):
            raise serializers.ValidationError("Send one domain per item.")
        try:
            validate_domains(value)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from None
        return value


class OrganisationInput(CatalogueInput):
    """An organisation people speak for, with the web domains it publishes on."""

    model = Organisation

    domains = serializers.ListField(
        child=DomainField(),
        max_length=MAX_DOMAINS,
        required=False,
        default=list,
        help_text="Web domains it publishes on: bare domains such as anthropic.com.",
    )

    def validate_domains(self, value):
        return list(dict.fromkeys(value))  # drop repeats, keep the order

    def to_model_values(self, data: dict) -> dict:
        if "domains" in data:
            data = {**data, "domains": "\n".join(data["domains"])}
        return data
