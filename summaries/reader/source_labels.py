"""The labels readers see beside cited sources: made in summaries.checking.source_labels,
where recording check results compares them too, and named here for the reader's code."""

from summaries.checking.source_labels import (
    ARCHIVED,
    CHECKED,
    CLAIM_CHANGED,
    CLAIM_MISSING,
    MODIFIERS,
    MOVED,
    NEUTRAL,
    PENDING,
    UNAVAILABLE,
    ArchivedLabel,
    SourceLabel,
    archived_label,
    label_of,
    needs_archived_copy,
    source_label,
)

__all__ = [
    "ARCHIVED",
    "CHECKED",
    "CLAIM_CHANGED",
    "CLAIM_MISSING",
    "MODIFIERS",
    "MOVED",
    "NEUTRAL",
    "PENDING",
    "UNAVAILABLE",
    "ArchivedLabel",
    "SourceLabel",
    "archived_label",
    "label_of",
    "needs_archived_copy",
    "source_label",
]
