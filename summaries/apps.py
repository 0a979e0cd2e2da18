from django.apps import AppConfig
from django.db.models.signals import post_migrate


class SummariesConfig(AppConfig):
    name = "summaries"
    verbose_name = "Curation"

    def ready(self):
        # Register the Celery tasks in every process, so that services can queue them by
        # name (summaries.background) without importing them.
        from . import tasks  # noqa: F401

        # The page cache's content generation row, made by migrate (and again by flush).
        from .pagecache.generation import create_row_after_migrate

        # Stored filter choices are forgotten by receivers of model signals, and each
        # published version's article is rendered by the reader when it is recorded.
        from .reader import facets, versions  # noqa: F401

        post_migrate.connect(create_row_after_migrate, sender=self)
