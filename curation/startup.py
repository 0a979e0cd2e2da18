"""Turn a configuration error into one clear line instead of a traceback."""

import sys

from django.core.exceptions import ImproperlyConfigured


def load_settings_or_exit() -> None:
    """Import the settings now; on a bad environment variable print one line and exit 2."""
    from django.conf import settings

    try:
        settings.INSTALLED_APPS  # noqa: B018 - touching a setting imports the module
    except ImproperlyConfigured as exc:
        sys.stderr.write(f"curation: configuration error: {exc}\n")
        sys.exit(2)
