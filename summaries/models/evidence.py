"""The evidence vault: cited pages kept as WARC records, and what each citation relied on."""

from django.db import models

from .sources import Citation, Source


class EvidenceRecord(models.Model):
    """One stored response (a WARC file in the evidence storage), kept once per payload."""

    digest = models.CharField(
        max_length=64, unique=True, help_text="sha256 of the payload (the body), in hex."
    )
    name = models.CharField(max_length=300, help_text="The file's name in the evidence storage.")
    size = models.PositiveBigIntegerField(help_text="Bytes stored (the gzipped WARC file).")
    url = models.URLField("URL", max_length=2000, help_text="The URL that answered.")
    status_code = models.PositiveSmallIntegerField()
    content_type = models.CharField(max_length=200, blank=True)
    # The source whose storage allowance the record counts against (the first to need it).
    source = models.ForeignKey(
        Source, on_delete=models.SET_NULL, null=True, blank=True, related_name="evidence_records"
    )
    captured_at = models.DateTimeField()
    last_used_at = models.DateTimeField(
        help_text="The latest capture that needed this record; retention counts from it."
    )

    class Meta:
        ordering = ["-captured_at", "-id"]

    def __str__(self):
        return f"{self.url} ({self.digest[:12]}…)"


class CitationEvidence(models.Model):
    """What a citation's source said: when it was cited, and at the latest check."""

    class Kind(models.TextChoices):
        CITED = "cited", "When cited"
        LATEST = "latest", "Latest check"

    class State(models.TextChoices):
        STORED = "stored", "Stored"
        OVER_RECORD_CAP = "over_record_cap", "Not stored: the response is over the per-record cap"
        OVER_SOURCE_CAP = "over_source_cap", "Not stored: the source's allowance is used up"
        OVER_TOTAL_CAP = "over_total_cap", "Not stored: the vault is full"
        WRITE_FAILED = "write_failed", "Not stored: the storage failed"

    # No database constraint and no cascade in Python: citations are deleted in bulk by
    # every save, and their evidence rows are swept by the retention task instead.
    citation = models.ForeignKey(
        Citation,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="evidence",
    )
    kind = models.CharField(max_length=10, choices=Kind.choices)
    state = models.CharField(max_length=20, choices=State.choices, default=State.STORED)
    record = models.ForeignKey(
        EvidenceRecord, on_delete=models.PROTECT, null=True, blank=True, related_name="uses"
    )
    passage = models.TextField(blank=True, help_text="Where the key phrase was found.")
    digest = models.CharField(max_length=64, help_text="sha256 of the payload, in hex.")
    fingerprint = models.CharField(max_length=64, blank=True)
    url = models.URLField("URL", max_length=2000)
    captured_at = models.DateTimeField()

    class Meta:
        ordering = ["citation", "kind"]
        constraints = [
            models.UniqueConstraint(fields=["citation", "kind"], name="evidence_once_per_kind")
        ]

    def __str__(self):
        return f"{self.citation_id} {self.kind} at {self.captured_at:%Y-%m-%d %H:%M}"


# A citation's "cited" evidence read with it, as annotations (the API's citations).
EVIDENCE_FIELDS = ("evidence_passage", "evidence_captured_at", "evidence_digest", "evidence_state")


def cited_evidence() -> dict[str, models.Subquery]:
    """Annotations of a Citation queryset: its "cited" evidence's passage, capture time,
    digest and state (None without one), in the same query."""
    cited = CitationEvidence.objects.filter(
        citation=models.OuterRef("pk"), kind=CitationEvidence.Kind.CITED
    )
    return {
        f"evidence_{name}": models.Subquery(cited.values(name)[:1])
        for name in ("passage", "captured_at", "digest", "state")
    }
