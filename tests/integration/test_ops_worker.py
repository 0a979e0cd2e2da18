"""`manage.py worker_health` against a real Celery worker process, as an orchestrator runs
it: exit 0 when the worker answers a ping through the broker, 1 with one line when not."""

import subprocess
import sys

import pytest
from django.conf import settings

from tests.integration.conftest import celery_environment

pytestmark = pytest.mark.integration


def worker_health(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "manage.py", "worker_health", *arguments],
        cwd=settings.BASE_DIR,
        env=celery_environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_running_worker_is_healthy(celery_worker):
    result = worker_health("--hostname", celery_worker.hostname, "--timeout", "5")

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{celery_worker.hostname} answered"


def test_a_worker_that_is_not_running_is_not(celery_worker):
    """Same broker, the worker's host, another name: nobody answers."""
    other = "curation-absent@" + celery_worker.hostname.split("@", 1)[1]

    result = worker_health("--hostname", other, "--timeout", "1")

    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"CommandError: {other} did not answer a ping within 1 s"
    ]
