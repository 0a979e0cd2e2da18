"""Rules on what editors write, applied alike by the admin and the API.

Each returns messages (empty when the input is fine); the admin shows them as form errors,
the API as a 400 naming the field.
"""

import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from django.conf import settings
from django.utils import timezone

from summaries.checking import source_labels
from summaries.linkcheck import policy
from summaries.models import (
    Chapter,
    Citation,
    KeyPoint,
    Organisation,
    Source,
    Summary,
    Takeaway,
    Video,
)
from summaries.models.base import max_length
from summaries.text import platforms
from summaries.text.citations import (
    attributed_organisation_names,
    extract_citations,
    find_figures,
    host_matches_domains,
    normalise_url,
)
from summaries.text.durations import format_duration
from summaries.text.markdown import link_targets

CITABLE_SCHEMES = frozenset({"http", "https"})
# Allowed in the text and kept as links, but not sources: nothing is fetched.
UNCHECKED_SCHEMES = frozenset({"mailto"})
MAX_CITED_URL_CHARS = max_length(Source, "url")
# Names that only resolve inside a network (RFC 6761, RFC 6762, RFC 8375 and common use).
LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".intranet", ".lan", ".home.arpa")
# How a browser reads a URL's scheme (WHATWG URL): leading and trailing C0 controls and
# spaces are ignored, tabs and newlines anywhere are removed, letters in any case.
_SCHEME_RE = re.compile(r"([a-zA-Z][a-zA-Z0-9+.\-]*):")
_EDGE_CONTROLS = "".join(chr(code) for code in range(0x21))
_INNER_CONTROLS = str.maketrans("", "", "\t\n\r")
SHOWN_LINK_CHARS = 80


def citable_url_problem(url: str) -> str | None:
    """Why an http(s) link may not be cited (and so never fetched), or None when it may.

    The link checker's address policy as far as it can be judged without DNS
    (linkcheck.policy's parse_target and check_target, with FETCH_ALLOWED_NETWORKS):
    http(s) only, no userinfo, the scheme's own port (80 for http, 443 for https), no
    private, loopback, link-local or otherwise special IP literal in any spelling. Unless
    networks are allowed, names that only resolve inside a network (localhost, *.local,
    single labels) are refused too; a public name that resolves to a private address is
    refused when it is fetched.
    """
    url = url.strip()
    if len(url) > MAX_CITED_URL_CHARS:
        return f"longer than {MAX_CITED_URL_CHARS} characters."
    allowed = settings.FETCH_ALLOWED_NETWORKS
    try:
        target = policy.parse_target(url)
        policy.check_target(target, allowed_networks=allowed)
        normalise_url(url)  # what sync_citations keys sources on
    except policy.Blocked as blocked:
        return f"{blocked.reason}."
    except ValueError:
        return "not a valid web address."
    host = target.host
    if not allowed and target.address is None:
        if "." not in host or host == "localhost" or host.endswith(LOCAL_SUFFIXES):
            return f"{host} is not a public host name."
    return None


def link_scheme(href: str) -> str:
    """The scheme a browser would follow the link with, lower case; "" for a relative link."""
    cleaned = href.strip(_EDGE_CONTROLS).translate(_INNER_CONTROLS)
    match = _SCHEME_RE.match(cleaned)
    return match.group(1).lower() if match else ""


def _link_problem(href: str) -> str | None:
    scheme = link_scheme(href)
    if scheme in CITABLE_SCHEMES:
        return citable_url_problem(href)
    if scheme in UNCHECKED_SCHEMES:
        return None
    if scheme:
        return (
            f"{scheme}: links cannot be cited (readers would get no link); "
            "link to an http(s) address (mailto: is allowed)."
        )
    if href.strip().startswith("//"):
        return "write the scheme: https://…"
    return None  # a link within this site


def _shown(href: str) -> str:
    href = href.strip()
    return href if len(href) <= SHOWN_LINK_CHARS else href[: SHOWN_LINK_CHARS - 3] + "..."


def link_problems(markdown_text: str) -> list[str]:
    """A message for each link of a Markdown text that may not be cited, naming the link.

    http(s) links must pass the address policy (`citable_url_problem`); mailto: links are
    allowed and never checked; links with any other scheme (javascript:, data:, file:, …,
    in any case or spelling a browser accepts) are refused, whether written as Markdown
    links, autolinks, references or raw HTML.
    """
    problems = []
    for href in link_targets(markdown_text):
        problem = _link_problem(href)
        if problem:
            problems.append(f"Link “{_shown(href)}”: {problem}")
    return problems


# --- Videos ---------------------------------------------------------------------------


def duplicate_video_problem(source_url: str, *, exclude_pk: int | None = None) -> str | None:
    """One video per platform id: the same YouTube video pasted twice is an error."""
    platform, video_id = platforms.parse_video_url(source_url or "")
    if not video_id:
        return None
    twins = Video.objects.filter(platform=platform, platform_video_id=video_id)
    if exclude_pk is not None:
        twins = twins.exclude(pk=exclude_pk)
    twin = twins.first()
    if twin is None:
        return None
    return f"This video is already here as “{twin.title}” (same {platform} id {video_id})."


# --- Review ---------------------------------------------------------------------------


def review_note_problem(note: str) -> str | None:
    """A summary is sent back with a note saying what to change (as workflow.send_back
    requires); checked before saving, so that a form is not saved and then refused."""
    if not (note or "").strip():
        return "Say what the editor should change."
    return None


# --- Times into the video --------------------------------------------------------------

# (model, the field holding its time into the video) for the parts that have one.
TIMED_PARTS = ((KeyPoint, "time"), (Takeaway, "time"), (Chapter, "start_time"))


def time_after_end(seconds: int | None, duration: int | None) -> str | None:
    """A time into the video must fall before its end: a link to it would not play."""
    if seconds is None or not duration or seconds < duration:
        return None
    return f"{format_duration(seconds)} is after the video ends ({format_duration(duration)})."


def parts_after_end(summary: Summary | None, duration: int) -> list[str]:
    """What of a saved summary would fall after the video's end if it lasted `duration`."""
    if summary is None or summary.pk is None:
        return []
    problems = []
    for model, field in TIMED_PARTS:
        late = model.objects.filter(summary=summary, **{f"{field}__gte": duration})
        for position, seconds in late.order_by("position").values_list("position", field):
            name = str(model._meta.verbose_name).capitalize()
            problems.append(f"{name} {position}: {time_after_end(seconds, duration)}")
    return problems


# --- Warnings: soft problems that never block a save ----------------------------------


@dataclass(frozen=True)
class Warning:
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def _order_warnings(chapters: list[Chapter]) -> list[Warning]:
    """Chapters whose start time is not after the one before (fine for a chapter grouped by
    theme, worth a look otherwise)."""
    warnings = []
    previous_start = None
    for chapter in chapters:
        start = chapter.start_time
        if start is None:
            continue
        if previous_start is not None and start <= previous_start:
            warnings.append(
                Warning(
                    f"Chapter {chapter.position} “{chapter.title}”",
                    f"starts at {format_duration(start)}, not after the "
                    f"chapter before it ({format_duration(previous_start)}).",
                )
            )
        previous_start = start
    return warnings


def _normalise_text(text: str) -> str:
    return " ".join(text.lower().split())


def _figure_warnings(
    takeaways: list[Takeaway], citations: list[Citation], chapters: list[Chapter]
) -> list[Warning]:
    """A figure in a takeaway needs a source: its own link, or a cited paragraph stating it."""
    # Every link of a paragraph names it: each paragraph is read once.
    paragraphs = {
        item.paragraph for chapter in chapters for item in extract_citations(chapter.body)
    }
    cited_paragraphs = [_normalise_text(paragraph) for paragraph in paragraphs]
    cited_takeaways = {c.takeaway_id for c in citations if c.takeaway_id}
    warnings = []
    for takeaway in takeaways:
        if takeaway.pk in cited_takeaways:
            continue
        for figure in find_figures(takeaway.text):
            needle = _normalise_text(figure)
            if not any(needle in paragraph for paragraph in cited_paragraphs):
                warnings.append(
                    Warning(
                        f"Takeaway {takeaway.position}",
                        f"“{figure}” has no cited source "
                        "(link it here, or cite it in the chapter that states it).",
                    )
                )
    return warnings


def _attribution_warnings(citations: list[Citation]) -> list[Warning]:
    organisations = [o for o in Organisation.objects.exclude(domains="") if o.domain_list()]
    by_name = {o.name: o for o in organisations}
    warnings = []
    for citation in citations:
        for name in attributed_organisation_names(citation.claim, list(by_name)):
            domains = by_name[name].domain_list()
            if not host_matches_domains(citation.url, domains):
                host = urlsplit(citation.url).hostname
                warnings.append(
                    Warning(
                        f"Link “{citation.link_text}”",
                        f"the claim is attributed to {name}, "
                        f"but the link goes to {host}, not {', '.join(domains)}.",
                    )
                )
    return warnings


# What a failed check of a cited page means for the editor, by the source's state.
SOURCE_STATE_PROBLEMS: dict[str, str] = {
    Source.State.BROKEN: "is broken",
    Source.State.UNVERIFIABLE: "could not be verified: it answers with a bot wall",
    Source.State.BLOCKED: "may not be fetched",
    Source.State.ERROR: "could not be checked",
}


def _checked_on(moment: datetime | None) -> str:
    return f", in the check of {timezone.localtime(moment):%Y-%m-%d}" if moment else ""


def _source_problem(citation: Citation, source: Source) -> str | None:
    problem = SOURCE_STATE_PROBLEMS.get(source.state)
    if problem is None:
        return None
    if source.status_code and source.state != Source.State.BLOCKED:
        detail = f"HTTP {source.status_code}"
    else:
        detail = source.error or source.error_class.replace("_", " ")
    detail = f" ({detail})" if detail else ""
    return f"{_shown(citation.url)} {problem}{detail}{_checked_on(source.last_checked_at)}."


def _verdict_problem(citation: Citation) -> str | None:
    url, when = _shown(citation.url), _checked_on(citation.verdict_checked_at)
    if citation.verdict == Citation.Verdict.NOT_FOUND:
        return (
            f"the key phrase “{citation.key_phrase}” was not found on {url}{when}: "
            "check the claim, or change the key phrase."
        )
    if citation.verdict == Citation.Verdict.CHANGED:
        return (
            f"{url} has changed since the citation was confirmed{when}: "
            "check the claim still holds, then confirm it again."
        )
    return None


def _cited_sources(citations: list[Citation]) -> dict[int, Source]:
    """The sources of the citations by id: those loaded with them (select_related), the
    others in one query."""
    field = Citation._meta.get_field("source")
    loaded = {c.source_id: c.source for c in citations if field.is_cached(c)}
    missing = {c.source_id for c in citations} - set(loaded)
    return loaded | (Source.objects.in_bulk(missing) if missing else {})


def source_warnings(citations: list[Citation]) -> list[Warning]:
    """Cited pages whose latest check failed (broken, behind a bot wall, an address that
    may not be fetched, an error), and claims whose key phrase was not found on their
    page or whose page changed since an editor confirmed it; one per link, naming it.

    Sources an administrator chose to ignore are never checked, so say nothing here.
    Reads the cited sources in one query, none when the citations come with them.
    """
    sources = _cited_sources(citations)
    warnings = []
    for citation in citations:
        source = sources.get(citation.source_id)
        if source is None or source.ignored:
            continue
        problem = _source_problem(citation, source) or _verdict_problem(citation)
        if problem:
            warnings.append(Warning(f"Link “{citation.link_text}”", problem))
    return warnings


def _source_warnings_explained(citations: list[Citation]) -> list["ExplainedWarning"]:
    """`source_warnings` in the words readers get (checking.source_labels), each with the
    technical reason (`source_warnings`' message) kept as its detail."""
    sources = Source.objects.in_bulk({citation.source_id for citation in citations})
    explained = []
    for citation in citations:
        source = sources.get(citation.source_id)
        if source is None or source.ignored:
            continue
        problem = _source_problem(citation, source) or _verdict_problem(citation)
        if not problem:
            continue
        when = source.last_checked_at
        if citation.verdict in PROBLEM_VERDICT_GROUPS:
            when = citation.verdict_checked_at
        label = source_labels.label_of(
            source, citation.verdict, checked_at=timezone.localtime(when) if when else None
        )
        group = label.modifier if label.modifier in WARNING_GROUPS else OTHER_GROUP
        explained.append(
            ExplainedWarning(
                where=f"Link “{citation.link_text}”",
                message=f"{label.label}. {label.explanation}",
                detail=problem,
                group=group,
            )
        )
    return explained


# The groups the summary page counts warnings in, with the words of its one-line message
# ("3 sources could not be checked"): reader label modifiers for cited sources, then the rest.
WARNING_GROUPS = {
    source_labels.NEUTRAL: ("source could not be checked", "sources could not be checked"),
    source_labels.UNAVAILABLE: ("source was unavailable", "sources were unavailable"),
    source_labels.CLAIM_MISSING: (
        "source no longer contains its statement",
        "sources no longer contain their statement",
    ),
    source_labels.CLAIM_CHANGED: (
        "source changed since it was confirmed",
        "sources changed since they were confirmed",
    ),
}
OTHER_GROUP = "other"
WARNING_GROUPS[OTHER_GROUP] = ("other thing to check", "other things to check")
PROBLEM_VERDICT_GROUPS = frozenset({Citation.Verdict.NOT_FOUND, Citation.Verdict.CHANGED})


@dataclass(frozen=True)
class ExplainedWarning:
    """A warning as the summary page shows it: plain words, the technical reason (empty
    when the message says it all) and the group it is counted in (WARNING_GROUPS)."""

    where: str
    message: str
    detail: str = ""
    group: str = OTHER_GROUP

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def explained_warnings(*, summary: Summary) -> list[ExplainedWarning]:
    """`summary_warnings` for the summary page: problems of cited sources in the words
    readers get, with the checker's reason as a detail; the others as they are."""
    chapters = list(summary.chapters.all())
    takeaways = list(summary.takeaways.all())
    citations = list(summary.citations.all())
    text_warnings = (
        _order_warnings(chapters)
        + _figure_warnings(takeaways, citations, chapters)
        + _attribution_warnings(citations)
    )
    return [
        ExplainedWarning(where=w.where, message=w.message) for w in text_warnings
    ] + _source_warnings_explained(citations)


def warnings_headline(warnings: list[ExplainedWarning]) -> str:
    """One sentence counting `warnings` by group ("3 sources could not be checked, 1 other
    thing to check"), or "" when there are none."""
    counts: dict[str, int] = {}
    for warning in warnings:
        counts[warning.group] = counts.get(warning.group, 0) + 1
    parts = []
    for group, (one, many) in WARNING_GROUPS.items():
        count = counts.get(group, 0)
        if count:
            parts.append(f"{count} {one if count == 1 else many}")
    return ", ".join(parts)


def summary_warnings(*, summary: Summary) -> list[Warning]:
    """Soft problems an editor should look at; none of them blocks saving or publishing.

    Chapter times out of order, a figure in a takeaway with no cited source, and an
    "X says" claim whose link is not on X's domains, and cited pages that failed their
    check or no longer support their claim (`source_warnings`). (A time past the video's
    end is an error: `time_after_end`.)
    """
    chapters = list(summary.chapters.all())
    takeaways = list(summary.takeaways.all())
    citations = list(summary.citations.all())
    return (
        _order_warnings(chapters)
        + _figure_warnings(takeaways, citations, chapters)
        + _attribution_warnings(citations)
        + source_warnings(citations)
    )
