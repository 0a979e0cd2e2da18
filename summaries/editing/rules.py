"""Rules on what editors write, applied alike by the admin and the API.

Each returns messages (empty when the input is fine); the admin shows them as form errors,
the API as a 400 naming the field.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

from summaries.linkcheck import policy
from summaries.models import Chapter, Citation, Organisation, Source, Summary, Takeaway
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
MAX_CITED_URL_CHARS = Source._meta.get_field("url").max_length
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
    allowed = getattr(settings, "FETCH_ALLOWED_NETWORKS", ())
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


# --- Warnings: soft problems that never block a save ----------------------------------


@dataclass(frozen=True)
class Warning:
    where: str
    message: str

    def __str__(self):
        return f"{self.where}: {self.message}"


def _time_warnings(summary: Summary, chapters: list[Chapter]) -> list[Warning]:
    duration = summary.video.duration_seconds
    warnings = []
    previous = None
    for chapter in chapters:
        if chapter.start_time is None:
            continue
        where = f"Chapter {chapter.position} “{chapter.title}”"
        if duration and chapter.start_time >= duration:
            warnings.append(
                Warning(
                    where,
                    f"starts at {format_duration(chapter.start_time)}, after the video "
                    f"ends ({format_duration(duration)}).",
                )
            )
        if previous is not None and chapter.start_time <= previous.start_time:
            warnings.append(
                Warning(
                    where,
                    f"starts at {format_duration(chapter.start_time)}, not after the "
                    f"chapter before it ({format_duration(previous.start_time)}).",
                )
            )
        previous = chapter
    items = [("Key point", k) for k in summary.key_points.all()]
    items += [("Takeaway", t) for t in summary.takeaways.all()]
    for label, item in items:
        if item.time is not None and duration and item.time >= duration:
            warnings.append(
                Warning(
                    f"{label} {item.position}",
                    f"time {format_duration(item.time)} is after "
                    f"the video ends ({format_duration(duration)}).",
                )
            )
    return warnings


def _normalise_text(text: str) -> str:
    return " ".join(text.lower().split())


def _figure_warnings(
    takeaways: list[Takeaway], citations: list[Citation], chapters
) -> list[Warning]:
    """A figure in a takeaway needs a source: its own link, or a cited paragraph stating it."""
    cited_paragraphs = []
    for chapter in chapters:
        for item in extract_citations(chapter.body):
            cited_paragraphs.append(_normalise_text(item.paragraph))
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


def summary_warnings(*, summary: Summary) -> list[Warning]:
    """Soft problems an editor should look at; none of them blocks saving or publishing.

    Chapter times out of order or past the video's end, a figure in a takeaway with no
    cited source, and an "X says" claim whose link is not on X's domains.
    """
    chapters = list(summary.chapters.all())
    takeaways = list(summary.takeaways.all())
    citations = list(summary.citations.all())
    return (
        _time_warnings(summary, chapters)
        + _figure_warnings(takeaways, citations, chapters)
        + _attribution_warnings(citations)
    )
