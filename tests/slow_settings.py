"""Settings of the gunicorn started by tests/integration/test_graceful_shutdown.py: the
site's own, plus a slow page (tests/slow_urls.py) to have a request in flight."""

from curation.settings import *  # noqa: F403

ROOT_URLCONF = "tests.slow_urls"
