from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "summaries"
    verbose_name = "Curation"

    def ready(self):
        # Register the Celery tasks in every process, so that services can queue them by
        # name (summaries.background) without importing them.
        from . import tasks  # noqa: F401
