"""The versions of a summary readers saw, recorded as they go live (Memento, RFC 7089).

Only what readers can see is recorded: a first publication (at its publish time, which
may lie ahead) and changes going live (now, or when scheduled changes are due). Drafts,
working copies and reviewers' notes never are. A version recorded for a time still ahead
is deleted when the summary is rescheduled, unpublished or changed before that time:
readers never saw it. The article itself is filled in by the reader
(summaries.reader.memento), which renders it as the live page shows it.
"""

from datetime import datetime

from django.db import transaction
from django.db.models import Max

from summaries.models import PublishedVersion, Summary


def version_time(moment: datetime) -> datetime:
    """A version's time: whole seconds, as HTTP dates (Memento-Datetime) tell it."""
    return moment.replace(microsecond=0)


@transaction.atomic
def record_live_version(*, summary: Summary, now: datetime) -> PublishedVersion | None:
    """Record the version of the live or scheduled `summary` readers see from now (or from
    its publish time when that lies ahead).

    Versions recorded for a time after `now` are deleted first (they never went live).
    Nothing is recorded when the latest version has the same content (`page_version`)
    and title. Two versions in the same second are one: the later replaces the earlier.
    Returns the version recorded, or None.
    """
    forget_versions_never_live(summary=summary, now=now)
    live_from = version_time(max(summary.publish_at or now, now))
    title = summary.summarised_video.title
    page_version = Summary.objects.values_list("page_version", flat=True).get(pk=summary.pk)
    latest = PublishedVersion.objects.filter(summary=summary).order_by("live_from").last()
    if latest is not None and (latest.page_version, latest.title) == (page_version, title):
        return None
    version = PublishedVersion.objects.filter(summary=summary, live_from=live_from).first()
    if version is None:
        version = PublishedVersion(summary=summary, live_from=live_from)
    version.page_version = page_version
    version.title = title
    version.html = ""  # rendered again by the reader from the summary as it is now
    version.save()
    return version


def forget_versions_never_live(*, summary: Summary, now: datetime) -> int:
    """Delete the versions of `summary` recorded for a time after `now`; how many."""
    deleted, _ = PublishedVersion.objects.filter(summary=summary, live_from__gt=now).delete()
    return deleted


def record_current_versions(*, now: datetime) -> int:
    """Record the version of each live summary that has none (one published before
    versions were recorded): its content as it is, from when it went live (its publish
    time, or the last change that went live after it). Returns how many were recorded;
    running it again records nothing."""
    recorded = 0
    missing = (
        # Working copies are never published: these are summaries themselves.
        Summary.objects.published(now)
        .filter(published_versions__isnull=True)
        .select_related("video")
        .annotate(last_change=Max("corrections__published_at"))
        .order_by("pk")
    )
    for summary in missing.iterator(chunk_size=200):
        since = max(filter(None, (summary.publish_at, summary.last_change)))
        with transaction.atomic():
            PublishedVersion.objects.create(
                summary=summary,
                live_from=version_time(since),
                page_version=summary.page_version,
                title=summary.summarised_video.title,
            )
        recorded += 1
    return recorded
