"""A curated summary of a video and its parts: key points, takeaways, chapters, caveats."""

from datetime import datetime
from typing import Any, Self

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.db.models.signals import pre_save
from django.dispatch import receiver
from django.utils import timezone

from summaries.text.markdown import MAX_SOURCE_CHARS, render_inline_markdown, render_markdown

from .base import (
    SHORT_TEXT,
    PublicationStatus,
    TimestampedModel,
    VisibleCharField,
    VisibleTextField,
    live_q,
)
from .catalogue import Video

# Source columns the reader page does not read (defer()red by page_citations_prefetch).
_PAGE_UNUSED_SOURCE_FIELDS = (
    # Timestamps are the costliest columns to load (psycopg parses each in Python).
    "created_at",
    "updated_at",
    "redirect_chain",
    "title",
    "content_type",
    "response_ms",
    "fingerprint",
    "error",
    "check_token",
    "claimed_until",
    "next_check_at",
)


def page_citations_prefetch():
    """A summary's citations with their sources, without the columns the reader page never
    reads: the claim checks' excerpts and the checker's bookkeeping on each source."""
    citation_model = Summary._meta.get_field("citations").related_model
    return models.Prefetch(
        "citations",
        queryset=citation_model.objects.select_related("source").defer(
            "verdict_excerpt",
            "verdict_checked_at",
            "confirmed_excerpt",
            "confirmed_fingerprint",
            "confirmed_at",
            "confirmed_by",
            *(f"source__{name}" for name in _PAGE_UNUSED_SOURCE_FIELDS),
        ),
    )


class SummaryQuerySet(models.QuerySet):
    def published(self, now: datetime | None = None) -> Self:
        """Live summaries: published and publish time reached (decided at read time)."""
        return self.filter(live_q(now=now))

    def scheduled(self, now: datetime | None = None) -> Self:
        """Published summaries whose publish time lies in the future."""
        return self.filter(status=Summary.Status.PUBLISHED, publish_at__gt=now or timezone.now())

    def originals(self):
        """Summaries themselves, without the working copies of live ones."""
        return self.filter(working_copy_of__isnull=True)

    def in_review(self):
        """Summaries and working copies waiting for a reviewer."""
        return self.filter(status=Summary.Status.IN_REVIEW)

    def with_admin_data(self):
        return self.select_related("video", "video__channel", "updated_by")


class Summary(TimestampedModel):
    Status = PublicationStatus

    # A working copy has no video of its own: it is about its live summary's video.
    video = models.OneToOneField(
        Video, on_delete=models.PROTECT, related_name="summary", null=True, blank=True
    )
    working_copy_of = models.OneToOneField(
        "self",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="working_copy",
        editable=False,
        help_text="Set on the working copy of a live summary: edits readers do not see yet.",
    )
    tldr = VisibleTextField(
        "in 30 seconds",
        max_length=SHORT_TEXT,
        help_text="What a reader should know in 30 seconds (plain text).",
    )
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.DRAFT, db_index=True
    )
    publish_at = models.DateTimeField(
        "publish time",
        null=True,
        blank=True,
        help_text="Published summaries go live at this time; a future time schedules them.",
    )
    first_published_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
    )
    search_document = models.TextField(
        editable=False,
        default="",
        help_text="Title, 30-second text, takeaways and chapter text as plain text, for search.",
    )
    # Optimistic locking: every save increments it; a save based on an older value is refused.
    lock_version = models.PositiveIntegerField(default=1, editable=False)
    # Moves on every change to what the reader page's stored article is made of (the parts,
    # their citations' key phrases): an article stored for an older value is not shown.
    page_version = models.PositiveIntegerField(default=0, editable=False)
    # The latest word of a reviewer who sent the summary back to its editor.
    review_note = models.TextField(blank=True, editable=False)
    review_note_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
    )
    review_note_at = models.DateTimeField(null=True, blank=True, editable=False)
    # On a working copy: the video's fields as the changes would make them (title, blurb,
    # topics, people…), applied to the video when the changes are published. Readers see
    # the video as it is until then.
    video_changes = models.JSONField(default=dict, blank=True, editable=False)
    # On a working copy scheduled to go live: its lock_version when a reviewer scheduled
    # it. Any later save moves lock_version on, so what goes live is what was reviewed.
    scheduled_version = models.PositiveIntegerField(null=True, blank=True, editable=False)
    # On a working copy: which live part each of its parts was copied from, by model name
    # ({"chapter": {"<copy part id>": <live part id>}}), so that publishing the changes
    # edits those parts in place and history knows them as the same parts.
    part_origins = models.JSONField(default=dict, blank=True, editable=False)
    # On a working copy scheduled to go live: the kind of change and the public note the
    # reviewer gave ({"kind": "correction", "note": "…"}), recorded when it goes live.
    scheduled_change = models.JSONField(default=dict, blank=True, editable=False)
    # The reviewer asked to review the summary (and its changes): told alone when it is
    # sent for review. Set by editing.review.assign_reviewer, which checks they may publish.
    assigned_to = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="summaries_to_review",
        editable=False,
        verbose_name="reviewer",
    )

    objects = SummaryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "summaries"
        ordering = ["-publish_at", "-id"]
        permissions = [("publish_summary", "Can publish, schedule and unpublish summaries")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="published") | Q(publish_at__isnull=False),
                name="summary_published_has_time",
            ),
            # A summary has a video; a working copy has its live summary instead, and is
            # never published itself (publishing it copies it onto the live summary).
            models.CheckConstraint(
                condition=(Q(video__isnull=False) & Q(working_copy_of__isnull=True))
                | (
                    Q(video__isnull=True)
                    & Q(working_copy_of__isnull=False)
                    & ~Q(status="published")
                ),
                name="summary_video_or_working_copy",
            ),
        ]
        indexes = [
            # Covers the video id too (PostgreSQL): a list of live videos, or the count of
            # a channel's, reads the summaries' visibility from the index alone, not from
            # their wide rows.
            models.Index(
                fields=["status", "publish_at"], include=["video"], name="summary_visibility"
            )
        ]

    def __str__(self):
        if self.working_copy_of_id:
            return f"Changes to {self.working_copy_of}"
        # No quotes: the admin quotes it ("The summary “Summary of Speed” was changed").
        return f"Summary of {self.video}" if self.video_id else "New summary"

    @property
    def is_working_copy(self) -> bool:
        return self.working_copy_of_id is not None

    @property
    def summarised_video(self) -> Video:
        """The video this summary is about (a working copy's is its live summary's)."""
        return self.working_copy_of.video if self.working_copy_of_id else self.video

    def save(self, *args: Any, **kwargs: Any) -> None:
        """Save, refusing to overwrite a version someone else saved since this one was read."""
        if self.pk and not self._state.adding:
            bumped = Summary.objects.filter(pk=self.pk, lock_version=self.lock_version).update(
                lock_version=F("lock_version") + 1
            )
            if not bumped:
                raise EditConflict(self)
            self.lock_version += 1
            if kwargs.get("update_fields") is not None:
                kwargs["update_fields"] = {*kwargs["update_fields"], "lock_version", "updated_at"}
            else:
                # page_version moves only by update (editing.derived.page_changed): a copy of
                # the summary read before that must not write its older value back.
                kwargs["update_fields"] = _FIELDS_SAVED
        super().save(*args, **kwargs)

    def get_absolute_url(self):
        return self.summarised_video.get_absolute_url()

    def is_live(self, now=None) -> bool:
        return (
            self.status == self.Status.PUBLISHED
            and self.publish_at is not None
            and self.publish_at <= (now or timezone.now())
        )

    def is_scheduled(self, now=None) -> bool:
        return self.status == self.Status.PUBLISHED and not self.is_live(now)


class SummaryPage(models.Model):
    """The article of a live summary's reader page, rendered once and stored with it.

    Its 30 seconds, key points, takeaways, chapters and caveats as HTML, with what the page
    reads beside them (the reading time, the timed chapters for JSON-LD), so a page that
    misses every cache loads one row instead of four lists of parts and renders only what
    changes without an edit (people, sources' check results, related videos). `key` names
    what it was rendered from (summaries/reader/article.py): the summary's `page_version`,
    the video's address and the markup's version; a page whose key differs renders the
    article again. Rebuilt by the reader, never edited, so it has no revision history.
    """

    summary = models.OneToOneField(
        Summary, on_delete=models.CASCADE, primary_key=True, related_name="page"
    )
    key = models.CharField(max_length=300)
    html = models.TextField()
    data = models.JSONField(default=dict)

    def __str__(self):
        return f"Page of summary {self.summary_id}"


class EditConflict(Exception):
    """Raised when a summary was saved by someone else after it was read."""

    def __init__(self, summary):
        self.summary = summary
        super().__init__(f"{summary} was changed by someone else; reload it and reapply your edit.")


_FIELDS_SAVED = [
    field.name
    for field in Summary._meta.concrete_fields
    if not field.primary_key and field.name != "page_version"
]


@receiver(pre_save, sender=Summary)
def keep_lock_version_on_raw_save(sender, instance, raw, **kwargs):
    """Reverting a revision (a raw save) must not reset the lock version history excludes,
    and changes the page: its page_version moves on too."""
    if raw and instance.pk:
        current = sender.objects.filter(pk=instance.pk).values_list("lock_version", "page_version")
        lock_version, page_version = current.first() or (0, 0)
        instance.lock_version = lock_version + 1
        instance.page_version = page_version + 1


class SummaryItem(models.Model):
    """Something listed in order within a summary; positions are unique per summary."""

    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        abstract = True
        ordering = ["position"]

    @classmethod
    def position_constraint(cls, name):
        return models.UniqueConstraint(fields=["summary", "position"], name=name)


TIME_HELP = "Seconds into the video (optional)."


class KeyPoint(SummaryItem):
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="key_points")
    title = VisibleCharField(max_length=200)
    body = models.TextField(max_length=SHORT_TEXT, help_text="Markdown (one or two sentences).")
    body_html = models.TextField(editable=False, default="")
    time = models.PositiveIntegerField(null=True, blank=True, help_text=TIME_HELP)
    # Where the transcript supports it: see summaries/editing/receipts.py for its shape.
    pin = models.JSONField(null=True, blank=True, editable=False)

    class Meta(SummaryItem.Meta):
        constraints = [SummaryItem.position_constraint("keypoint_position_unique")]

    def __str__(self):
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.body_html = render_inline_markdown(self.body)
        super().save(*args, **kwargs)


class Takeaway(SummaryItem):
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="takeaways")
    text = models.TextField(
        max_length=SHORT_TEXT, help_text="Markdown; cite a source with [text](https://…)."
    )
    text_html = models.TextField(editable=False, default="")
    time = models.PositiveIntegerField(null=True, blank=True, help_text=TIME_HELP)
    # Where the transcript supports it: see summaries/editing/receipts.py for its shape.
    pin = models.JSONField(null=True, blank=True, editable=False)

    class Meta(SummaryItem.Meta):
        constraints = [SummaryItem.position_constraint("takeaway_position_unique")]

    def __str__(self):
        return self.text[:80]

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.text_html = render_inline_markdown(self.text)
        super().save(*args, **kwargs)


class Chapter(SummaryItem):
    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="chapters")
    title = VisibleCharField(max_length=200)
    synopsis = VisibleTextField(
        blank=True, max_length=SHORT_TEXT, help_text="Two sentences shown above the text."
    )
    body = models.TextField(
        max_length=MAX_SOURCE_CHARS,
        help_text="Edited transcript in Markdown; cite with [text](https://…).",
    )
    body_html = models.TextField(editable=False, default="")
    start_time = models.PositiveIntegerField(null=True, blank=True, help_text=TIME_HELP)
    # Where the transcript supports it: see summaries/editing/receipts.py for its shape.
    pin = models.JSONField(null=True, blank=True, editable=False)
    # The pins of the quotations in the body, in the order they appear.
    quote_pins = models.JSONField(default=list, blank=True, editable=False)

    class Meta(SummaryItem.Meta):
        constraints = [
            SummaryItem.position_constraint("chapter_position_unique"),
            models.CheckConstraint(condition=~Q(body=""), name="chapter_body_not_empty"),
            models.CheckConstraint(condition=~Q(title=""), name="chapter_title_not_empty"),
        ]

    def __str__(self):
        return self.title

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.body_html = render_markdown(self.body)
        super().save(*args, **kwargs)

    @property
    def anchor(self) -> str:
        return f"chapter-{self.position}"


class Caveat(SummaryItem):
    """An editorial note that qualifies a claim of the summary, a chapter, a key point or a
    takeaway (at most one of them)."""

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="caveats")
    chapter = models.ForeignKey(
        Chapter, on_delete=models.CASCADE, related_name="caveats", null=True, blank=True
    )
    key_point = models.ForeignKey(
        KeyPoint, on_delete=models.CASCADE, related_name="caveats", null=True, blank=True
    )
    takeaway = models.ForeignKey(
        Takeaway, on_delete=models.CASCADE, related_name="caveats", null=True, blank=True
    )
    claim = VisibleCharField(
        max_length=300,
        blank=True,
        help_text="The words it qualifies, e.g. “2.5 times faster” (shown beside them).",
    )
    text = models.TextField(max_length=SHORT_TEXT, help_text="The note, in Markdown.")
    text_html = models.TextField(editable=False, default="")
    # Where the transcript supports it: see summaries/editing/receipts.py for its shape.
    pin = models.JSONField(null=True, blank=True, editable=False)

    class Meta(SummaryItem.Meta):
        constraints = [
            SummaryItem.position_constraint("caveat_position_unique"),
            models.CheckConstraint(
                condition=Q(chapter__isnull=True, key_point__isnull=True)
                | Q(chapter__isnull=True, takeaway__isnull=True)
                | Q(key_point__isnull=True, takeaway__isnull=True),
                name="caveat_one_target",
            ),
        ]

    def __str__(self):
        return self.text[:80]

    def save(self, *args: Any, **kwargs: Any) -> None:
        self.text_html = render_inline_markdown(self.text)
        super().save(*args, **kwargs)
