"""Web archive copies of cited pages: captures asked of the archive, and the copies a
citation may fall back on, each checked to be the page as cited before readers see it."""

from django.db import models

from .sources import Citation, Source


class ArchiveCapture(models.Model):
    """One request to a web archive (Save Page Now) to capture a cited page."""

    class State(models.TextChoices):
        QUEUED = "queued", "Waiting for its turn"
        PENDING = "pending", "The archive is capturing it"
        SUCCESS = "success", "Captured"
        FAILED = "failed", "The archive could not capture it"
        TIMED_OUT = "timed_out", "The archive never finished"
        SKIPPED = "skipped", "Not asked (opted out or address not allowed)"

    source = models.ForeignKey(Source, on_delete=models.CASCADE, related_name="archive_captures")
    state = models.CharField(max_length=20, choices=State.choices, default=State.QUEUED)
    job_id = models.CharField(max_length=200, blank=True)
    # Set only from the archive's own answer: the copy's address and time.
    snapshot_url = models.URLField(max_length=2200, blank=True)
    captured_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()
    requested_at = models.DateTimeField(
        null=True, blank=True, help_text="When the last request about it went to the archive."
    )
    finished_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="Capture requests sent.")
    polls = models.PositiveSmallIntegerField(default=0, help_text="Status requests sent.")
    error = models.CharField(max_length=500, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # One capture in progress per source: asking twice never sends two requests.
            models.UniqueConstraint(
                fields=["source"],
                condition=models.Q(state__in=["queued", "pending"]),
                name="archivecapture_one_open_per_source",
            )
        ]
        indexes = [models.Index(fields=["source", "-created_at"], name="archivecapture_latest")]

    def __str__(self):
        return f"{self.source} ({self.state})"


class ArchivedCopy(models.Model):
    """The archived copy a citation falls back on when its live page fails it.

    `url` is empty when a look-up found no copy that is the page as cited. `shown` is set
    while the live page is dead or no longer holds the claim: readers then see the copy.
    """

    citation = models.OneToOneField(
        Citation, on_delete=models.CASCADE, related_name="archived_copy"
    )
    url = models.URLField("archived copy", max_length=2200, blank=True)
    captured_at = models.DateTimeField(null=True, blank=True)
    # The key phrase the copy was found to hold, and where.
    key_phrase = models.CharField(max_length=200, blank=True)
    excerpt = models.TextField(blank=True)
    verified_at = models.DateTimeField(null=True, blank=True)

    class Match(models.TextChoices):
        DIGEST = "digest", "The payload of the page as cited (its evidence's digest)"
        PASSAGE = "passage", "The passage recorded around the key phrase when cited"

    # How the copy was found to be the page as cited (summaries/archive/matching.py);
    # blank for a copy that never was, which readers are not shown.
    matched_by = models.CharField(max_length=10, choices=Match.choices, blank=True)
    looked_up_at = models.DateTimeField()
    shown = models.BooleanField(default=False, help_text="Readers see this copy beside the link.")

    class Meta:
        ordering = ["-looked_up_at", "-id"]
        verbose_name_plural = "archived copies"
        indexes = [
            models.Index(
                fields=["shown"], name="archivedcopy_shown", condition=models.Q(shown=True)
            )
        ]

    def __str__(self):
        return self.url or f"no archived copy of {self.citation_id}"

    @property
    def verified(self) -> bool:
        return bool(self.url) and self.verified_at is not None and bool(self.matched_by)
