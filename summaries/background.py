"""Queueing background work from services, by task name, once the transaction commits.

Services never import the task modules (tasks import services), so there is no import
cycle: the task is looked up in the Celery app's registry when it is queued.
"""

from collections.abc import Callable
from typing import Any, Concatenate, Literal, ParamSpec, TypeVar, overload

from celery import current_app, shared_task
from celery.contrib.django.task import DjangoTask
from django.db import InterfaceError, OperationalError, transaction

# Only transient broker/database trouble is retried by Celery; a 404 is a result.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, ConnectionError)

P = ParamSpec("P")
R = TypeVar("R")


class OnCommitTask(DjangoTask[P, R]):
    """`delay_on_commit` that never breaks the save it follows.

    If the broker is down when the transaction commits, the error is logged (Django's robust
    on_commit) and the sweeper queues the work later: a save must still succeed.
    """

    # celery-types declares an AsyncResult; Celery's own delay_on_commit returns None too
    # (nothing is sent before the commit).
    def delay_on_commit(self, *args: P.args, **kwargs: P.kwargs) -> None:  # type: ignore[override]
        def send() -> None:
            self.delay(*args, **kwargs)

        # Django names the callback when it logs a failure (a partial has no name).
        send.__qualname__ = f"{self.name}.delay"
        send.task, send.args = self, args
        transaction.on_commit(send, robust=True)


def queue_after_commit(task_name: str, *args) -> None:
    """Send the task `task_name` with `args` when the current transaction commits.

    A broker that is down then is logged, not raised: the save stands, and the periodic
    sweepers pick the work up (see OnCommitTask).
    """
    current_app.tasks[task_name].delay_on_commit(*args)


@overload
def background_task(
    *, soft_time_limit: int, bind: Literal[True], **options: Any
) -> Callable[[Callable[Concatenate[Any, P], R]], OnCommitTask[P, R]]: ...
@overload
def background_task(
    *, soft_time_limit: int, bind: Literal[False] = False, **options: Any
) -> Callable[[Callable[P, R]], OnCommitTask[P, R]]: ...
def background_task(*, soft_time_limit: int, bind: bool = False, **options: Any) -> Any:
    """`shared_task` with this project's rules for background work.

    Acknowledged after it ran, given back when its worker is lost, no result kept, only
    transient broker or database trouble retried (with backoff and jitter, three times),
    queued after commit by `delay_on_commit`, and a hard time limit 30 s after the soft one.
    """
    defaults = {
        "base": OnCommitTask,
        "acks_late": True,
        "reject_on_worker_lost": True,
        "ignore_result": True,
        "soft_time_limit": soft_time_limit,
        "time_limit": soft_time_limit + 30,
        "autoretry_for": TRANSIENT_ERRORS,
        "retry_backoff": 2,
        "retry_jitter": True,
        "max_retries": 3,
        "bind": bind,
    }
    return shared_task(**{**defaults, **options})
