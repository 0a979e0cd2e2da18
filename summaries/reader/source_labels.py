"""The labels readers see beside cited sources: made in summaries.checking.source_labels,
where recording check results compares them too, and named here for the reader's code."""

from summaries.checking.source_labels import (
    CHECKED,
    CLAIM_CHANGED,
    CLAIM_MISSING,
    MODIFIERS,
    MOVED,
    NEUTRAL,
    PENDING,
    UNAVAILABLE,
    SourceLabel,
    label_of,
    source_label,
)

__all__ = [
    "CHECKED",
    "CLAIM_CHANGED",
    "CLAIM_MISSING",
    "MODIFIERS",
    "MOVED",
    "NEUTRAL",
    "PENDING",
    "UNAVAILABLE",
    "SourceLabel",
    "label_of",
    "source_label",
]
