"""Celery tasks of web archive copies: thin, they take ids and call one service."""

import logging

from summaries.background import TRANSIENT_ERRORS, background_task

from .copies import ArchiveUnavailable

logger = logging.getLogger(__name__)


@background_task(name="summaries.tasks.review_archived_copies", soft_time_limit=120)
def review_archived_copies(source_ids: list[int]) -> None:
    """After checks of these sources were recorded: show, withdraw or look up copies."""
    from . import copies

    copies.review_sources(source_ids=source_ids)


@background_task(name="summaries.tasks.advance_archive_capture", soft_time_limit=120)
def advance_archive_capture(capture_id: int) -> None:
    """One step of a capture (request, or status); queued again for the next step."""
    from . import captures

    delay = captures.advance_capture(capture_id=capture_id)
    if delay is not None:
        advance_archive_capture.apply_async((capture_id,), countdown=delay)


@background_task(
    name="summaries.tasks.find_archived_copy",
    soft_time_limit=300,
    autoretry_for=(*TRANSIENT_ERRORS, ArchiveUnavailable),
    retry_backoff=60,
)
def find_archived_copy(citation_id: int) -> None:
    """Look up and verify an archived copy for a citation whose page fails it."""
    from . import copies

    copies.find_copy(citation_id=citation_id)


@background_task(name="summaries.tasks.sweep_archive_captures", soft_time_limit=60)
def sweep_archive_captures() -> None:
    """Queue again captures whose task was lost (untouched for an hour)."""
    from datetime import timedelta

    from . import captures

    for capture_id in captures.open_captures(idle_for=timedelta(hours=1)):
        advance_archive_capture.delay(capture_id)
