"""The API's absolute URLs, on SITE_URL.

Anonymous reads are kept by shared caches for every client, so their links never take the
request's scheme or Host (summaries/reader/absolute.py); the request only lends the
`?format=` REST framework keeps in its links.
"""

from django.urls import reverse as django_reverse
from rest_framework.reverse import preserve_builtin_query_params

from summaries.reader.absolute import site_url


def api_url(viewname, args=None, kwargs=None, request=None, format=None, **extra):  # noqa: A002
    """REST framework's `reverse()` (the same arguments), absolute on SITE_URL."""
    if format is not None:
        kwargs = {**(kwargs or {}), "format": format}
    url = django_reverse(viewname, args=args, kwargs=kwargs, **extra)
    if request is not None:
        url = preserve_builtin_query_params(url, request)
    return site_url(url)
