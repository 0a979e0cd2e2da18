"""Digests: 10,000 sent to a loopback SMTP server, messages per second and peak memory.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/DB .venv/bin/python bench/run_digests.py
    .venv/bin/python bench/run_digests.py --subscribers 10000 --small 1000

Migrates the database of DATABASE_URL (a SQLite file under var/ when unset), replaces its
bench follows (addresses @bench.invalid) with --subscribers confirmed daily follows of
everything, and publishes three summaries after them. Starts aiosmtpd on a free 127.0.0.1
port in a process of its own (it counts what it receives and keeps nothing), points
Django's SMTP backend at it, and runs `digests.send_digests` as the beat task does:

1. timed: every digest claimed, built and sent, FOLLOW_DIGEST_BATCH per SMTP connection;
   messages per second, checked against what the server received;
2. memory: the same send again (claims dropped first) with tracemalloc, for --small and for
   --subscribers follows: the peak of Python allocations during the send. Flat means the
   two peaks are close: addresses are read in keyset pages, messages held a batch at a time.

Not a test: nothing here runs in CI.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
import tracemalloc
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("DATABASE_URL", f"sqlite:///{ROOT / 'var' / 'bench-digests.sqlite3'}")

import inprocess  # noqa: E402
from servers import HOST, free_port, say  # noqa: E402

inprocess.setup_django()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from summaries.following import digests  # noqa: E402
from summaries.models import (  # noqa: E402
    Channel,
    Digest,
    Subscriber,
    Subscription,
    Summary,
    Video,
)

DOMAIN = "bench.invalid"
# A Monday after FOLLOW_DIGEST_HOUR: daily digests are due.
NOW = datetime(2030, 1, 7, 9, 0, tzinfo=UTC)
FOLLOWED_FROM = NOW - timedelta(days=1)
SERVER = """
import sys
from aiosmtpd.controller import Controller

class Count:
    received = 0
    async def handle_DATA(self, server, session, envelope):
        Count.received += 1
        return "250 OK"

controller = Controller(Count(), hostname=sys.argv[1], port=int(sys.argv[2]))
controller.start()
print("ready", flush=True)
for line in sys.stdin:
    print(Count.received, flush=True)
controller.stop()
"""


class SmtpServer:
    """aiosmtpd in a process of its own, counting messages."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(  # noqa: S603 - fixed arguments
            [sys.executable, "-c", SERVER, HOST, str(self.port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout.readline().strip() == "ready"

    def received(self) -> int:
        self.process.stdin.write("count\n")
        self.process.stdin.flush()
        return int(self.process.stdout.readline())

    def stop(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)


def build(subscribers: int) -> None:
    """--subscribers confirmed daily follows of everything, three summaries after them."""
    with transaction.atomic():
        Subscriber.objects.filter(email__endswith=f"@{DOMAIN}").delete()
        Summary.objects.filter(video__slug__startswith="bench-digest-").delete()
        Video.objects.filter(slug__startswith="bench-digest-").delete()
        Channel.objects.filter(slug="bench-digest-channel").delete()
    step = 2000
    for start in range(0, subscribers, step):
        with transaction.atomic():
            made = Subscriber.objects.bulk_create(
                Subscriber(email=f"reader{n}@{DOMAIN}", created_at=FOLLOWED_FROM)
                for n in range(start, min(start + step, subscribers))
            )
            Subscription.objects.bulk_create(
                Subscription(
                    subscriber=subscriber,
                    kind=Subscription.Kind.ALL,
                    frequency=Subscription.Frequency.DAILY,
                    state=Subscription.State.ACTIVE,
                    created_at=FOLLOWED_FROM,
                    confirmed_at=FOLLOWED_FROM,
                    digest_from=FOLLOWED_FROM,
                )
                for subscriber in made
            )
    channel = Channel.objects.create(name="Bench digest channel", slug="bench-digest-channel")
    for n in range(3):
        at = NOW - timedelta(hours=3 - n)
        video = Video.objects.create(
            title=f"Bench digest video {n}",
            slug=f"bench-digest-{n}",
            channel=channel,
            source_url=f"https://www.youtube.com/watch?v=benchdig{n:03d}",
            duration_seconds=600,
            published_on=date(2030, 1, 6),
        )
        Summary.objects.create(
            video=video,
            tldr="What the video says, in thirty seconds: " + "words " * 40,
            status=Summary.Status.PUBLISHED,
            publish_at=at,
            first_published_at=at,
        )


def forget_claims() -> None:
    """As before the first send: no digest claimed, every window from FOLLOWED_FROM."""
    Digest.objects.filter(subscriber__email__endswith=f"@{DOMAIN}").delete()
    Subscription.objects.filter(subscriber__email__endswith=f"@{DOMAIN}").update(
        digest_from=FOLLOWED_FROM
    )


def timed_send() -> tuple[int, float]:
    started = time.perf_counter()
    sent = digests.send_digests(now=NOW).get("daily", 0)
    return sent, time.perf_counter() - started


def peak_memory(subscribers: int) -> tuple[int, float]:
    build(subscribers)
    tracemalloc.start()
    tracemalloc.reset_peak()
    sent = digests.send_digests(now=NOW).get("daily", 0)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return sent, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--small", type=int, default=1_000, help="The smaller memory run.")
    args = parser.parse_args()

    settings.DEBUG = False  # no query log growing with every query
    say(f"database: {connection.vendor} {connection.settings_dict['NAME']}")
    call_command("migrate", verbosity=0)
    server = SmtpServer()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = HOST, server.port
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    try:
        say(f"building {args.subscribers} follows")
        build(args.subscribers)
        sent, seconds = timed_send()
        received = server.received()
        if sent != args.subscribers or received != args.subscribers:
            raise SystemExit(f"sent {sent}, received {received}, wanted {args.subscribers}")
        rate = sent / seconds
        print(f"timed: {sent} digests in {seconds:.1f} s: {rate:.0f} messages/s")
        print(f"  batch {settings.FOLLOW_DIGEST_BATCH} per SMTP connection")
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"  peak RSS of this process so far: {rss:.0f} MiB")
        peaks = {}
        for size in (args.small, args.subscribers):
            sent, peak = peak_memory(size)
            peaks[size] = peak
            print(f"memory: {sent} digests, peak of Python allocations {peak:.1f} MiB")
        print(
            f"flat: {args.subscribers // args.small}x the follows, "
            f"{peaks[args.subscribers] / peaks[args.small]:.2f}x the peak"
        )
    finally:
        server.stop()
        forget_claims()


if __name__ == "__main__":
    main()
