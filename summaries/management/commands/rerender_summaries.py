from django.core.management.base import BaseCommand

from summaries import tasks
from summaries.models import Summary


class Command(BaseCommand):
    help = "Queue a re-render of every summary's Markdown (after the Markdown rules change)."

    def add_arguments(self, parser):
        parser.add_argument("--now", action="store_true", help="Run here instead of queuing.")

    def handle(self, *args, now=False, **options):
        ids = list(Summary.objects.values_list("pk", flat=True))
        for summary_id in ids:
            if now:
                tasks.rerender_summary(summary_id)
            else:
                tasks.rerender_summary.delay_on_commit(summary_id)
        verb = "Re-rendered" if now else "Queued"
        self.stdout.write(f"{verb} {len(ids)} summaries.")
