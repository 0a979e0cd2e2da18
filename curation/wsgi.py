"""The site's WSGI application: Django, with static files (summaries/ops/static.py) and
cached reader pages (summaries/pagecache/front.py) answered before it."""

import os

from django.core.wsgi import get_wsgi_application

from curation.startup import load_settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
load_settings_or_exit()

django_application = get_wsgi_application()

# These need the settings loaded above.
from summaries.ops.static import StaticFilesApplication  # noqa: E402
from summaries.pagecache.front import CachedPagesApplication  # noqa: E402

application = StaticFilesApplication(CachedPagesApplication(django_application))
