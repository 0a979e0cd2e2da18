"""The summary page's short lists: its people, its topics and its cited sources, one query
each, as plain rows.

Loaded as model instances (prefetches, select_related) they cost some 80 instances and
about 2.5 ms of a page that misses the cache; read with values() they become the plain
objects below, with the attributes the page, its JSON-LD and reader/presentation.py read
(a person's name and link, a source's state...), so those need not know where a row came
from. (One query with the three lists as JSON subqueries was slower still: Django took
~4.5 ms to build its SQL and PostgreSQL ~3.5 ms more to run it.)
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import OuterRef, Subquery

from summaries.models import Appearance, Citation, CitationEvidence, Video
from summaries.models.base import slug_url
from summaries.models.catalogue import split_domains

from .compiled import CompiledQuery

_SOURCE_FIELDS = (
    "url",
    "host",
    "state",
    "status_code",
    "final_url",
    "error_class",
    "ignored",
    "last_checked_at",
)


@dataclass(frozen=True)
class PagePerson:
    name: str
    slug: str

    def get_absolute_url(self) -> str:
        return slug_url("summaries:person-detail", self.slug)


@dataclass(frozen=True)
class PageOrganisation:
    name: str
    domains: str

    def domain_list(self) -> list[str]:  # as Organisation's
        return split_domains(self.domains)


@dataclass(frozen=True)
class PageAppearance:
    person: PagePerson
    organisation: PageOrganisation | None


@dataclass(frozen=True)
class PageTopic:
    name: str
    slug: str

    def get_absolute_url(self) -> str:
        return slug_url("summaries:topic-detail", self.slug)


@dataclass(frozen=True)
class PageSource:
    url: str
    host: str
    state: str
    status_code: int | None
    final_url: str
    error_class: str
    ignored: bool
    last_checked_at: datetime | None


@dataclass
class PageCitation:
    url: str
    link_text: str
    key_phrase: str
    claim: str
    verdict: str
    source: PageSource
    source_label: object = field(default=None)  # set by presentation.label_sources
    # The citation's archived copy, when readers are shown it (summaries/archive/).
    archived_url: str = ""
    archived_at: datetime | None = None
    # When the source was first cited for its claim: the earliest of the link's writing,
    # its "cited" evidence and its confirmation; Robust Links' data-versiondate.
    cited_at: datetime | None = None


_PEOPLE = CompiledQuery(
    Appearance,
    lambda video_id: (
        Appearance.objects.filter(video_id=video_id)
        .order_by("position", "id")
        .values_list("person__name", "person__slug", "organisation__name", "organisation__domains")
    ),
    ids=("video_id",),
)

_TOPICS = CompiledQuery(
    Video.topics.through,
    lambda video_id: (
        Video.topics.through.objects.filter(video_id=video_id)
        .order_by("topic__name", "topic__slug")
        .values_list("topic__name", "topic__slug")
    ),
    ids=("video_id",),
)

_CITED_EVIDENCE_AT = Subquery(
    CitationEvidence.objects.filter(
        citation=OuterRef("pk"), kind=CitationEvidence.Kind.CITED
    ).values("captured_at")[:1]
)

_CITATIONS = CompiledQuery(
    Citation,
    lambda summary_id: (
        Citation.objects.filter(summary_id=summary_id)
        .order_by("position", "id")
        .annotate(cited_evidence_at=_CITED_EVIDENCE_AT)
        .values(
            "url",
            "link_text",
            "key_phrase",
            "claim",
            "verdict",
            *(f"source__{name}" for name in _SOURCE_FIELDS),
            "archived_copy__url",
            "archived_copy__captured_at",
            "archived_copy__shown",
            "archived_copy__matched_by",
            "confirmed_at",
            "linked_at",
            "cited_evidence_at",
        )
    ),
    ids=("summary_id",),
)


def people(video_id: int) -> list[PageAppearance]:
    """The video's people in their order on it, with their organisations."""
    return [
        PageAppearance(
            PagePerson(name, slug),
            PageOrganisation(organisation, domains) if organisation is not None else None,
        )
        for name, slug, organisation, domains in _PEOPLE.run(video_id=video_id)
    ]


def topics(video_id: int) -> list[PageTopic]:
    """The video's topics by name."""
    return [PageTopic(name, slug) for name, slug in _TOPICS.run(video_id=video_id)]


def citations(summary_id: int) -> list[PageCitation]:
    """The summary's citations in their order in its text, each with its source's latest
    check."""
    return [
        PageCitation(
            url=row["url"],
            link_text=row["link_text"],
            key_phrase=row["key_phrase"],
            claim=row["claim"],
            verdict=row["verdict"],
            source=PageSource(**{name: row[f"source__{name}"] for name in _SOURCE_FIELDS}),
            cited_at=_earliest(row["linked_at"], row["confirmed_at"], row["cited_evidence_at"]),
            **_archived(row),
        )
        for row in _CITATIONS.run(summary_id=summary_id)
    ]


def _earliest(*moments: datetime | None) -> datetime | None:
    return min((moment for moment in moments if moment is not None), default=None)


def _archived(row: dict) -> dict:
    """The archived copy readers are shown, if any (a copy kept but not shown is not, nor
    one never found to be the page as cited: summaries/archive/matching.py)."""
    if not row["archived_copy__shown"] or not row["archived_copy__url"]:
        return {}
    if not row["archived_copy__matched_by"]:
        return {}
    return {
        "archived_url": row["archived_copy__url"],
        "archived_at": row["archived_copy__captured_at"],
    }
