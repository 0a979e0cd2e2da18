from django.core.management.base import BaseCommand
from django.utils import timezone

from summaries.editing import versions


class Command(BaseCommand):
    help = (
        "Record the current version of every live summary that has no published version "
        "yet (summaries published before versions were recorded), so that its Memento "
        "TimeMap and TimeGate have it. Safe to run again: it records only what is missing."
    )

    def handle(self, *args, **options):
        count = versions.record_current_versions(now=timezone.now())
        self.stdout.write(f"Recorded the current version of {count} live summaries.")
