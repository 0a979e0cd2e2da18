"""Static files, answered before Django: WhiteNoise, with the headers SecurityMiddleware
would add computed once per file at start-up instead of per answer.

A static file is the same bytes for everyone, so nothing of Django has anything to add to
it: no session, no page cache, no CSRF, no database connection to check.
`StaticFilesApplication` wraps the site's WSGI application (curation/wsgi.py) and answers
static files before Django's handler builds a request: a static file costs WhiteNoise's
own work, the request log's line, an id and a count, nothing else.
`StaticFilesMiddleware` does the same inside Django, right after ProbeMiddleware, for
whatever calls Django without that wrapper (the test client, another WSGI entry point).

Two things SecurityMiddleware does for every answer are kept: its headers
(`X-Content-Type-Options`, `Referrer-Policy`, `Cross-Origin-Opener-Policy`, HSTS), stored
with each file by WhiteNoise, and the redirect to HTTPS: a plain-HTTP request, when
SECURE_SSL_REDIRECT is on, goes to Django, whose SecurityMiddleware redirects it.
"""

import time
from wsgiref.util import FileWrapper

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.middleware.security import SecurityMiddleware
from whitenoise.middleware import WhiteNoiseMiddleware
from whitenoise.string_utils import decode_path_info

from . import logs, metrics


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


def is_secure(environ: dict) -> bool:
    """HttpRequest.is_secure() read from the WSGI environ, without building a request:
    SECURE_PROXY_SSL_HEADER when set and present, else the server's URL scheme."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        name, secure_value = proxy
        value = environ.get(name)
        if value is not None:
            return value.split(",", 1)[0].strip() == secure_value
    return environ.get("wsgi.url_scheme") == "https"


class StaticFilesApplication:
    """WSGI application answering static files before Django (module docstring), and
    handing every other request to `application`."""

    def __init__(self, application):
        self.application = application
        self.files = StaticFilesMiddleware(get_response=application)
        self.redirect_to_https = settings.SECURE_SSL_REDIRECT

    def find(self, path: str):
        files = self.files
        return files.find_file(path) if files.autorefresh else files.files.get(path)

    def __call__(self, environ, start_response):
        static_file = self.find(decode_path_info(environ.get("PATH_INFO", "")))
        if static_file is None or (self.redirect_to_https and not is_secure(environ)):
            return self.application(environ, start_response)
        return self.serve(static_file, environ, start_response)

    def serve(self, static_file, environ, start_response):
        """WhiteNoise's answer, with the request log's id, count and line."""
        started = time.perf_counter()
        request_id = logs.well_formed_id(environ.get("HTTP_X_REQUEST_ID"))
        method = environ.get("REQUEST_METHOD", "")
        response = static_file.get_response(method, environ)
        status = int(response.status)
        headers = [*response.headers, (logs.REQUEST_ID_HEADER, request_id)]
        start_response(f"{status} {response.status.phrase}", headers)
        metrics.count(metrics.STATIC, status)
        path = environ.get("SCRIPT_NAME", "") + environ.get("PATH_INFO", "")
        logs.log_request(method, metrics.STATIC, path, status, started, request_id)
        if response.file is None:
            return []
        return environ.get("wsgi.file_wrapper", FileWrapper)(response.file)
