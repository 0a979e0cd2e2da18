from django.core.management.base import BaseCommand, CommandError

from summaries.checking import evidence


class Command(BaseCommand):
    help = (
        "Read every record of the evidence vault back and check it against its payload "
        "digest; list the records that fail (missing, unreadable, altered) and exit non-zero "
        "when any does. With --sweep, apply the retention first (as celery beat does daily)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--sweep", action="store_true", help="Apply the retention before verifying."
        )

    def handle(self, *args, sweep=False, **options):
        if sweep:
            rows, records = evidence.sweep_evidence()
            self.stdout.write(f"Retention: {rows} evidence rows and {records} records deleted.")
        checked, failures = evidence.verify_records()
        for failure in failures:
            record = failure.record
            self.stderr.write(f"FAILED {record.name} ({record.url}): {failure.reason}")
        self.stdout.write(f"Verified {checked} records: {len(failures)} failed.")
        if failures:
            raise CommandError(f"{len(failures)} evidence record(s) failed verification")
