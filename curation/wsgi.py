import os

from django.core.wsgi import get_wsgi_application

from curation.startup import load_settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")
load_settings_or_exit()

application = get_wsgi_application()
