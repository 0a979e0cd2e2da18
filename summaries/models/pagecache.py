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


class CachePurge(models.Model):
    """Cache tags to purge from the HTTP caches in front of the site (an outbox).

    Written in the transaction of the change it purges for (summaries/pagecache/purge.py),
    so a purge is never lost when the broker or a worker dies: a worker deletes the row
    once every cache confirmed the purge, and a sweeper sends again whatever is left.
    """

    tags = models.TextField(help_text="Space-separated cache tags.")
    due_at = models.DateTimeField(
        db_index=True, help_text="Not sent before this time (a scheduled publication)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["due_at", "id"]

    def __str__(self):
        return f"Purge of {self.tags[:60]} due {self.due_at:%Y-%m-%d %H:%M:%S}"
