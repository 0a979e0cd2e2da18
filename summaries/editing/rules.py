"""Rules on what editors write, applied alike by the admin and the API.

Each returns messages (empty when the input is fine); the admin shows them as form errors,
the API as a 400 naming the field.
"""

import re

from django.conf import settings

from summaries.linkcheck import policy
from summaries.models import Source
from summaries.text.citations import normalise_url
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
