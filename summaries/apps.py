from django.apps import AppConfig


class SummariesConfig(AppConfig):
    name = "summaries"
    verbose_name = "Curation"

    def ready(self):
        from . import signals

        signals.connect()
