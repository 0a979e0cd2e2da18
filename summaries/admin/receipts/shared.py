"""What the receipts modules share: the names of parts and pin statuses, the panel's
limits, and AdminMixin, what their mixins use of the ModelAdmin they are mixed into."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from summaries.editing.items import PartModel
from summaries.models import Caveat, Chapter, KeyPoint, Takeaway

if TYPE_CHECKING:
    from django.contrib.admin import AdminSite


IMPORT_TEMPLATE = "admin/summaries/transcript/import.html"
PIN_TEMPLATE = "admin/summaries/transcript/pin.html"

# How a URL names each kind of part ("keypoint-12"), and what a page calls it.
PART_MODELS: dict[str, PartModel] = {
    "keypoint": KeyPoint,
    "takeaway": Takeaway,
    "chapter": Chapter,
    "caveat": Caveat,
}
PART_NAMES = {KeyPoint: "Key point", Takeaway: "Takeaway", Chapter: "Chapter", Caveat: "Caveat"}
# What the panel reads of each part: never a chapter's body.
PANEL_FIELDS = {
    KeyPoint: ["summary_id", "position", "title", "pin"],
    Takeaway: ["summary_id", "position", "text", "pin"],
    Chapter: ["summary_id", "position", "title", "pin", "quote_pins"],
    Caveat: ["summary_id", "position", "text", "pin"],
}
# Each status in words and a symbol, so that it is never told by colour alone.
STATUSES = {
    "verbatim": ("✓", "Verbatim"),
    "paraphrase": ("≈", "Paraphrase"),
    "not_found": ("✗", "Not found"),
    "contradicted": ("≠", "Contradicted"),
    "mis_timed": ("⏱", "Mis-timed"),
}
NOT_PINNED = ("○", "Not pinned")
# Words of a pin the summary page shows (a statement's own page shows all it keeps).
PANEL_WORDS = 16
# Words shown around a suggestion on a statement's page.
CONTEXT_WORDS = 8
# Pin actions the panel and a statement's page post, and the service each one calls.
ACTIONS = ("accept", "move", "reject", "approve", "override", "approve_quote", "override_quote")
# A span a new transcript proposed for a pin (receipts.verified): taken, or the pin kept.
PROPOSAL_ACTIONS = ("take_proposal", "keep_pin", "take_proposal_quote", "keep_pin_quote")
NOTE_MAX_LENGTH = 2000


class AdminMixin:
    """What the mixins below use of the ModelAdmin they are mixed into."""

    if TYPE_CHECKING:
        admin_site: AdminSite
        model: type[Any]

        def has_view_or_change_permission(self, request: Any, obj: Any = None) -> bool: ...
