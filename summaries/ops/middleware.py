"""Answer load balancers' and orchestrators' probes before anything else runs.

Probes come over plain HTTP (TLS ends at the load balancer) and often name the pod's
address as the Host, which is not one of ALLOWED_HOSTS. So /healthz and /readyz are
answered here, ahead of the HTTPS redirect, the Host check, sessions and the page cache
(which could otherwise keep an answer): any Host is accepted on these two paths, where
nothing in the answer depends on it. Every other path meets the full stack.
"""

from . import views

PROBES = {"/healthz": views.healthz, "/readyz": views.readyz}


class ProbeMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        probe = PROBES.get(request.path_info)
        if probe is not None:
            return probe(request)
        return self.get_response(request)
