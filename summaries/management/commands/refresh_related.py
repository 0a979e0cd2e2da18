from django.core.management.base import BaseCommand

from summaries.models import Video
from summaries.reader import related, related_bulk


class Command(BaseCommand):
    help = (
        "Recompute the stored related videos: missing or day-old lists (as celery beat does), "
        "or every live video's with --all (after an import, a topic merge or a change of the "
        "ranking), computed in bulk."
    )

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="Every live video.")
        parser.add_argument(
            "--limit", type=int, default=1000, help="At most this many lists without --all."
        )

    def handle(self, *args, all=False, limit=1000, **options):
        if all:
            count = related_bulk.refresh_all_related(progress=self._progress)
        else:
            count = self._refresh_stale(limit)
        self.stdout.write(f"Refreshed the related videos of {count} videos.")

    def _progress(self, done: int, total: int) -> None:
        if done < total:
            self.stdout.write(f"  {done}/{total}")

    def _refresh_stale(self, limit: int) -> int:
        ids = related.stale_videos(limit=limit)
        for n, video in enumerate(Video.objects.filter(pk__in=ids).order_by("pk").iterator(), 1):
            related.refresh_related(video=video)
            if n % 500 == 0:
                self._progress(n, len(ids))
        return len(ids)
