"""Background work. Tasks take ids, re-fetch, and call one service; they hold no rules."""

from celery import shared_task

from . import services
from .models import Summary


@shared_task(acks_late=True, ignore_result=True)
def rerender_summary(summary_id: int) -> None:
    """Re-render a summary's Markdown and rebuild its citations (idempotent)."""
    summary = Summary.objects.filter(pk=summary_id).first()
    if summary is None:
        return
    services.rerender_summary(summary=summary)
