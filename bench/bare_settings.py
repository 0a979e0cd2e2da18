"""The bare stack of bench/run_pages.py: Django with WhiteNoise and nothing else.

The baseline every figure of the request pipeline is compared with: a static file served
by WhiteNoise in a minimal Django project (no other middleware, no database, no apps, no
logging of requests), by the same gunicorn configuration as the site. BARE_STATIC_ROOT is
the folder of files it serves under /static/; run_pages.py fills it with a copy of the
site's stylesheet, so both stacks send the same bytes.
"""

import os

SECRET_KEY = os.environ.get("SECRET_KEY", "bare-stack-of-the-benchmark")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1"]
ROOT_URLCONF = "bench.bare_urls"
WSGI_APPLICATION = "bench.bare_wsgi.application"
INSTALLED_APPS: list[str] = []
DATABASES: dict = {}
MIDDLEWARE = ["whitenoise.middleware.WhiteNoiseMiddleware"]
STATIC_URL = "/static/"
STATIC_ROOT = os.environ.get("BARE_STATIC_ROOT", "")
USE_TZ = True
LOGGING_CONFIG = None
