"""WSGI application of the bare stack (bench/bare_settings.py), for gunicorn."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.bare_settings")
application = get_wsgi_application()
