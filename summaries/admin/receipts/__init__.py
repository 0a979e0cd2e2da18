"""Receipts in the admin: a video's transcript imported from its page or its summary's, the
summary page's panel of pins, a page per statement to pin it, and the Transcript pages.

Who may do what, what a pin says and what publishing refuses are decided in
`summaries.editing` (`pinning`, `receipts`, `gate`); these modules find what a request names,
calls those services with the signed-in user and shows the result. The summary page shows
only the stored pins: the transcript's words are read on a statement's own page, when an
editor asks for suggestions, and for the chapters suggested to a summary without any
(`chapter_suggestions`).

shared: the names and limits the others use, and AdminMixin; upload: importing a transcript;
pins: the panel's rows and the pin actions; page: ReceiptsMixin for the summary page and what
publishing refuses; video: VideoTranscriptsMixin and TranscriptAdmin (registered on import).
"""

from .page import ReceiptsMixin, publication_problems_html, refusal_html
from .pins import PinRow
from .shared import STATUSES, AdminMixin
from .video import TranscriptAdmin, VideoTranscriptsMixin

__all__ = [
    "STATUSES",
    "AdminMixin",
    "PinRow",
    "ReceiptsMixin",
    "TranscriptAdmin",
    "VideoTranscriptsMixin",
    "publication_problems_html",
    "refusal_html",
]
