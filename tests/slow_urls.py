"""The site's URLs plus /slow/, a page that takes SLOW_SECONDS (or `?seconds=`) to answer
"done".

Test-only (tests/slow_settings.py): a request that is surely in flight when the test
stops gunicorn, or that outlasts gunicorn's worker timeout. The view logs a line (to
stderr, gunicorn's log, in the site's LOG_FORMAT) when it starts, so the test knows when
the request has reached a worker.
"""

import logging
import time

from django.http import HttpResponse
from django.urls import path

from curation.urls import handler400, handler500
from curation.urls import urlpatterns as site_urlpatterns

SLOW_SECONDS = 2.0
STARTED = "slow view started"

__all__ = ["handler400", "handler500", "urlpatterns"]

logger = logging.getLogger(__name__)


def slow(request):
    logger.warning(STARTED)
    time.sleep(float(request.GET.get("seconds", SLOW_SECONDS)))
    return HttpResponse("done", content_type="text/plain")


urlpatterns = [path("slow/", slow), *site_urlpatterns]
