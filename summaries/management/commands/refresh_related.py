from django.core.management.base import BaseCommand

from summaries.models import Video
from summaries.reader import related


class Command(BaseCommand):
    help = (
        "Recompute the stored related videos: missing or day-old lists (as celery beat does), "
        "or every live video's with --all (after an import or a change of the ranking)."
    )

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="Every live video.")
        parser.add_argument(
            "--limit", type=int, default=1000, help="At most this many lists without --all."
        )

    def handle(self, *args, all=False, limit=1000, **options):
        if all:
            ids = list(Video.objects.published().order_by("pk").values_list("pk", flat=True))
        else:
            ids = related.stale_videos(limit=limit)
        for n, video in enumerate(Video.objects.filter(pk__in=ids).order_by("pk").iterator(), 1):
            related.refresh_related(video=video)
            if n % 500 == 0:
                self.stdout.write(f"  {n}/{len(ids)}")
        self.stdout.write(f"Refreshed the related videos of {len(ids)} videos.")
