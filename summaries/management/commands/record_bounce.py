import sys

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from summaries.following import signup


class Command(BaseCommand):
    help = (
        "Record that mail to these addresses bounced: their follows end and nothing more is "
        "sent to them. Addresses as arguments, or one a line on standard input."
    )

    def add_arguments(self, parser):
        parser.add_argument("addresses", nargs="*", help="E-mail addresses (else stdin).")

    def handle(self, *args, addresses=(), **options):
        lines = addresses or [line.strip() for line in sys.stdin]
        wanted = [line for line in lines if line and not line.startswith("#")]
        bad = [address for address in wanted if not _valid(address)]
        if bad:
            raise CommandError(f"Not an e-mail address: {', '.join(bad)}")
        ended = sum(signup.record_bounce(email=address) for address in wanted)
        self.stdout.write(f"Recorded {len(wanted)} bounced address(es); {ended} follow(s) ended.")


def _valid(address: str) -> bool:
    try:
        validate_email(address)
    except ValidationError:
        return False
    return True
