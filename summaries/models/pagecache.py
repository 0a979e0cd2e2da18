"""What the page cache judges freshness by, kept in the database it caches."""

from django.db import models


class ContentGeneration(models.Model):
    """One row (id 1): the numbers every cached page, fragment and API response is stored
    with, and when content last changed.

    Moved in the same transaction as every change readers or anonymous API clients can see
    (summaries/pagecache/generation.py), so a stored value is current exactly while the
    database says so, whatever the cache itself lost or brought back from a snapshot.
    Created on first use, not by a migration.
    """

    ROW_ID = 1

    id = models.PositiveSmallIntegerField(primary_key=True)
    content = models.BigIntegerField(help_text="Moves on every change readers can see.")
    checks = models.BigIntegerField(help_text="Moves whenever check results are recorded.")
    changed_at = models.FloatField(help_text="When content last changed (Unix time).")

    class Meta:
        constraints = [
            models.CheckConstraint(condition=models.Q(id=1), name="content_generation_one_row"),
        ]

    def __str__(self):
        return f"Content generation {self.content}, checks generation {self.checks}"
