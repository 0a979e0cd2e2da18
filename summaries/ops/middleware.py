"""Answer load balancers' probes and Prometheus's scrapes before anything else runs.

Probes and scrapes come over plain HTTP (TLS ends at the load balancer) and name the pod's
address as the Host, which is not one of ALLOWED_HOSTS. So /healthz, /readyz and /metrics
are answered here, ahead of the HTTPS redirect, the Host check, sessions and the page cache
(which could otherwise keep an answer): any Host is accepted on these paths, where nothing
in the answer depends on it (/metrics still asks for its token or network). Every other
path meets the full stack.
"""

from . import metrics, views

PROBES = {"/healthz": views.healthz, "/readyz": views.readyz, "/metrics": metrics.metrics_view}


class ProbeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        probe = PROBES.get(request.path_info)
        if probe is not None:
            return probe(request)
        return self.get_response(request)
