"""Whether this worker is shutting down, as every process of its pool sees it.

A Celery worker's SIGTERM reaches only its main process; the prefork pool's children,
which run the check batches, never see it. So the flag lives in shared memory, created
when this module is first imported. That must happen in the worker's main process before
the pool forks, or each child would get a copy of its own that the main process never
sets: `checking.tasks` imports this module and the worker imports every task module at
start-up, before it starts the pool. With the solo or threads pool the batch runs in the
main process and reads the same flag. No Celery in here: tasks.py sets the flag from
Celery's `worker_shutting_down` signal, and batches read it through `stop_requested`.
"""

import multiprocessing

# One byte in a shared anonymous mapping, inherited by every process forked after this.
_flag = multiprocessing.RawValue("b", 0)


def request_stop() -> None:
    """The worker is shutting down: running batches start no more fetches."""
    _flag.value = 1


def stop_requested() -> bool:
    """Whether request_stop was called, in this process or in the one it was forked from
    (after this module was imported there)."""
    return bool(_flag.value)


def clear() -> None:
    """Forget a stop request (tests)."""
    _flag.value = 0
