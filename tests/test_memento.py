"""A summary as it was on a date (Memento, RFC 7089): TimeGate, TimeMap and past versions.

Only states readers saw appear: drafts, working copies, reviewers' notes and publications
scheduled for a time that never came are never listed, redirected to or served.
"""

import datetime
import re

import pytest
import time_machine
from django.utils import timezone

from summaries.editing import copies, save, workflow
from summaries.models import Chapter, PublishedVersion, Summary

from .factories import ChapterFactory, SummaryFactory

pytestmark = pytest.mark.django_db

UTC = datetime.UTC
START = datetime.datetime(2026, 1, 5, 9, 30, 0, tzinfo=UTC)
NEVER_LIVE = "never live"
# An HTTP date as RFC 7089 writes them (RFC 1123): "Tue, 11 Sep 2001 20:35:00 GMT".
HTTP_DATE = re.compile(r"^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$")
# One link of a Link header or a TimeMap: <uri>; rel="…"; name="value"…
LINK = re.compile(r'^<(?P<uri>[^>]+)>((\s*;\s*[a-z]+="[^"]*")+)$')


def version_time(number: int) -> datetime.datetime:
    """When version `number` (1 to n) of the history goes live: a day apart, at 09:30."""
    return START + datetime.timedelta(days=number - 1)


def edit(summary: Summary, tldr: str, chapter_title: str) -> Summary:
    """Change a published summary the one way there is: its working copy."""
    copy, _ids, _made = copies.edit_target(summary=summary, user=None)
    copy.tldr = tldr
    chapters = list(Chapter.objects.filter(summary=copy).order_by("position"))
    chapters[0].title = chapter_title
    save.save_summary(summary=copy, parts={Chapter: chapters}, user=None)
    return copy


def build_history(count: int) -> Summary:
    """A summary published `count` times (first publication, then changes), with drafts
    before it, and, between versions, working copies that were discarded, sent back
    with a reviewer's note, or scheduled for a time that never came."""
    with time_machine.travel(START - datetime.timedelta(days=2), tick=False):
        summary = SummaryFactory(tldr=f"Draft words, {NEVER_LIVE}.")
        ChapterFactory(summary=summary, position=1, title="Draft chapter", body="Words.")
        summary.tldr = f"Another draft, {NEVER_LIVE}."
        save.save_summary(summary=summary, parts={}, user=None)
        summary.tldr = "Version 1 words."
        Chapter.objects.filter(summary=summary).update(title="Chapter of version 1")
        save.save_summary(summary=summary, parts={}, user=None)
    with time_machine.travel(version_time(1), tick=False):
        workflow.publish_summary(summary=summary, user=None)
    for number in range(2, count + 1):
        before = version_time(number) - datetime.timedelta(hours=6)
        with time_machine.travel(before, tick=False):
            _unseen_work(summary, number)
        with time_machine.travel(version_time(number), tick=False):
            edit(summary, f"Version {number} words.", f"Chapter of version {number}")
            copies.publish_changes(summary=summary, user=None)
    # Unpublished changes waiting now: never a version either.
    edit(summary, f"Working copy words, {NEVER_LIVE}.", f"Working copy chapter, {NEVER_LIVE}")
    summary.refresh_from_db()
    return summary


def _unseen_work(summary: Summary, number: int) -> None:
    if number % 3 == 0:
        edit(summary, f"Discarded words, {NEVER_LIVE}.", f"Discarded, {NEVER_LIVE}")
        copies.discard_changes(summary=summary, user=None)
    elif number % 3 == 1:
        copy = edit(summary, f"Sent back words, {NEVER_LIVE}.", f"Sent back, {NEVER_LIVE}")
        workflow.submit_for_review(summary=copy, user=None)
        workflow.send_back(summary=summary, user=None, note=f"Reviewer note, {NEVER_LIVE}.")
        copies.discard_changes(summary=summary, user=None)
    else:
        # Scheduled for a time after the next version: replaced by it, never live.
        edit(summary, f"Scheduled words, {NEVER_LIVE}.", f"Scheduled, {NEVER_LIVE}")
        at = version_time(number) + datetime.timedelta(hours=3)
        copies.publish_changes(summary=summary, user=None, at=at)


@pytest.fixture
def history():
    return build_history(50)


@pytest.fixture
def short_history():
    return build_history(3)


def links(header: str) -> list[dict[str, str]]:
    """A Link header (or a TimeMap) as one dict per link: uri, rel and its parameters,
    each link checked against the shape of the RFC's examples."""
    found = []
    for item in re.split(r",\s*(?=<)", header.strip()):
        match = LINK.match(item.strip())
        assert match, f"not a link in the RFC's shape: {item!r}"
        params = dict(re.findall(r'([a-z]+)="([^"]*)"', match.group(2)))
        found.append({"uri": match.group("uri"), **params})
    return found


def by_rel(found: list[dict[str, str]], rel: str) -> list[dict[str, str]]:
    return [link for link in found if rel in link["rel"].split()]


def memento_path(summary: Summary, moment: datetime.datetime) -> str:
    return f"/videos/{summary.video.slug}/versions/{moment:%Y%m%d%H%M%S}/"


def timemap_path(summary: Summary) -> str:
    return f"/videos/{summary.video.slug}/timemap/"


def accept(moment: datetime.datetime) -> dict[str, str]:
    return {"HTTP_ACCEPT_DATETIME": moment.strftime("%a, %d %b %Y %H:%M:%S GMT")}
