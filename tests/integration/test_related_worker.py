"""A publish reaches the stored related lists of its neighbours through a real worker."""

import time

import pytest

from summaries.editing import workflow
from summaries.models import RelatedLink
from summaries.reader.related import refresh_related
from tests.factories import AppearanceFactory, PersonFactory, SummaryFactory, TopicFactory

pytestmark = pytest.mark.integration

# Readers of a neighbour's page see the new video within seconds of the publish.
WITHIN_SECONDS = 10


def listed(video) -> list[int]:
    return list(RelatedLink.objects.filter(video=video).values_list("related_id", flat=True))


def test_a_publish_reaches_its_neighbours_lists_within_seconds(transactional_db, celery_worker):
    speaker, topic = PersonFactory(name="Ada Lovelace"), TopicFactory(name="Agents")
    summaries = [SummaryFactory(live=True) for _ in range(3)] + [SummaryFactory()]
    for summary in summaries:
        AppearanceFactory(video=summary.video, person=speaker)
        summary.video.topics.add(topic)
    *live, draft = summaries
    for summary in live:
        refresh_related(video=summary.video)
    assert all(draft.video_id not in listed(summary.video) for summary in live)

    published = time.monotonic()
    workflow.publish_summary(summary=draft)

    waiting = [summary.video for summary in live]
    while waiting and time.monotonic() - published < WITHIN_SECONDS:
        waiting = [video for video in waiting if draft.video_id not in listed(video)]
        time.sleep(0.1)
    assert not waiting, (
        f"{len(waiting)} neighbours' lists still lack the video {WITHIN_SECONDS}s after its "
        f"publish:\n{celery_worker.log_tail()}"
    )
    assert set(listed(draft.video)) == {summary.video_id for summary in live}
