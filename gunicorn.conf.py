"""gunicorn settings, read from the working directory by `gunicorn curation.wsgi`.

Only the garbage collector is tuned here; bind, workers and timeouts stay on the command
line. A full collection walks every object in the process, and a Django process holds
hundreds of thousands of long-lived ones (modules, compiled templates, URL patterns): about
40 ms each time, which lands on a reader's request. Freezing what exists after start-up,
and again once the first requests have compiled templates and resolvers, takes those
objects out of every later collection (about 9 ms then). See the `gc.freeze` docs.
"""

import gc

# Requests after which what the process built for them (lazily loaded templates, URL
# resolvers, cached settings) is frozen too.
_FREEZE_AFTER_REQUESTS = 20


def post_worker_init(worker):
    gc.collect()
    gc.freeze()


def post_request(worker, req, environ, resp):
    worker.curation_requests = getattr(worker, "curation_requests", 0) + 1
    if worker.curation_requests == _FREEZE_AFTER_REQUESTS:
        gc.collect()
        gc.freeze()
