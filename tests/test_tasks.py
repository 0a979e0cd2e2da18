"""Every Celery task follows the house rules for background work (summaries.background)."""

import pytest
from celery import current_app

from summaries import tasks

TASK_NAMES = [f"summaries.tasks.{name}" for name in tasks.__all__]


@pytest.mark.parametrize("name", TASK_NAMES)
def test_every_task_is_late_acknowledged_retried_only_on_transient_trouble_and_time_limited(
    name,
):
    task = current_app.tasks[name]
    assert task.acks_late and task.reject_on_worker_lost and task.ignore_result
    assert task.max_retries == 3 and task.autoretry_for
    assert 0 < task.soft_time_limit < task.time_limit
    assert hasattr(task, "delay_on_commit")


def test_moved_tasks_keep_the_names_queued_messages_and_beat_use():
    assert tasks.check_source_batch.name == "summaries.tasks.check_source_batch"
    assert tasks.dispatch_source_checks.name == "summaries.tasks.dispatch_source_checks"
    assert tasks.check_source_batch.time_limit == 180
