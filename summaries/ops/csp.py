"""Content-Security-Policy on every page: the reader's policy, and the admin's own.

django-csp's middleware with one addition: under /admin/ the response gets
CONTENT_SECURITY_POLICY_ADMIN instead of CONTENT_SECURITY_POLICY (a view's own csp_update
or csp_replace still applies on top of it).
"""

from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings

ADMIN_PREFIX = "/admin/"


class ContentSecurityPolicyMiddleware(CSPMiddleware):
    def get_policy_parts(self, request, response, report_only=False) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if not report_only and parts.config is None and request.path_info.startswith(ADMIN_PREFIX):
            parts.config = settings.CONTENT_SECURITY_POLICY_ADMIN["DIRECTIVES"]
        return parts
