"""The Celery application; configuration comes from Django settings (CELERY_*)."""

import os
from pathlib import Path

from celery import Celery
from celery.beat import PersistentScheduler

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "curation.settings")

app = Celery("curation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class BeatScheduler(PersistentScheduler):
    """Celery's own scheduler, which also creates the folder of its schedule file: on
    PostgreSQL + Redis nothing else creates CURATION_VAR_DIR on the beat machine."""

    def setup_schedule(self):
        Path(self.schedule_filename).parent.mkdir(parents=True, exist_ok=True)
        super().setup_schedule()
