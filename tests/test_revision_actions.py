"""What a revision did is stored with it (RevisionAction), by each road that makes one,
never read back out of its comment."""

import datetime

import pytest
import reversion
from django.utils import timezone
from reversion.models import Revision

from summaries.editing import copies, restore, revisions, workflow
from summaries.editing.save import save_summary
from summaries.models import RevisionAction, Summary

from .factories import ChapterFactory, SummaryFactory

pytestmark = pytest.mark.django_db

Kind = RevisionAction.Kind


@pytest.fixture
def summary():
    summary = SummaryFactory(tldr="Speed matters for agents.")
    ChapterFactory(summary=summary, title="Why speed matters", body="Fast output helps.")
    return summary


def last_label(summary: Summary) -> str:
    version = restore.history_versions(summary).first()
    return revisions.action_label(version.revision)


def test_each_workflow_step_records_its_action(summary, editor, reviewer):
    workflow.submit_for_review(summary=summary, user=editor)
    assert last_label(summary) == "Submitted for review"
    workflow.send_back(summary=summary, user=reviewer, note="The chapter needs a source.")
    assert last_label(summary) == "Sent back"
    later = timezone.now() + datetime.timedelta(days=2)
    workflow.publish_summary(summary=summary, user=reviewer, at=later)
    assert last_label(summary) == "Scheduled"
    workflow.publish_summary(summary=summary, user=reviewer)
    assert last_label(summary) == "Published"
    workflow.unpublish_summary(summary=summary, user=reviewer)
    assert last_label(summary) == "Unpublished"


def test_changes_published_discarded_and_restored_record_their_actions(summary, editor, reviewer):
    workflow.publish_summary(summary=summary, user=reviewer)
    first = restore.history_versions(summary).last()
    copy, _ids, _made = copies.edit_target(summary=summary, user=editor)
    copy.tldr = "Speed matters most for agents."
    save_summary(summary=copy, parts={}, user=editor, comment="Changed In 30 seconds.")
    assert last_label(summary) == "Saved"
    copies.publish_changes(summary=summary, user=reviewer)
    assert last_label(summary) == "Published"

    restore.restore_revision(summary=summary, version=first, user=editor)
    assert last_label(summary) == "Restored"
    copies.discard_changes(summary=summary, user=editor)
    assert last_label(summary) == "Discarded changes"


def test_a_save_whose_comment_reads_like_an_action_is_a_save(summary, editor):
    summary.tldr = "Published figures, restored to their units."
    save_summary(summary=summary, parts={}, user=editor, comment="Published figures added")

    assert last_label(summary) == "Saved"
    assert not RevisionAction.objects.exists()


def test_the_first_action_of_a_revision_stands_when_another_joins_it(summary):
    with reversion.create_revision():
        reversion.add_to_revision(summary)
        revisions.record_action(Kind.PUBLISHED)
        with reversion.create_revision():  # a step recorded within it joins this revision
            revisions.record_action(Kind.PINNED)

    revision = Revision.objects.get()
    assert revision.action.kind == Kind.PUBLISHED
    assert RevisionAction.objects.count() == 1
