"""A summary's ordered parts (key points, takeaways, chapters, caveats): their positions."""

from typing import TypeAlias

from django.db.models import F

from summaries.models import Caveat, Chapter, KeyPoint, Summary, Takeaway

_REORDER_OFFSET = 10_000

# The ordered parts of a summary, and their models.
Part: TypeAlias = KeyPoint | Takeaway | Chapter | Caveat
PartModel: TypeAlias = type[KeyPoint] | type[Takeaway] | type[Chapter] | type[Caveat]
# In reading order; caveats last, since they refer to chapters and takeaways by position.
PART_MODELS: tuple[PartModel, ...] = (KeyPoint, Takeaway, Chapter, Caveat)


def make_room_for_reorder(*, model: PartModel, summary: Summary) -> None:
    """Shift a summary's items out of the 1..n range before saving their new positions.

    Positions are unique per summary in the database, so swapping two items row by row
    would collide; after this call any new numbering can be written in any order. The
    caller must then write a position for every item it keeps.
    """
    model.objects.filter(summary=summary).update(position=F("position") + _REORDER_OFFSET)


def renumber(*, model: PartModel, summary: Summary) -> None:
    """Number a summary's items 1..n in their current order, closing gaps left by deletes.

    Safe row by row: with distinct positive positions sorted ascending, the i-th item's
    position is at least i, so writing i never collides with an item not yet renumbered.
    """
    items = model.objects.filter(summary=summary).order_by("position", "id")
    for number, (pk, position) in enumerate(items.values_list("pk", "position"), start=1):
        if position != number:
            model.objects.filter(pk=pk).update(position=number)
