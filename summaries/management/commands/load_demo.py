from django.core.management.base import BaseCommand

from summaries.demo import load_demo


class Command(BaseCommand):
    help = (
        "Load the demo channel, its videos and the published Matthew Berman speed summary. "
        "Safe to run again: unchanged rows are left alone."
    )

    def handle(self, *args, **options):
        counts = load_demo()
        for action in ("created", "updated", "deleted"):
            if counts[action]:
                details = ", ".join(f"{name} {n}" for name, n in sorted(counts[action].items()))
                self.stdout.write(f"{action.capitalize()}: {details}.")
        if not any(counts.values()):
            self.stdout.write("Demo data already up to date; nothing changed.")
        else:
            self.stdout.write(self.style.SUCCESS("Demo data loaded."))
