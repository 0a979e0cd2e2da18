"""Exit 0 when this machine's Celery worker answers a ping through the broker.

For an orchestrator's liveness or readiness command beside `celery -A curation worker`:

    python manage.py worker_health [--hostname NAME] [--timeout 5]

Exits 1 with one line on stderr when the worker does not answer within the timeout or the
broker cannot be reached.
"""

import logging

from celery import current_app
from celery.utils.nodenames import default_nodename, host_format
from django.core.management.base import BaseCommand, CommandError


def _positive(value: str) -> float:
    seconds = float(value)
    if not seconds > 0:
        raise ValueError(value)
    return seconds


class Command(BaseCommand):
    help = "Ping this machine's Celery worker through the broker; exit 1 if it does not answer."

    def add_arguments(self, parser):
        parser.add_argument(
            "--hostname",
            help=(
                "The worker's node name, as given to `celery worker --hostname` (%%h is this "
                "machine's name); a name without @ means celery@NAME. Default: celery@%%h, "
                "the worker's own default."
            ),
        )
        parser.add_argument(
            "--timeout",
            type=_positive,
            default=5.0,
            help="Seconds to wait for the broker and for the answer (default 5).",
        )

    def handle(self, *args, hostname=None, timeout=5.0, **options):
        node = host_format(default_nodename(hostname))
        # One line out: kombu's warnings (the file-system broker's URL names no host) are
        # not this command's answer; a broker that fails raises.
        logging.getLogger("kombu").setLevel(logging.ERROR)
        transport_options = {"socket_connect_timeout": timeout, "socket_timeout": timeout}
        try:
            with current_app.connection_for_write(
                connect_timeout=timeout, transport_options=transport_options
            ) as connection:
                connection.ensure_connection(max_retries=0, timeout=timeout)
                replies = current_app.control.ping(
                    destination=[node], timeout=timeout, connection=connection
                )
        except Exception as exc:  # noqa: BLE001 - any failure to talk to the broker
            reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise CommandError(f"the broker cannot be reached: {reason}") from exc
        if not any(node in reply for reply in replies):
            raise CommandError(f"{node} did not answer a ping within {timeout:g} s")
        self.stdout.write(f"{node} answered")
