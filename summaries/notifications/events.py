"""Who is told of what: one function per event, called in the transaction of the change.

Each writes one NotificationEvent under a key that names the event (a second call for the
same event writes nothing) and one Notification per person told, then queues each
notification's e-mail for after the commit. The person who acted is never told of their
own act. A kind a person turned off (NotificationPreferences) is neither put in their
inbox nor e-mailed. Only active staff are told: the inbox lives in the admin.

Subjects and bodies are plain text. They quote titles, notes and claims editors typed, so
they are never marked safe: the inbox escapes them and the e-mail has no HTML part.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.urls import reverse
from django.utils import timezone
from reversion.models import Version

from summaries.background import queue_after_commit
from summaries.models import (
    Citation,
    Notification,
    NotificationEvent,
    NotificationKind,
    NotificationPreferences,
    ReviewMessage,
    Source,
    Summary,
)

EMAIL_TASK = "summaries.tasks.send_notification_email"
Kind = NotificationKind
# Scheduled summaries that went live this long ago or less are told of by the sweeper; one
# missed for longer (workers down for hours) is not told of late.
WENT_LIVE_WINDOW = timedelta(hours=1)
SUBJECT_CHARS = 200
QUOTE_CHARS = 300


# --- Who ---------------------------------------------------------------------------------


def reviewers() -> list:
    """Active staff who may publish (summaries.publish_summary, or superusers)."""
    users = get_user_model().objects.with_perm(
        "summaries.publish_summary", is_active=True, include_superusers=True
    )
    return list(users.filter(is_staff=True).order_by("pk"))


def editors_of(summary: Summary) -> list:
    """The active staff who wrote a summary: who created or last saved it or its working
    copy (a copy's live summary counts too), and every user of their revisions."""
    related = [summary]
    if summary.working_copy_of_id:
        related.append(summary.working_copy_of)
    else:
        related.extend(Summary.objects.filter(working_copy_of=summary))
    ids = {pk for s in related for pk in (s.created_by_id, s.updated_by_id)}
    ids |= set(
        Version.objects.get_for_model(Summary)
        .filter(object_id__in=[str(s.pk) for s in related])
        .values_list("revision__user_id", flat=True)
    )
    ids.discard(None)
    users = get_user_model().objects.filter(pk__in=ids, is_active=True, is_staff=True)
    return list(users.order_by("pk"))


# --- Writing an event ---------------------------------------------------------------------


def tell(
    *,
    kind: str,
    key: str,
    recipients: Iterable,
    subject: str,
    body: str,
    summary: Summary | None = None,
    actor=None,
    now: datetime | None = None,
) -> list[Notification]:
    """Record an event under `key` and a notification for each recipient who wants this
    kind, each e-mailed after commit. Returns the notifications written: none when the
    event was recorded before (the key is taken) or nobody wants it."""
    now = now or timezone.now()
    actor = actor if actor is not None and actor.is_authenticated else None
    event, created = NotificationEvent.objects.get_or_create(
        key=key,
        defaults={
            "kind": kind,
            "summary": summary,
            "actor": actor,
            "subject": _one_line(subject)[:SUBJECT_CHARS],
            "body": body,
            "link": _link(summary) if summary is not None else "",
            "created_at": now,
        },
    )
    if not created:
        return []
    people = {user.pk: user for user in recipients if actor is None or user.pk != actor.pk}
    turned_off = set(
        NotificationPreferences.objects.filter(
            user_id__in=list(people), **{kind: False}
        ).values_list("user_id", flat=True)
    )
    notifications = Notification.objects.bulk_create(
        Notification(event=event, recipient_id=pk, created_at=now)
        for pk in sorted(people)
        if pk not in turned_off
    )
    for notification in notifications:
        queue_after_commit(EMAIL_TASK, notification.pk)
    return notifications


# --- The workflow -------------------------------------------------------------------------


def assignee_of(summary: Summary) -> list:
    """The reviewer assigned to a summary (a working copy's: its summary's), when there is
    one who may still review (active staff who may publish); else nobody."""
    original = summary.working_copy_of if summary.is_working_copy else summary
    if original.assigned_to_id is None:
        return []
    return [user for user in reviewers() if user.pk == original.assigned_to_id]


def summary_submitted(*, summary: Summary, by=None, message: str = "") -> list[Notification]:
    """A summary (or the changes to a published one) was sent for review: tell its
    assigned reviewer, or every reviewer when none is assigned (or the one assigned may
    no longer review), with the sender's `message` to the reviewer when they wrote one."""
    title = _title(summary)
    what = f'Changes to "{title}"' if summary.is_working_copy else f'"{title}"'
    body = f"{what} was sent for review by {_name(by)}."
    if message:
        body += f" Their message:\n\n{message}"
    return tell(
        kind=Kind.SUBMITTED,
        key=f"submitted:{summary.pk}:{uuid.uuid4().hex}",
        recipients=assignee_of(summary) or reviewers(),
        subject=f"Review requested: {title}",
        body=body,
        summary=summary,
        actor=by,
    )


def summary_sent_back(*, summary: Summary, by=None) -> list[Notification]:
    """A reviewer sent a summary back with a note: tell its editors, with the note."""
    title = _title(summary)
    note = summary.review_note or "(no note)"
    return tell(
        kind=Kind.SENT_BACK,
        key=f"sent_back:{summary.pk}:{uuid.uuid4().hex}",
        recipients=editors_of(summary),
        subject=f"Sent back: {title}",
        body=f'{_name(by)} sent "{title}" back to you with this note:\n\n{note}',
        summary=summary,
        actor=by,
    )


def review_reply(*, summary: Summary, message: ReviewMessage) -> list[Notification]:
    """Someone replied in a summary's review conversation: tell the people in that
    review — its editors, its assigned reviewer and whoever wrote in the conversation —
    and, while it waits for review with nobody assigned and no reviewer in the
    conversation yet, the reviewers (who would otherwise not know of it)."""
    original = summary.working_copy_of if summary.is_working_copy else summary
    title = _title(original)
    authors = ReviewMessage.objects.filter(summary=original, author__isnull=False)
    people = {user.pk: user for user in editors_of(original)}
    people |= {user.pk: user for user in assignee_of(original)}
    active_staff = get_user_model().objects.filter(is_active=True, is_staff=True)
    people |= {user.pk: user for user in active_staff.filter(pk__in=authors.values("author_id"))}
    waiting = Summary.objects.filter(working_copy_of=original).first() or original
    all_reviewers = reviewers()
    reviewer_ids = {user.pk for user in all_reviewers}
    if (
        waiting is not None
        and waiting.status == Summary.Status.IN_REVIEW
        and not people.keys() & reviewer_ids - {getattr(message.author, "pk", None)}
    ):
        people |= {user.pk: user for user in all_reviewers}
    return tell(
        kind=Kind.REPLY,
        key=f"reply:{message.pk}",
        recipients=people.values(),
        subject=f"Reply in the review of {title}",
        body=f'{_name(message.author)} replied in the review of "{title}":\n\n{message.text}',
        summary=original,
        actor=message.author,
    )


def summary_published(
    *, summary: Summary, by=None, changes: Summary | None = None, now: datetime | None = None
) -> list[Notification]:
    """A reviewer published a summary, or the working copy `changes` of one: tell the
    people who wrote it (of a copy: its writers too, so call it while the copy exists).

    Nothing while readers cannot see it yet (scheduled): `summary_went_live` tells of it
    when its time comes.
    """
    now = now or timezone.now()
    if summary.is_working_copy or not summary.is_live(now):
        return []
    title = _title(summary)
    what = f'the changes to "{title}"' if changes is not None else f'"{title}"'
    return tell(
        kind=Kind.PUBLISHED,
        key=_live_key(summary, changes),
        recipients=editors_of(changes if changes is not None else summary),
        subject=f"Published: {title}",
        body=f"{_name(by)} published {what}. Readers see it now.",
        summary=summary,
        actor=by,
        now=now,
    )


def summary_went_live(
    *, summary: Summary, changes: Summary | None = None, now: datetime | None = None
) -> list[Notification]:
    """A summary, or the working copy `changes` of one, went live at the time a reviewer
    set: tell the people who wrote it. Told once per publication: under the key a
    publication by a reviewer is told under, so one is never told as both."""
    now = now or timezone.now()
    if summary.is_working_copy or not summary.is_live(now):
        return []
    title = _title(summary)
    if changes is not None:
        what = f'The scheduled changes to "{title}" went live'
    else:
        what = f'"{title}" went live at {summary.publish_at:%Y-%m-%d %H:%M %Z} as scheduled'
    return tell(
        kind=Kind.WENT_LIVE,
        key=_live_key(summary, changes),
        recipients=editors_of(changes if changes is not None else summary),
        subject=f"Live now: {title}",
        body=f"{what}. Readers see it now.",
        summary=summary,
        now=now,
    )


def announce_went_live(*, now: datetime | None = None) -> int:
    """Tell of originals that went live within WENT_LIVE_WINDOW and were not told of yet
    (scheduled ones; those published at once were told as "published"). Idempotent.
    Returns how many were told."""
    now = now or timezone.now()
    due = list(
        Summary.objects.published(now)
        .originals()
        .filter(publish_at__gt=now - WENT_LIVE_WINDOW)
        .select_related("video")
    )
    if not due:
        return 0
    told = set(
        NotificationEvent.objects.filter(key__in=[_live_key(s) for s in due]).values_list(
            "key", flat=True
        )
    )
    count = 0
    for summary in due:
        if _live_key(summary) not in told:
            summary_went_live(summary=summary, now=now)
            count += 1
    return count


# --- Sources ------------------------------------------------------------------------------


def source_problem(
    *,
    sources: list[Source],
    states_before: dict[int, str],
    citations: list[Citation],
    verdicts_before: dict[int, str],
    problem_states: Iterable[str],
    problem_verdicts: Iterable[str],
    now: datetime | None = None,
) -> list[Notification]:
    """Sources that became a problem in a batch of recorded checks (a state in
    `problem_states`, or a citation's verdict in `problem_verdicts`, that was not one
    before): tell the editors of each live summary citing them, once per summary, source
    and check. Ignored sources are not told of. Costs no query when nothing went bad."""
    bad_states = {str(state) for state in problem_states}
    bad_verdicts = {str(verdict) for verdict in problem_verdicts}
    broke = {
        s.pk: s
        for s in sources
        if not s.ignored
        and str(s.state) in bad_states
        and str(states_before.get(s.pk, "")) not in bad_states
    }
    turned = [
        c
        for c in citations
        if str(c.verdict) in bad_verdicts and str(verdicts_before.get(c.pk, "")) not in bad_verdicts
    ]
    by_id = {s.pk: s for s in sources}
    turned = [c for c in turned if not by_id[c.source_id].ignored]
    if not broke and not turned:
        return []
    now = now or timezone.now()
    live = Summary.objects.published(now).originals()
    # (summary id, source id) -> the claims no longer supported there (empty: it broke)
    problems: dict[tuple[int, int], list[Citation]] = defaultdict(list)
    if broke:
        for summary_id, source_id in Citation.objects.filter(
            source_id__in=list(broke), summary__in=live.values("pk")
        ).values_list("summary_id", "source_id"):
            problems.setdefault((summary_id, source_id), [])  # it broke: no claim listed
    live_ids = set(live.filter(pk__in={c.summary_id for c in turned}).values_list("pk", flat=True))
    for citation in turned:
        if citation.summary_id in live_ids:
            problems[(citation.summary_id, citation.source_id)].append(citation)
    summaries = Summary.objects.select_related("video").in_bulk({pk for pk, _ in problems})
    written = []
    for (summary_id, source_id), claims in sorted(problems.items()):
        summary, source = summaries[summary_id], by_id[source_id]
        title = _title(summary)
        lines = [f'A source cited by "{title}", which readers see now, has a problem:', ""]
        lines.append(source.url)
        if source_id in broke:
            status = f" (HTTP {source.status_code})" if source.status_code else ""
            lines.append(f"It is now: {source.get_state_display()}{status}.")
        for citation in claims:
            lines.append(f"{citation.get_verdict_display()}: {_quote(citation.claim)}")
        checked = source.last_checked_at or now
        written += tell(
            kind=Kind.SOURCE_PROBLEM,
            key=f"source:{source_id}:{summary_id}:{checked.timestamp():.6f}",
            recipients=editors_of(summary),
            subject=f"Source problem: {title}",
            body="\n".join(lines),
            summary=summary,
            now=now,
        )
    return written


# --- Helpers ------------------------------------------------------------------------------


def _live_key(summary: Summary, changes: Summary | None = None) -> str:
    """What names a publication: a summary's publish time, or the working copy's id."""
    if changes is not None:
        return f"changes:{summary.pk}:{changes.pk}"
    return f"live:{summary.pk}:{summary.publish_at.timestamp():.6f}"


def _title(summary: Summary) -> str:
    video = summary.summarised_video
    return _one_line(video.title if video is not None else f"Summary {summary.pk}")


def _name(user) -> str:
    if user is None or not user.is_authenticated:
        return "Someone"
    return _one_line(user.get_full_name() or user.get_username())


def _quote(text: str) -> str:
    text = _one_line(text)
    return f'"{text[:QUOTE_CHARS]}…"' if len(text) > QUOTE_CHARS else f'"{text}"'


def _one_line(text: str) -> str:
    """Whitespace runs (line breaks too) as one space: a mail subject holds no newline."""
    return " ".join(str(text).split())


def _link(summary: Summary) -> str:
    """The admin page where the summary (a working copy's live summary) is worked on."""
    page_id = summary.working_copy_of_id or summary.pk
    return reverse("admin:summaries_summary_change", args=[page_id])
