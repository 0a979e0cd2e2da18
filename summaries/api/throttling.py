"""Request rates per anonymous address and per user, read from settings on every request.

REST framework's throttles copy the rates once, at import; these read them when used, so
a changed setting (a test's override) applies at once.
"""

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class _SettingsRate:
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)


class AnonThrottle(_SettingsRate, AnonRateThrottle):
    """Anonymous clients, by address (API_NUM_PROXIES decides which address)."""


class UserThrottle(_SettingsRate, UserRateThrottle):
    """Signed-in clients (token or session), by user."""
