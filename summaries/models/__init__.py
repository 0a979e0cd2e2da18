"""The content model: channels, people, videos and their curated summaries with cited sources.

One module per subject; every name is imported from here (`from summaries.models import
Video`), which is also where migrations find the custom fields.
"""

import reversion

from summaries.text.durations import MAX_SECONDS

from .archives import ArchiveCapture, ArchivedCopy
from .base import (
    LANGUAGE_CHOICES,
    LANGUAGE_CODES,
    SHORT_TEXT,
    PublicationStatus,
    TimestampedModel,
    VisibleCharField,
    VisibleTextField,
    live_q,
)
from .catalogue import (
    THUMBNAIL_STORAGE,
    Appearance,
    Channel,
    ListFacets,
    Organisation,
    Person,
    RelatedLink,
    StoredThumbnail,
    Topic,
    Video,
    VideoQuerySet,
    validate_domains,
)
from .corrections import Correction, CorrectionQuerySet
from .evidence import CitationEvidence, EvidenceRecord
from .notifications import (
    Notification,
    NotificationEvent,
    NotificationKind,
    NotificationPreferences,
    NotificationQuerySet,
)
from .pagecache import CachePurge, ContentGeneration
from .pin_revisions import PinRevision, RevisionAction
from .review import REVIEW_MESSAGE_CHARS, ReviewMessage
from .sources import Citation, Source, SourceCheck
from .subscriptions import Digest, Subscriber, Subscription, SubscriptionQuerySet
from .summary import (
    Caveat,
    Chapter,
    EditConflict,
    KeyPoint,
    Summary,
    SummaryItem,
    SummaryPage,
    SummaryQuerySet,
    Takeaway,
)
from .transcripts import Transcript, TranscriptQuerySet, segments_digest
from .versions import PublishedVersion, PublishedVersionQuerySet
from .webhooks import (
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookEventType,
    new_webhook_secret,
)

__all__ = [
    "ArchiveCapture",
    "ArchivedCopy",
    "LANGUAGE_CHOICES",
    "LANGUAGE_CODES",
    "MAX_SECONDS",
    "SHORT_TEXT",
    "THUMBNAIL_STORAGE",
    "Appearance",
    "Caveat",
    "Channel",
    "ListFacets",
    "Chapter",
    "Citation",
    "CitationEvidence",
    "CachePurge",
    "ContentGeneration",
    "Correction",
    "CorrectionQuerySet",
    "Digest",
    "EditConflict",
    "EvidenceRecord",
    "KeyPoint",
    "Notification",
    "NotificationEvent",
    "NotificationKind",
    "NotificationPreferences",
    "NotificationQuerySet",
    "Organisation",
    "Person",
    "PublicationStatus",
    "PinRevision",
    "RevisionAction",
    "PublishedVersion",
    "PublishedVersionQuerySet",
    "REVIEW_MESSAGE_CHARS",
    "RelatedLink",
    "ReviewMessage",
    "Source",
    "SourceCheck",
    "Subscriber",
    "Subscription",
    "SubscriptionQuerySet",
    "StoredThumbnail",
    "Summary",
    "SummaryItem",
    "SummaryPage",
    "SummaryQuerySet",
    "Takeaway",
    "TimestampedModel",
    "Topic",
    "Transcript",
    "TranscriptQuerySet",
    "Video",
    "live_q",
    "VideoQuerySet",
    "VisibleCharField",
    "VisibleTextField",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "WebhookEventType",
    "new_webhook_secret",
    "segments_digest",
    "validate_domains",
]

# Revision history: a summary's revision holds its ordered parts, so restoring one brings back
# the whole summary as it was. Citations are not stored: they are rebuilt from the text on save.
reversion.register(Channel)
reversion.register(Organisation)
reversion.register(Person)
reversion.register(Topic)
reversion.register(Appearance)
reversion.register(Video, follow=["appearances"])
reversion.register(Transcript)
reversion.register(KeyPoint)
reversion.register(Takeaway)
reversion.register(Chapter)
reversion.register(Caveat)
reversion.register(
    Summary,
    follow=["key_points", "takeaways", "chapters", "caveats"],
    # Who is asked to review is not content: restoring a revision leaves it as it is.
    exclude=["lock_version", "page_version", "assigned_to", "scheduled_change"],
)
