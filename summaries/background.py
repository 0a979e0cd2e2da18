"""Queueing background work from services, by task name, once the transaction commits.

Services never import the task modules (tasks import services), so there is no import
cycle: the task is looked up in the Celery app's registry when it is queued.
"""

from celery import current_app


def queue_after_commit(task_name: str, *args) -> None:
    """Send the task `task_name` with `args` when the current transaction commits.

    A broker that is down then is logged, not raised: the save stands, and the periodic
    sweepers pick the work up (see tasks.OnCommitTask).
    """
    current_app.tasks[task_name].delay_on_commit(*args)
