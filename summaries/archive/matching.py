"""Whether an archived copy is the page as it was cited, and which captures to try.

A copy stands in for a cited page only if it is that page: a page that merely repeats the
key phrase (a withdrawal notice quoting the claim it withdraws, a later rewrite, another
article) is not. What was cited is read from the citation's records, and a capture must
match them, in this order:

1. its payload (the body as the archive serves it raw) has the sha256 digest of the
   citation's "cited" evidence (the evidence vault); else
2. its text holds the passage recorded around the key phrase when the citation was cited:
   the "cited" evidence's passage, or, without usable evidence, the excerpt recorded when
   an editor confirmed it. Matched as the checker matches phrases (case, whitespace,
   entities, number spellings); a word cut at either end of the passage is left out.

Nothing else counts, and no words of the page are looked for (no "retracted" list): the
passage is the claim in its original context, which a page quoting the claim in other words
does not hold. A record whose passage does not hold the citation's current key phrase is of
another phrase and is not used. A citation with no such record (the vault off, never
confirmed) gets no archived copy: nothing could tell its copy from a page repeating the
phrase.

Captures tried (the window): those taken at or before the citation was first cited with its
phrase (the earliest of its "cited" evidence and its confirmation), newest first; then
those taken after it up to the first check that found the page other than as cited (gone,
or with another text than the one cited: its fingerprint), oldest first; and every capture
the service asked for itself (made after a check found the claim), whenever it was made.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from summaries.linkcheck import CheckResult, find_phrase, normalise_phrase, warc
from summaries.models import ArchivedCopy, Citation, CitationEvidence, SourceCheck

READABLE = frozenset({"ok", "redirected"})
ELLIPSIS = "…"


@dataclass(frozen=True)
class Cited:
    """What a citation was cited on, as recorded."""

    at: datetime  # when first cited with its key phrase
    passage: str  # the words around the key phrase then
    digest: str = ""  # sha256 of the page's payload, in hex ("" when no evidence)
    fingerprint: str = ""  # sha256 of the page's main text ("" when unknown)


def what_was_cited(citation: Citation) -> Cited | None:
    """The citation's record of what it was cited on: its "cited" evidence, and its
    confirmation; None when neither holds its current key phrase (one query)."""
    phrase = citation.key_phrase
    evidence = CitationEvidence.objects.filter(
        citation_id=citation.pk, kind=CitationEvidence.Kind.CITED
    ).first()
    if evidence is not None and find_phrase(evidence.passage, phrase) is None:
        evidence = None
    confirmed = bool(citation.confirmed_at) and find_phrase(citation.confirmed_excerpt, phrase)
    times = [evidence.captured_at] if evidence is not None else []
    if confirmed and citation.confirmed_at is not None:
        times.append(citation.confirmed_at)
    if not times:
        return None
    if evidence is not None:
        return Cited(min(times), evidence.passage, evidence.digest, evidence.fingerprint)
    return Cited(min(times), citation.confirmed_excerpt, "", citation.confirmed_fingerprint)


def claim_lost_at(*, source_id: int, cited: Cited, now: datetime) -> datetime:
    """When the page stopped being the page as cited: the first check after it was cited
    that found it unreadable or with another text (fingerprint); `now` when no check kept
    in the history did."""
    checks = (
        SourceCheck.objects.filter(source_id=source_id, checked_at__gt=cited.at)
        .order_by("checked_at", "id")
        .values_list("checked_at", "state", "fingerprint")
    )
    for checked_at, state, fingerprint in checks:
        if state not in READABLE or (cited.fingerprint and fingerprint != cited.fingerprint):
            return checked_at
    return now


def match(result: CheckResult, cited: Cited) -> str:
    """How a fetched copy is the page as cited (the rule above): "digest" or "passage"
    (ArchivedCopy.Match), or "" when it is not."""
    if cited.digest and result.body is not None:
        if warc.payload_digest(result.body) == cited.digest:
            return ArchivedCopy.Match.DIGEST
    passage = _passage_form(cited.passage)
    if passage and passage in normalise_phrase(result.text or ""):
        return ArchivedCopy.Match.PASSAGE
    return ""


def _passage_form(passage: str) -> str:
    """The passage as matched: without the words an excerpt may have cut at its ends."""
    words = passage.strip().split()
    if words and words[0].startswith(ELLIPSIS):
        words = words[1:]
    if words and words[-1].endswith(ELLIPSIS):
        words = words[:-1]
    return normalise_phrase(" ".join(words))
