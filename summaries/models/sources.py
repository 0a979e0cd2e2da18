"""Cited sources: each URL once, its checks, and the citations that point at it."""

from django.conf import settings
from django.db import models
from django.utils import timezone

from .base import TimestampedModel
from .summary import Chapter, KeyPoint, Summary, Takeaway


class Source(TimestampedModel):
    """One normalised URL, shared by every citation of it, with its latest check result."""

    class State(models.TextChoices):
        UNCHECKED = "unchecked", "Not checked yet"
        OK = "ok", "OK"
        REDIRECTED = "redirected", "Redirected"
        BROKEN = "broken", "Broken"
        UNVERIFIABLE = "unverifiable", "Unverifiable (bot wall)"
        BLOCKED = "blocked", "Blocked (address not allowed)"
        ERROR = "error", "Error"

    url = models.URLField("URL", max_length=2000, unique=True)
    host = models.CharField(max_length=255, db_index=True)
    state = models.CharField(max_length=20, choices=State.choices, default=State.UNCHECKED)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    final_url = models.URLField(max_length=2000, blank=True)
    title = models.CharField(max_length=500, blank=True)
    # The page's meta description, shown to editors beside the link with its title.
    description = models.CharField(max_length=1000, blank=True)
    content_type = models.CharField(max_length=200, blank=True)
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    fingerprint = models.CharField(max_length=64, blank=True)
    error_class = models.CharField(max_length=40, blank=True)
    last_checked_at = models.DateTimeField(null=True, blank=True)
    next_check_at = models.DateTimeField(null=True, blank=True)
    redirect_chain = models.JSONField(
        default=list, blank=True, help_text="Redirects of the latest check: [url, status] pairs."
    )
    error = models.CharField(max_length=500, blank=True, help_text="Detail of the latest error.")
    ignored = models.BooleanField(default=False, help_text="Ignored sources are never checked.")
    # A check in progress: the token of the batch that claimed the source and when the
    # claim lapses (a lost batch is then claimed again by the sweeper).
    check_token = models.CharField(max_length=32, blank=True, editable=False)
    claimed_until = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["url"]
        indexes = [
            models.Index(fields=["state", "next_check_at"], name="source_due"),
            models.Index(fields=["ignored", "next_check_at"], name="source_next_check"),
        ]

    def __str__(self):
        return self.url


class SourceCheck(models.Model):
    """One check of a source, kept as history (bounded per source by the checking service)."""

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="checks")
    # The batch that made the check: a batch redone after a lost worker writes no second row.
    token = models.CharField(max_length=32)
    checked_at = models.DateTimeField()
    state = models.CharField(max_length=20, choices=Source.State.choices)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    final_url = models.URLField(max_length=2000, blank=True)
    redirect_chain = models.JSONField(default=list, blank=True)
    title = models.CharField(max_length=500, blank=True)
    description = models.CharField(max_length=1000, blank=True)
    content_type = models.CharField(max_length=200, blank=True)
    response_ms = models.PositiveIntegerField(null=True, blank=True)
    fingerprint = models.CharField(max_length=64, blank=True)
    error_class = models.CharField(max_length=40, blank=True)
    error = models.CharField(max_length=500, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["source", "-checked_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "token"], name="sourcecheck_once_per_batch")
        ]
        indexes = [models.Index(fields=["source", "-checked_at"], name="sourcecheck_history")]

    def __str__(self):
        return f"{self.source} at {self.checked_at:%Y-%m-%d %H:%M}: {self.state}"


class Citation(models.Model):
    """A link in a summary's text: which source it cites and the claim it supports.

    A citation keeps its row while its link stays in the summary, wherever it moves:
    evidence, the archived copy, a confirmation and an edited key phrase hang off it. A
    deleted part leaves its citations without a part until the save that deleted it finds
    them again in the text (editing.derived.sync_citations) or deletes them.
    """

    summary = models.ForeignKey(Summary, on_delete=models.CASCADE, related_name="citations")
    # Indexed where set (Meta.indexes): a citation is in one part, never confirmed at first.
    chapter = models.ForeignKey(
        Chapter,
        on_delete=models.SET_NULL,
        related_name="citations",
        null=True,
        blank=True,
        db_index=False,
    )
    key_point = models.ForeignKey(
        KeyPoint,
        on_delete=models.SET_NULL,
        related_name="citations",
        null=True,
        blank=True,
        db_index=False,
    )
    takeaway = models.ForeignKey(
        Takeaway,
        on_delete=models.SET_NULL,
        related_name="citations",
        null=True,
        blank=True,
        db_index=False,
    )
    source = models.ForeignKey(Source, on_delete=models.PROTECT, related_name="citations")
    position = models.PositiveSmallIntegerField(default=0)
    url = models.URLField("URL as written", max_length=2000)
    link_text = models.CharField(max_length=500)
    claim = models.TextField(help_text="The sentence the link supports.")
    key_phrase = models.CharField(
        max_length=200,
        blank=True,
        help_text="A phrase or figure from the claim the source must contain.",
    )
    key_phrase_edited = models.BooleanField(
        default=False, help_text="Set when an editor changed the phrase; extraction keeps it."
    )

    class Verdict(models.TextChoices):
        UNCHECKED = "unchecked", "Not checked yet"
        SUPPORTED = "supported", "Supported"
        NOT_FOUND = "not_found", "Not found on source"
        CHANGED = "changed", "Source changed since confirmed"
        UNAVAILABLE = "unavailable", "Source could not be read"
        NO_PHRASE = "no_phrase", "No key phrase"

    verdict = models.CharField(
        max_length=20, choices=Verdict.choices, default=Verdict.UNCHECKED, editable=False
    )
    verdict_excerpt = models.TextField(
        blank=True, editable=False, help_text="Where the key phrase was found in the latest check."
    )
    verdict_checked_at = models.DateTimeField(null=True, blank=True, editable=False)
    confirmed_fingerprint = models.CharField(max_length=64, blank=True, editable=False)
    confirmed_excerpt = models.TextField(blank=True, editable=False)
    confirmed_at = models.DateTimeField(null=True, blank=True, editable=False)
    # When the link was first written into the summary: the date of linking that Robust
    # Links gives readers (data-versiondate). A working copy's citation carries its live
    # row's, and publishing keeps it, so an edit never moves it.
    linked_at = models.DateTimeField(default=timezone.now, editable=False)
    confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        editable=False,
        db_index=False,
    )

    class Meta:
        # Citations are rebuilt from the text on every save, so their order needs no constraint.
        ordering = ["summary", "position", "id"]
        # Rows are found by these columns only where they are set (deleting a part or a
        # user: `chapter_id IN (…)`), so only those rows are indexed: a save of thousands
        # of citations writes one part index entry per row instead of four entries.
        indexes = [
            models.Index(
                fields=[name],
                name=f"citation_{name}",
                condition=models.Q(**{f"{name}__isnull": False}),
            )
            for name in ("chapter", "key_point", "takeaway", "confirmed_by")
        ]

    def __str__(self):
        return f"{self.link_text} → {self.url}"
