"""What may be published: one rule set for every road to readers.

A first publication (workflow.publish_summary), the changes of a live summary going live
(copies.publish_changes) and the scheduler publishing them when due
(copies.publish_due_changes) all ask `check_publishable`, so content that no save would
accept (a restored revision with a chapter after the video's end, a pin the transcript
no longer supports) never reaches readers by one road the others close.
"""

from django.core.exceptions import ValidationError

from summaries.models import Summary

from . import receipts, rules, video_changes


def check_publishable(summary: Summary) -> None:
    """Raise ValidationError when `summary` (a draft, a summary in review, or the working
    copy of a live one) may not go live as it is stored: it has no 30-second text, a key
    point, takeaway or chapter starts at or after the end of its video (as its
    unpublished changes would make the video), or a pin is refused
    (receipts.PublicationRefused, which names each statement). Verifies its pins against
    the transcript as it is now (receipts.check_publishable)."""
    if not summary.tldr.strip():
        raise ValidationError({"tldr": "A summary needs its 30-second text before publishing."})
    duration = video_changes.duration_of(summary)
    late = rules.parts_after_end(summary, duration) if duration else []
    if late:
        raise ValidationError(["This cannot be published:", *late])
    receipts.check_publishable(summary)
