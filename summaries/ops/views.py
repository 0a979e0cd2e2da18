"""Probes for load balancers and orchestrators: /healthz (alive) and /readyz (ready).

Both answer JSON that is never stored (`Cache-Control: no-store`), GET and HEAD only.
They are answered by `middleware.ProbeMiddleware` before anything else runs, so over plain
HTTP and whatever the Host header; see its docstring.
"""

from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from . import checks


@never_cache
@require_safe
def healthz(request):
    """The process answers. Touches neither the database nor the cache: restart it only
    when this fails."""
    return JsonResponse({"status": "ok"})


@never_cache
@require_safe
def readyz(request):
    """The database, the cache and the broker can be reached: send it traffic. 503 naming
    the checks that failed (names only; the reasons are logged) when any fails."""
    results = checks.run()
    ready = all(results.values())
    body = {
        "status": "ok" if ready else "unavailable",
        "checks": {name: "ok" if passed else "failed" for name, passed in results.items()},
    }
    return JsonResponse(body, status=200 if ready else 503)
