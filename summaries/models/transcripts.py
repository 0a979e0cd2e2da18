"""Transcripts of videos: what was said, with times, that summaries' statements are pinned to.

A video has at most one transcript per language that readers see (state `live`) and at most
one waiting for review (`draft`): an import always writes the draft, and publishing the
video's summary (or its changes) makes the draft live in the same transaction, so a
transcript reaches readers only through review, as the summary does.

The words of the transcript are `summaries.text.transcripts.timed_words(segments)`; a pin on
a part of a summary (`KeyPoint.pin`, …) names a span of them by index, with the digest of
the transcript it was verified against.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings
from django.db import models

from summaries.text.apostrophes import searchable
from summaries.text.transcripts import Segment, Word, timed_words

from .base import LANGUAGE_CHOICES, TimestampedModel
from .catalogue import Video


class TranscriptQuerySet(models.QuerySet["Transcript"]):
    def live(self) -> TranscriptQuerySet:
        return self.filter(state=Transcript.State.LIVE)

    def without_text(self) -> TranscriptQuerySet:
        """Everything but the segments, their search text and the original file (a page
        that only links it)."""
        return self.defer("segments", "search_text", "original")


class Transcript(TimestampedModel):
    class State(models.TextChoices):
        DRAFT = "draft", "Waiting for review"
        LIVE = "live", "Published"

    video = models.ForeignKey(Video, on_delete=models.CASCADE, related_name="transcripts")
    language = models.CharField(max_length=10, choices=LANGUAGE_CHOICES)
    state = models.CharField(max_length=10, choices=State.choices, default=State.DRAFT)
    format = models.CharField(max_length=10, help_text="vtt, srt, json3 or whisper.")
    encoding = models.CharField(max_length=20, blank=True)
    original_name = models.CharField(max_length=255, blank=True)
    # The file as uploaded: kept so that a better parser can read it again.
    original = models.BinaryField(editable=False)
    # [Segment.as_json(), …]: {"start", "end", "text", "speaker"?, "words"?}.
    segments = models.JSONField(default=list, editable=False)
    word_count = models.PositiveIntegerField(default=0, editable=False)
    ends_at = models.FloatField(default=0, editable=False, help_text="Seconds.")
    warnings = models.JSONField(default=list, editable=False, blank=True)
    # The segments' text, one line per segment in order (search_text_of), kept by save():
    # what search reads (on PostgreSQL through a generated tsvector column, migration 0027).
    search_text = models.TextField(default="", blank=True, editable=False)
    # sha256 of the segments: a pin records the digest it was verified against.
    digest = models.CharField(max_length=64, editable=False)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    objects = TranscriptQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["video", "language", "state"], name="transcript_one_per_state"
            )
        ]
        ordering = ["video", "language", "state"]

    def __str__(self) -> str:
        return f"{self.video} ({self.language}, {self.get_state_display()})"

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save, the search text computed again whenever the segments are written (not
        when they were deferred: Django then saves the loaded fields only)."""
        update_fields = kwargs.get("update_fields")
        if update_fields is None:
            writes_segments = "segments" not in self.get_deferred_fields()
        else:
            writes_segments = "segments" in update_fields
        if writes_segments:
            self.search_text = search_text_of(self.segments)
            if update_fields is not None:
                kwargs["update_fields"] = {*update_fields, "search_text"}
        super().save(*args, **kwargs)

    def segment_list(self) -> list[Segment]:
        return [Segment.from_json(data) for data in self.segments]

    def words(self) -> list[Word]:
        """Every word said, in order, each with a time (cached on the instance)."""
        cached: list[Word] | None = getattr(self, "_words", None)
        if cached is None:
            cached = timed_words(self.segment_list())
            self._words = cached
        return cached


def segments_digest(segments: list[dict[str, Any]]) -> str:
    encoded = json.dumps(segments, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()


def search_text_of(segments: list[dict[str, Any]]) -> str:
    """The segments' text, line N being segment N's with its spaces and line breaks
    collapsed: line numbers stay segment numbers, and no JSON key name is searched. The
    apostrophes are those search splits words at (text.apostrophes.searchable)."""
    lines = (" ".join(str(segment.get("text") or "").split()) for segment in segments)
    return searchable("\n".join(lines))
