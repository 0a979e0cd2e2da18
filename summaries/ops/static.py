"""Static files, answered before the rest of the middleware: WhiteNoise, with the headers
SecurityMiddleware would add computed once per file at start-up instead of per answer.

A static file is the same bytes for everyone, so nothing below the request log (the
probes aside) has anything to add to it: no session, no page cache, no CSRF. Placed right
after ProbeMiddleware (curation/settings.py), a static file costs the request log, its
id and its count, and WhiteNoise's own work, nothing else. Two things SecurityMiddleware
does for every answer are kept: its headers (`X-Content-Type-Options`, `Referrer-Policy`,
`Cross-Origin-Opener-Policy`, HSTS), stored with each file by WhiteNoise, and the
redirect to HTTPS: a plain-HTTP request, when SECURE_SSL_REDIRECT is on, goes down the
stack to SecurityMiddleware, which redirects it.
"""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.middleware.security import SecurityMiddleware
from whitenoise.middleware import WhiteNoiseMiddleware


class _SecureRequest(HttpRequest):
    def is_secure(self) -> bool:
        return True


def security_headers() -> list[tuple[str, str]]:
    """The headers SecurityMiddleware adds to an answer over HTTPS, as it adds them.

    HSTS included: browsers ignore it on a plain-HTTP answer (RFC 6797, section 8.1), and
    with SECURE_SSL_REDIRECT on no static file is answered over plain HTTP anyway.
    """
    blank = HttpResponse()
    before = set(blank.headers)
    answered = SecurityMiddleware(lambda request: blank).process_response(_SecureRequest(), blank)
    return [(name, value) for name, value in answered.items() if name not in before]


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """WhiteNoise placed before SecurityMiddleware, carrying its headers (module docstring)."""

    def __init__(self, get_response=None, settings=settings):
        self.redirect_to_https = settings.SECURE_SSL_REDIRECT
        self.security_headers = security_headers()
        super().__init__(get_response, settings)

    def add_mime_headers(self, headers, path, url):
        # Called once per file when WhiteNoise reads the files: the headers every answer
        # of that file carries.
        super().add_mime_headers(headers, path, url)
        for name, value in self.security_headers:
            headers[name] = value

    def __call__(self, request):
        if self.redirect_to_https and not request.is_secure():
            return self.get_response(request)  # SecurityMiddleware redirects it
        return super().__call__(request)
