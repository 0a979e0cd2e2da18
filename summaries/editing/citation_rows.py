"""Citations across a working copy: what checks derived from them goes where they go.

A citation's evidence (CitationEvidence: what the page said when cited and at the latest
check) and its archived copy hang off its row. A working copy starts with copies of the
live citations and of their evidence (editors see what each source said); publishing writes
each copy's citation onto the live row it was made from, or that cites the same link, so the
live row keeps its id, its evidence and its archived copy. Nothing checks derived is deleted
while the link is still cited.
"""

from collections.abc import Mapping

from summaries.models import ArchivedCopy, Citation, CitationEvidence, Summary

from .derived import CitationMatcher

Kind = CitationEvidence.Kind
# What a citation row says and what checks and editors set on it: all but its id and summary.
_FIELDS = [f.attname for f in Citation._meta.concrete_fields if f.name not in ("id", "summary")]


def copy_evidence(pairs: Mapping[int, int]) -> None:
    """Give each copied citation (`pairs`: live citation id -> its copy's id) the evidence
    rows of the citation it was copied from (the stored records are shared)."""
    rows = list(CitationEvidence.objects.filter(citation_id__in=list(pairs)))
    for row in rows:
        row.pk, row.citation_id = None, pairs[row.citation_id]
    CitationEvidence.objects.bulk_create(rows, batch_size=500)


def merge(*, copy: Summary, live: Summary, origins: Mapping[str, int]) -> None:
    """Make the copy's citations the live summary's (the copy's parts already are).

    Each copy citation is written onto the live citation it was copied from (`origins`:
    copy id as text -> live id), else onto one citing the same link (CitationMatcher); live
    citations left over are deleted (the link is no longer cited), copy citations left over
    move to the live summary.
    """
    live_rows = {c.pk: c for c in Citation.objects.filter(summary=live)}
    copy_rows = list(Citation.objects.filter(summary=copy).order_by("position", "id"))
    pairs = _pairs(copy_rows, live_rows, origins)
    updated = []
    for row in copy_rows:
        if row.pk in pairs:
            target = live_rows[pairs[row.pk]]
            linked_at = min(target.linked_at, row.linked_at)
            for name in _FIELDS:
                setattr(target, name, getattr(row, name))
            # The link was first written when the earlier of the two was.
            target.linked_at = linked_at
            updated.append(target)
    Citation.objects.bulk_update(updated, _FIELDS, batch_size=500)
    _merge_evidence(pairs, copy_rows, live_rows)
    _merge_archived_copies(pairs)
    CitationEvidence.objects.filter(citation_id__in=list(pairs)).delete()
    Citation.objects.filter(pk__in=list(pairs)).delete()
    kept = set(pairs.values())
    Citation.objects.filter(pk__in=[pk for pk in live_rows if pk not in kept]).delete()
    Citation.objects.filter(summary=copy).update(summary=live)


def _pairs(
    copy_rows: list[Citation], live_rows: dict[int, Citation], origins: Mapping[str, int]
) -> dict[int, int]:
    """{copy citation id: live citation id} for the copy's citations of a live one."""
    pairs: dict[int, int] = {}
    for row in copy_rows:
        origin = live_rows.get(origins.get(str(row.pk), -1))
        if origin is not None and origin.source_id == row.source_id:
            pairs[row.pk] = origin.pk
    taken = set(pairs.values())
    matcher = CitationMatcher(c for pk, c in live_rows.items() if pk not in taken)
    rest = [row for row in copy_rows if row.pk not in pairs]
    keys = [
        (r.chapter_id, r.key_point_id, r.takeaway_id, r.source_id, r.link_text, r.claim)
        for r in rest
    ]
    for row, found in zip(rest, matcher.match(keys), strict=True):
        if found is not None:
            pairs[row.pk] = found.pk
    return pairs


def _merge_evidence(
    pairs: dict[int, int], copy_rows: list[Citation], live_rows: dict[int, Citation]
) -> None:
    """Per pair and kind, the evidence the live citation keeps: "latest", the newer
    capture; "cited", the live one, unless the copy was confirmed anew (a confirmation
    pins what the page said then as what was cited)."""
    evidence = {
        (row.citation_id, row.kind): row
        for row in CitationEvidence.objects.filter(citation_id__in=[*pairs, *pairs.values()])
    }
    confirmed = {row.pk: row.confirmed_at for row in copy_rows}
    dropped, moved = [], []
    for copy_id, live_id in pairs.items():
        for kind in (Kind.CITED, Kind.LATEST):
            theirs, ours = evidence.get((copy_id, kind)), evidence.get((live_id, kind))
            if theirs is None:
                continue
            if kind == Kind.LATEST:
                take = ours is None or theirs.captured_at > ours.captured_at
            else:
                reconfirmed = confirmed[copy_id] != live_rows[live_id].confirmed_at
                take = ours is None or (reconfirmed and confirmed[copy_id] is not None)
            if take:
                if ours is not None:
                    dropped.append(ours.pk)
                theirs.citation_id = live_id
                moved.append(theirs)
    CitationEvidence.objects.filter(pk__in=dropped).delete()
    CitationEvidence.objects.bulk_update(moved, ["citation_id"], batch_size=500)


def _merge_archived_copies(pairs: dict[int, int]) -> None:
    """A live citation keeps its archived copy; one without takes its copy's."""
    has_copy = set(
        ArchivedCopy.objects.filter(citation_id__in=list(pairs.values())).values_list(
            "citation_id", flat=True
        )
    )
    moved = []
    for row in ArchivedCopy.objects.filter(citation_id__in=list(pairs)):
        live_id = pairs[row.citation_id]
        if live_id not in has_copy:
            row.citation_id = live_id
            moved.append(row)
    ArchivedCopy.objects.bulk_update(moved, ["citation_id"], batch_size=500)
