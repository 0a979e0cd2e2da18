"""Rate limits for forms anyone may post: per client address and per e-mail address.

django-ratelimit counters in the default cache, one per client address (`<group>-ip`) and
one per e-mail address asked for (`<group>-email`). Used by the admin's password reset
and the reader's follow sign-up.
"""

from django.http import HttpRequest
from django_ratelimit.core import is_ratelimited
from rest_framework.throttling import BaseThrottle


def client_address(request) -> str:
    """The client's address as the API's throttles see it (API_NUM_PROXIES): behind a
    proxy, REMOTE_ADDR is the proxy's. `request` is left untyped: get_ident is typed for
    DRF's Request but reads only META, which a Django HttpRequest has."""
    return BaseThrottle().get_ident(request) or ""


def limited(
    request: HttpRequest, *, group: str, client_rate: str, address: str, address_rate: str
) -> bool:
    """Whether a POST is past `client_rate` for its client address or past `address_rate`
    for the e-mail `address` (already normalised by the caller). Rates are
    django-ratelimit's (N/s, N/m, N/h or N/d).

    Both counters move on every call, so neither limit depends on the other. Any other
    method than POST is never limited and counts nothing.
    """
    counted = [
        _counted(request, f"{group}-ip", client_address(request), client_rate),
        _counted(request, f"{group}-email", address, address_rate),
    ]
    return any(counted)


def _counted(request: HttpRequest, group: str, value: str, rate: str) -> bool:
    """Count this request against `value` in `group`; whether it is past `rate`."""
    return is_ratelimited(
        request,
        group=group,
        key=lambda group, request: value,
        rate=rate,
        method="POST",
        increment=True,
    )
