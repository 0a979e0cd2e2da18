"""What every content model shares: caps on editors' text, visible-text fields, timestamps."""

import re
from datetime import datetime

from django.conf import global_settings, settings
from django.core.exceptions import ValidationError
from django.db import models
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils import timezone

from summaries.text.visible import INVISIBLE_MESSAGE, has_visible_character, strip_invisible_edges

# Caps for editor-written text (forms and API); chapters may hold a long transcript.
SHORT_TEXT = 4000

LANGUAGE_CHOICES = list(global_settings.LANGUAGES)
LANGUAGE_CODES = [code for code, _ in LANGUAGE_CHOICES]


_PLAIN_SLUG = re.compile(r"[-a-zA-Z0-9_]+\Z")
_SLUG_MARKER = "slug-marker-0"
_slug_urls: dict[tuple, tuple[str, ...]] = {}


def slug_url(name: str, slug: str) -> str:
    """`reverse(name, kwargs={"slug": slug})`, with the pattern reversed once, not per call.

    Cards link a video, its channel and its people: reverse() costs ~20 µs each, dozens of
    times per list page. A plain ASCII slug needs no quoting, so the URL is the one reversed
    for a marker with the slug in its place; any other slug goes through reverse().
    """
    if not _PLAIN_SLUG.match(slug):
        return reverse(name, kwargs={"slug": slug})
    key = (name, get_urlconf() or settings.ROOT_URLCONF, get_script_prefix())
    parts = _slug_urls.get(key)
    if parts is None:
        parts = tuple(reverse(name, kwargs={"slug": _SLUG_MARKER}).split(_SLUG_MARKER))
        _slug_urls[key] = parts
    return slug.join(parts)


def max_length(model: type[models.Model], name: str) -> int:
    """The max_length of the field `name` of `model` (TypeError when it has none)."""
    length = getattr(model._meta.get_field(name), "max_length", None)
    if not isinstance(length, int):
        raise TypeError(f"{model.__name__}.{name} has no max_length")
    return length


class VisibleTextMixin:
    """Text readers see as typed: invisible characters at the edges are dropped, and text
    with no visible character is refused (by full_clean, so in admin forms and the API)."""

    def clean(self, value, model_instance):
        if isinstance(value, str) and value:
            value = strip_invisible_edges(value)
            if not has_visible_character(value) and (value or not self.blank):
                raise ValidationError(INVISIBLE_MESSAGE, code="invisible")
        return super().clean(value, model_instance)

    def deconstruct(self):
        # Migrations name the field where the app's models are imported from.
        name, _path, args, kwargs = super().deconstruct()
        return name, f"summaries.models.{type(self).__name__}", args, kwargs


class VisibleCharField(VisibleTextMixin, models.CharField):
    pass


class VisibleTextField(VisibleTextMixin, models.TextField):
    pass


class PublicationStatus(models.TextChoices):
    """Where a summary is in its workflow (Summary.Status)."""

    DRAFT = "draft", "Draft"
    IN_REVIEW = "review", "In review"
    PUBLISHED = "published", "Published"


def live_q(prefix: str = "", now: datetime | None = None) -> models.Q:
    """The one definition of "live": a summary published whose publish time has come,
    decided at read time. `prefix` reaches the summary from another model ("summary__")."""
    return models.Q(
        **{
            f"{prefix}status": PublicationStatus.PUBLISHED,
            f"{prefix}publish_at__lte": now or timezone.now(),
        }
    )


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True
