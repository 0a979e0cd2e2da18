from collections import Counter

from django.core.management.base import BaseCommand

from summaries import thumbnails
from summaries.models import Video


class Command(BaseCommand):
    help = (
        "Fetch and store the thumbnails of videos that have none yet or whose thumbnail or "
        "source URL changed (in this process, as the worker would), or of every video with "
        "--all (again, also those that failed)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="Every video, fetched again.")

    def handle(self, *args, all=False, **options):
        counts = Counter()
        # Those the sweep would queue, without their wait: an operator asked for them now.
        videos = Video.objects.all() if all else thumbnails.videos_needing_fetch()
        for video in videos.order_by("pk").iterator():
            try:
                outcome = thumbnails.fetch_thumbnail(video=video, force=all)
            except thumbnails.TransientFetchError as error:
                outcome = "to try again later"
                self.stderr.write(f"{video.slug}: {error}")
            else:
                if outcome == thumbnails.FAILED:
                    self.stderr.write(f"{video.slug}: {video.thumbnail_error}")
            counts[outcome] += 1
        summary = ", ".join(f"{outcome} {n}" for outcome, n in sorted(counts.items()))
        self.stdout.write(f"Thumbnails: {summary or 'nothing to fetch'}.")
