"""Readers' view of updates and corrections: dated notes, what changed, the site-wide list."""

from datetime import datetime
from typing import NamedTuple

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from summaries.models import Correction


def what_changed_html(changes: list[dict]) -> SafeString:
    """What changed (editing.corrections.changes_data) as HTML: per changed field its
    label, the words taken out in <del> and the words put in in <ins>, the rest as it was."""
    return format_html(
        '<dl class="what-changed">{}</dl>',
        format_html_join(
            "",
            "<dt>{}</dt>{}{}",
            (
                (
                    item["label"],
                    _side(item["old"], "del", "Before"),
                    _side(item["new"], "ins", "After"),
                )
                for item in changes
            ),
        ),
    )


def _side(runs: list, tag: str, name: str) -> SafeString:
    if not runs:
        return SafeString("")
    marked = format_html_join(
        "",
        "{}",
        (
            (format_html(f"<{tag}>{{}}</{tag}>", text) if changed else text,)
            for text, changed in runs
        ),
    )
    return format_html(
        '<dd class="{}"><span class="visually-hidden">{}: </span>{}</dd>', tag, name, marked
    )


class PageCorrections(NamedTuple):
    """A summary page's published changes: those readers are shown (updates and
    corrections, newest first, each with `what_changed` HTML to print) and when the last
    change of any kind went live (None: never changed since its publication)."""

    shown: list[Correction]
    last_change_at: datetime | None


def for_page(summary) -> PageCorrections:
    """The published changes of a summary page (one query)."""
    found = list(Correction.objects.filter(summary=summary))
    shown = [correction for correction in found if correction.is_public]
    for correction in shown:
        # For the template to print as it is (templates do not compute).
        correction.what_changed = what_changed_html(correction.changes)  # type: ignore[attr-defined]
    return PageCorrections(shown, max((c.published_at for c in found), default=None))


def site_list():
    """Updates and corrections of live summaries, newest first, with their videos."""
    return (
        Correction.objects.public()
        .live()
        .select_related("summary__video__channel")
        .order_by("-published_at", "-id")
    )
