"""What a reader is told about a cited source: a label they can act on, never our errors.

The checker's states and error classes are for editors (the admin shows them). A reader
learns whether the link worked when we last opened it, whether it moved (and where), whether
the page was gone, whether the cited statement is still there, or, when the fault was ours
or the site turned our checker away, only that it could not be checked.

Here, below the reader, because recording check results (`record.record_results`) must
know whether a check changed what readers are shown, so that cached pages are marked
stale exactly then; reader pages (summaries/reader/presentation.py) show the same labels.
"""

from dataclasses import dataclass
from datetime import datetime

from summaries.models import Citation, Source
from summaries.text.links import host_of, http_url

State = Source.State
Verdict = Citation.Verdict

# Modifiers (CSS: source-label--<modifier>), from reassuring to alarming.
CHECKED = "checked"
PENDING = "pending"
NEUTRAL = "neutral"  # could not be checked: our limits, bot walls, flaky networks
MOVED = "moved"
CLAIM_CHANGED = "claim-changed"
CLAIM_MISSING = "claim-missing"
UNAVAILABLE = "unavailable"
MODIFIERS = (CHECKED, PENDING, NEUTRAL, MOVED, CLAIM_CHANGED, CLAIM_MISSING, UNAVAILABLE)

# Answers that say the page is gone, and the server troubles we report as "unavailable".
GONE_STATUSES = frozenset({404, 410})
MAY_STILL_OPEN = " It may still open in your browser."
# What a failed check tells the reader, by error class (the values of
# summaries.linkcheck.ErrorClass, spelt out: unknown classes must read as a default, and
# this text is the reader's, not the fetcher's). {when} is " on 3 Dec 2026" or "".
_COULD_NOT = {
    "timeout": "The site did not answer in time when we tried{when}. This is often temporary.",
    "dns": "The site's name could not be looked up when we tried{when}.",
    "refused": "We could not connect to the site when we tried{when}.",
    "reset": "The site closed the connection before answering when we tried{when}.",
    "protocol": "The site's answer could not be read when we tried{when}.",
    "tls": "A secure connection to the site could not be set up when we tried{when}.",
    "no_slot": "Our checker ran out of time before it reached the site{when}.",
    "body_too_large": "The page is too large for our checker to read{when}.",
    "too_many_redirects": "The address kept sending us elsewhere without reaching a page{when}.",
    "redirect_loop": "The address kept sending us elsewhere without reaching a page{when}.",
}
_COULD_NOT_DEFAULT = "Our checker could not complete the check{when}."
MOVED_TEXT_CHARS = 60


@dataclass(frozen=True)
class SourceLabel:
    """A cited source as a reader sees it: a short label, why, and where it moved to."""

    label: str
    explanation: str
    modifier: str
    moved_to: str = ""  # an http(s) URL, or ""
    moved_to_text: str = ""  # the new address as shown: host and path, shortened


def _when(checked_at: datetime | None) -> str:
    # Spelt out rather than strftime("%b"), whose month names follow the process locale.
    if checked_at is None:
        return ""
    month = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()[checked_at.month - 1]
    return f" on {checked_at.day} {month} {checked_at.year}"


def _shown(url: str) -> str:
    """example.org/new/page for https://www.example.org/new/page, cut to a readable length."""
    rest = url.split("://", 1)[-1].split("#", 1)[0].rstrip("/")
    path = rest[rest.find("/") :] if "/" in rest else ""
    text = host_of(url) + path
    return text if len(text) <= MOVED_TEXT_CHARS else text[: MOVED_TEXT_CHARS - 1] + "…"


def _moved_to(state: str, url: str, final_url: str) -> tuple[str, str]:
    target = http_url(final_url)
    if state != State.REDIRECTED or not target or target == url:
        return "", ""
    return target, _shown(target)


def _could_not_be_checked(why: str) -> SourceLabel:
    return SourceLabel("Could not be checked", why + MAY_STILL_OPEN, NEUTRAL)


def _broken(error_class: str, status_code: int | None, when: str) -> SourceLabel:
    if error_class in ("too_many_redirects", "redirect_loop"):
        return _could_not_be_checked(_COULD_NOT[error_class].format(when=when))
    if status_code is None or status_code in GONE_STATUSES:
        why = f"The page was not found at this address when we checked{when}."
        why += " It may have been moved or removed; a web archive may still have a copy."
    elif status_code == 451:
        why = f"The site said the page is withheld for legal reasons when we checked{when}."
    elif status_code >= 500:
        why = f"The site could not serve the page when we checked{when}."
        why += " This is often temporary."
    else:  # another refusal of our request (bad request, method not allowed, ...)
        return _could_not_be_checked(f"The site turned down our checker's request{when}.")
    return SourceLabel("Unavailable when last checked", why, UNAVAILABLE)


def _readable(state: str, verdict: str, when: str, moved: tuple[str, str]) -> SourceLabel:
    """A page we could read: its claim verdict first, then whether it moved."""
    also_moved = " It has also moved to a new address." if state == State.REDIRECTED else ""
    if verdict == Verdict.NOT_FOUND:
        why = f"When we read the page{when}, the words this summary relies on were not there."
        why += " The page may have been edited since the summary was written." + also_moved
        return SourceLabel(
            "The source no longer contains this statement", why, CLAIM_MISSING, *moved
        )
    if verdict == Verdict.CHANGED:
        why = "The cited words are still on the page, but the page has changed since an editor"
        why += f" confirmed it (we read it{when}), so their context may differ." + also_moved
        return SourceLabel(
            "The source changed since this was confirmed", why, CLAIM_CHANGED, *moved
        )
    found = " The cited statement was on the page." if verdict == Verdict.SUPPORTED else ""
    if state == State.REDIRECTED:
        why = "This address now leads to a new one, which worked when we checked"
        return SourceLabel("Moved", f"{why}{when}.{found}", MOVED, *moved)
    label = f"Checked{when.removeprefix(' on')}"
    return SourceLabel(label, f"The link worked when we checked it{when}.{found}", CHECKED)


def source_label(
    *,
    state: str,
    error_class: str = "",
    status_code: int | None = None,
    verdict: str = Verdict.UNCHECKED,
    checked_at: datetime | None = None,
    url: str = "",
    final_url: str = "",
    ignored: bool = False,
) -> SourceLabel:
    """The label a reader sees beside a cited source, from its latest check and claim verdict.

    Pure: the same arguments give the same label, for any combination (unknown states and
    error classes read as "could not be checked"). `checked_at` is shown as given, so pass
    it in the reader's time zone. The text never names an error class or a status code.
    """
    when = _when(checked_at)
    if state == State.UNCHECKED:
        if ignored:
            return SourceLabel("Not checked", "We do not check this link automatically.", PENDING)
        return SourceLabel("Not checked yet", "We have not opened this link yet.", PENDING)
    if state in (State.OK, State.REDIRECTED):
        return _readable(state, verdict, when, _moved_to(state, url, final_url))
    if state == State.BROKEN:
        return _broken(error_class, status_code, when)
    if state == State.UNVERIFIABLE:
        why = f"The site turns away automated visitors such as our checker (we tried{when})."
        return _could_not_be_checked(why)
    if state == State.BLOCKED:
        why = "Our checker does not visit addresses of this kind, so the link was not opened."
        return _could_not_be_checked(why)
    return _could_not_be_checked(_COULD_NOT.get(error_class, _COULD_NOT_DEFAULT).format(when=when))


def label_of(source: Source, verdict: str, *, checked_at: datetime | None) -> SourceLabel:
    """`source_label` of a Source row as a citation with `verdict` shows it.

    `checked_at` is the date to show (the source's `last_checked_at` in the reader's time
    zone), or None for the label without its date.
    """
    return source_label(
        state=source.state,
        error_class=source.error_class,
        status_code=source.status_code,
        verdict=verdict,
        checked_at=checked_at,
        url=source.url,
        final_url=source.final_url,
        ignored=source.ignored,
    )


# --- Archived copies ----------------------------------------------------------------------

# The label of a source readers are sent to an archived copy of (CSS:
# source-label--archived); not one of MODIFIERS, which `source_label` gives.
ARCHIVED = "archived"
# Dead sources: gone, or whose name no longer resolves.
_DEAD_ERRORS = frozenset({"dns"})


def needs_archived_copy(*, state: str, error_class: str, verdict: str) -> bool:
    """Whether a citation's live page fails it so that an archived copy should stand in:
    the page is gone (broken, or its name no longer resolves) or no longer holds the key
    phrase (including a page moved to an address that does not). Pages we only could not
    check (bot walls, our limits, timeouts) do not count: they may still open."""
    if verdict in (Verdict.NO_PHRASE, ""):
        return False
    if verdict == Verdict.NOT_FOUND:
        return True
    if state == State.BROKEN:
        return error_class not in ("too_many_redirects", "redirect_loop")
    return state == State.ERROR and error_class in _DEAD_ERRORS


@dataclass(frozen=True)
class ArchivedLabel(SourceLabel):
    """A source shown through its archived copy: the copy's address and date."""

    archived_url: str = ""
    archived_at: datetime | None = None


def archived_label(*, url: str, captured_at: datetime) -> ArchivedLabel:
    """ "Archived copy, 3 Dec 2026": the live page failed its citation, and a web archive's
    copy from that date was checked to hold the cited words. `captured_at` is shown as
    given (the reader's time zone)."""
    when = _when(captured_at).removeprefix(" on ")
    why = "The page at this address no longer shows the cited statement, or is gone."
    why += f" A web archive's copy of it from {when} still does; we checked it holds the words."
    return ArchivedLabel(
        f"Archived copy, {when}", why, ARCHIVED, archived_url=url, archived_at=captured_at
    )
