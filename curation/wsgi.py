"""The site's WSGI application: Django, with static files answered before it
(summaries/ops/static.py)."""

import os

from django.core.wsgi import get_wsgi_application

from curation.startup import load_settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
load_settings_or_exit()

application = get_wsgi_application()

from summaries.ops.static import StaticFilesApplication  # noqa: E402 - needs the settings

application = StaticFilesApplication(application)
