"""Request rates per anonymous address and per user, read from settings on every request.

REST framework's throttles copy the rates once, at import; these read them when used, so
a changed setting (a test's override) applies at once. The counts live in the cache: while
it cannot be reached, requests are let through rather than failed.
"""

import logging

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

logger = logging.getLogger(__name__)


class _SettingsRate:
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request, view):
        try:
            return super().allow_request(request, view)
        except Exception:  # noqa: BLE001 - the cache is down: count nothing, refuse nobody
            logger.warning("Cache unreachable: %s not throttled", request.path, exc_info=True)
            return True


class AnonThrottle(_SettingsRate, AnonRateThrottle):
    """Anonymous clients, by address (API_NUM_PROXIES decides which address)."""


class UserThrottle(_SettingsRate, UserRateThrottle):
    """Signed-in clients (token or session), by user. Anonymous clients are AnonThrottle's
    alone: REST framework's user throttle would count them by address a second time, at
    a looser rate, for two more cache round trips a request."""

    def get_cache_key(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return None
        return super().get_cache_key(request, view)
