from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "summaries"
    verbose_name = "Curation"

    def ready(self):
        # Register the Celery tasks in every process, so that services can queue them by
        # name (summaries.background) without importing them.
        from . import tasks  # noqa: F401

        # Stored filter choices are forgotten by receivers of model signals.
        from .reader import facets  # noqa: F401
