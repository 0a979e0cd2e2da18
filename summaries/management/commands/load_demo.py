from django.core.management.base import BaseCommand
from django.utils import timezone

from summaries.demo import demo_is_loaded, load_demo, store_thumbnails
from summaries.editing import versions


class Command(BaseCommand):
    help = (
        "Load the demo channel, its videos and the published Matthew Berman speed summary. "
        "Safe to run again: unchanged rows are left alone."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--if-missing",
            action="store_true",
            help="Do nothing when the demo summary exists (keeps editors' changes to it).",
        )

    def handle(self, *args, if_missing=False, **options):
        if if_missing and demo_is_loaded():
            self.stdout.write("Demo data is already loaded; leaving it as editors left it.")
            drawn = store_thumbnails()  # a demo loaded before thumbnails existed gets them
            if drawn:
                self.stdout.write(f"Added the thumbnails of {drawn} demo videos.")
            self.record_versions()
            return
        counts = load_demo()
        for action in ("created", "updated", "deleted"):
            if counts[action]:
                details = ", ".join(f"{name} {n}" for name, n in sorted(counts[action].items()))
                self.stdout.write(f"{action.capitalize()}: {details}.")
        if not any(counts.values()):
            self.stdout.write("Demo data already up to date; nothing changed.")
        else:
            self.stdout.write(self.style.SUCCESS("Demo data loaded."))
        self.record_versions()

    def record_versions(self):
        """The demo's live summaries are written as they are, not published through review:
        give each its current version, so that its Memento TimeMap and TimeGate have it."""
        recorded = versions.record_current_versions(now=timezone.now())
        if recorded:
            self.stdout.write(f"Recorded the current version of {recorded} live summaries.")
