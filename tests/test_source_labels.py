"""What readers are told about cited sources: the label function, every
combination of check state, error class and claim verdict, and the summary page."""

import html
import itertools
import re
from datetime import UTC, datetime

import pytest
from django.core.cache import cache

from summaries.editing import derived
from summaries.linkcheck import ErrorClass
from summaries.models import Citation, Source
from summaries.reader.source_labels import (
    CHECKED,
    CLAIM_CHANGED,
    CLAIM_MISSING,
    MODIFIERS,
    MOVED,
    NEUTRAL,
    PENDING,
    UNAVAILABLE,
    source_label,
)

from .factories import ChapterFactory, SummaryFactory

CHECKED_AT = datetime(2026, 12, 3, 14, 5, tzinfo=UTC)
URL = "https://example.org/report"
NEW_URL = "https://www.example.net/reports/2026"
STATUSES = [None, 200, 301, 400, 401, 403, 404, 405, 410, 429, 451, 500, 502, 503, 504]
ERROR_CLASSES = ["", *ErrorClass, "something_new"]
STATES = [*Source.State, "something_new"]
# What readers must never read: our error vocabulary, error class names, status codes.
FORBIDDEN = re.compile(
    r"\berror\b|\bfail|\bhttp\b|\b[1-5]\d\d\b|"
    + "|".join(rf"\b{re.escape(str(name))}\b" for name in ErrorClass),
    re.IGNORECASE,
)


def label(**kwargs):
    values = {"url": URL, "checked_at": CHECKED_AT, **kwargs}
    return source_label(**values)


# --- Every combination -------------------------------------------------------------------


def every_combination():
    return itertools.product(
        STATES, ERROR_CLASSES, Citation.Verdict, STATUSES, [None, CHECKED_AT], [False, True]
    )


def test_every_combination_has_a_label_an_explanation_and_no_error_vocabulary():
    seen = set()
    for state, error_class, verdict, status, checked_at, ignored in every_combination():
        result = source_label(
            state=state,
            error_class=error_class,
            status_code=status,
            verdict=verdict,
            checked_at=checked_at,
            url=URL,
            final_url=NEW_URL,
            ignored=ignored,
        )
        case = (state, error_class, verdict, status, checked_at, ignored, result)
        assert result.label and result.explanation.endswith("."), case
        assert result.modifier in MODIFIERS, case
        for text in (result.label, result.explanation, result.moved_to_text):
            assert not FORBIDDEN.search(text), case
        assert result.moved_to in ("", NEW_URL), case
        seen.add(result.modifier)
    assert seen == set(MODIFIERS)


def test_the_check_date_is_shown_only_when_there_is_one():
    for state, error_class, verdict, status, _, ignored in every_combination():
        dated, undated = (
            source_label(
                state=state,
                error_class=error_class,
                status_code=status,
                verdict=verdict,
                checked_at=checked_at,
                ignored=ignored,
            )
            for checked_at in (CHECKED_AT, None)
        )
        assert "2026" not in undated.label + undated.explanation
        if state not in (Source.State.UNCHECKED, Source.State.BLOCKED):
            assert "3 Dec 2026" in dated.label + dated.explanation, (state, error_class)


def test_a_source_not_checked_yet_says_so_whatever_else_is_stored():
    for state, error_class, verdict, status, checked_at, ignored in every_combination():
        if state != Source.State.UNCHECKED:
            continue
        result = source_label(
            state=state,
            error_class=error_class,
            status_code=status,
            verdict=verdict,
            checked_at=checked_at,
            ignored=ignored,
        )
        expected = ("Not checked", PENDING) if ignored else ("Not checked yet", PENDING)
        assert (result.label, result.modifier) == expected
        assert ("automatically" in result.explanation) == ignored


# --- Readable pages: the date, moves and claims ------------------------------------------


@pytest.mark.parametrize("verdict", ["unchecked", "supported", "unavailable", "no_phrase"])
def test_a_working_link_shows_the_day_it_was_checked(verdict):
    result = label(state="ok", verdict=verdict, final_url=URL)
    assert (result.label, result.modifier) == ("Checked 3 Dec 2026", CHECKED)
    assert result.explanation.startswith("The link worked when we checked it on 3 Dec 2026.")
    assert ("cited statement was on the page" in result.explanation) == (verdict == "supported")
    assert result.moved_to == ""
    assert label(state="ok", checked_at=None).label == "Checked"


def test_a_moved_source_links_to_its_new_address():
    result = label(state="redirected", verdict="supported", final_url=NEW_URL)
    assert (result.label, result.modifier) == ("Moved", MOVED)
    assert result.moved_to == NEW_URL
    assert result.moved_to_text == "example.net/reports/2026"
    assert "new one, which worked when we checked on 3 Dec 2026" in result.explanation


@pytest.mark.parametrize(
    ("final_url", "moved_to"),
    [
        ("", ""),
        (URL, ""),
        ("javascript:alert(1)", ""),
        ("http://example.net/", "http://example.net/"),
    ],
)
def test_a_move_links_only_to_another_http_address(final_url, moved_to):
    result = label(state="redirected", final_url=final_url)
    assert result.label == "Moved" and result.moved_to == moved_to


def test_a_long_new_address_is_shortened_for_reading_but_linked_whole():
    target = "https://example.net/" + "a" * 100 + "#part"
    result = label(state="redirected", final_url=target)
    assert result.moved_to == target
    assert len(result.moved_to_text) == 60 and result.moved_to_text.endswith("…")


@pytest.mark.parametrize("state", ["ok", "redirected"])
def test_a_statement_no_longer_on_the_source_is_said_plainly(state):
    result = label(state=state, verdict="not_found", final_url=NEW_URL)
    assert (result.label, result.modifier) == (
        "The source no longer contains this statement",
        CLAIM_MISSING,
    )
    assert "When we read the page on 3 Dec 2026" in result.explanation
    assert ("moved to a new address" in result.explanation) == (state == "redirected")
    assert result.moved_to == (NEW_URL if state == "redirected" else "")


@pytest.mark.parametrize("state", ["ok", "redirected"])
def test_a_source_changed_since_confirmation_is_said_plainly(state):
    result = label(state=state, verdict="changed", final_url=NEW_URL)
    assert (result.label, result.modifier) == (
        "The source changed since this was confirmed",
        CLAIM_CHANGED,
    )
    assert "still on the page" in result.explanation
    assert result.moved_to == (NEW_URL if state == "redirected" else "")


# --- Pages we could not read -------------------------------------------------------------


@pytest.mark.parametrize("status", [None, 404, 410])
def test_a_page_gone_is_unavailable_when_last_checked(status):
    result = label(state="broken", error_class="http", status_code=status)
    assert (result.label, result.modifier) == ("Unavailable when last checked", UNAVAILABLE)
    assert "not found at this address when we checked on 3 Dec 2026" in result.explanation


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_server_in_trouble_is_unavailable_and_maybe_temporarily(status):
    result = label(state="broken", error_class="http", status_code=status)
    assert (result.label, result.modifier) == ("Unavailable when last checked", UNAVAILABLE)
    assert "often temporary" in result.explanation


def test_a_page_withheld_for_legal_reasons_is_unavailable():
    result = label(state="broken", error_class="http", status_code=451)
    assert result.modifier == UNAVAILABLE and "legal reasons" in result.explanation


@pytest.mark.parametrize("status", [400, 405, 406, 418])
def test_other_refusals_of_our_request_could_not_be_checked(status):
    result = label(state="broken", error_class="http", status_code=status)
    assert (result.label, result.modifier) == ("Could not be checked", NEUTRAL)
    assert "may still open in your browser" in result.explanation


@pytest.mark.parametrize("error_class", ["too_many_redirects", "redirect_loop"])
def test_endless_redirects_could_not_be_checked(error_class):
    result = label(state="broken", error_class=error_class, status_code=301)
    assert (result.label, result.modifier) == ("Could not be checked", NEUTRAL)
    assert "kept sending us elsewhere" in result.explanation


@pytest.mark.parametrize(
    ("error_class", "why"),
    [
        ("timeout", "did not answer in time when we tried on 3 Dec 2026"),
        ("dns", "name could not be looked up"),
        ("refused", "could not connect"),
        ("reset", "closed the connection"),
        ("protocol", "answer could not be read"),
        ("tls", "secure connection"),
        ("no_slot", "ran out of time before it reached the site"),
        ("body_too_large", "too large for our checker to read"),
        ("internal", "could not complete the check"),
        ("", "could not complete the check"),
        ("something_new", "could not complete the check"),
    ],
)
def test_our_own_failures_are_neutral_and_explained(error_class, why):
    result = label(state="error", error_class=error_class)
    assert (result.label, result.modifier) == ("Could not be checked", NEUTRAL)
    assert why in result.explanation


def test_bot_walls_and_refused_addresses_are_neutral():
    wall = label(state="unverifiable", error_class="http", status_code=403)
    assert (wall.label, wall.modifier) == ("Could not be checked", NEUTRAL)
    assert "turns away automated visitors" in wall.explanation
    blocked = label(state="blocked", error_class="blocked")
    assert (blocked.label, blocked.modifier) == ("Could not be checked", NEUTRAL)
    assert "does not visit addresses of this kind" in blocked.explanation


def test_the_month_does_not_depend_on_the_locale():
    labels = [label(state="ok", checked_at=CHECKED_AT.replace(month=m)).label for m in range(1, 13)]
    months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
    assert [text.split()[2] for text in labels] == months


# --- The summary page --------------------------------------------------------------------

SOURCES = {
    "timeout": {"state": "error", "error_class": "timeout"},
    "gone": {"state": "broken", "error_class": "http", "status_code": 404},
    "moved": {"state": "redirected", "status_code": 200, "final_url": NEW_URL},
    "changed": {"state": "ok", "status_code": 200},
    "wall": {"state": "unverifiable", "error_class": "http", "status_code": 403},
}


def summary_citing(sources: dict[str, dict], verdicts: dict[str, str] | None = None):
    """A live summary citing https://<name>.example.org/ for each name, with those check
    results recorded on the sources; returns the summary."""
    summary = SummaryFactory(live=True)
    body = " ".join(f"[{name}](https://{name}.example.org/) says so." for name in sources)
    ChapterFactory(summary=summary, body=body)
    derived.refresh_derived_data(summary=summary)
    for name, fields in sources.items():
        Source.objects.filter(url=f"https://{name}.example.org/").update(
            last_checked_at=CHECKED_AT, **fields
        )
    for name, verdict in (verdicts or {}).items():
        Citation.objects.filter(summary=summary, url=f"https://{name}.example.org/").update(
            verdict=verdict, key_phrase="says so"
        )
    cache.clear()
    return summary


def sources_section(client, summary) -> str:
    content = client.get(summary.get_absolute_url()).content.decode()
    return content[content.index('<section aria-labelledby="sources">') :].split("</section>")[0]


def visible_text(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def items(section: str) -> dict[str, str]:
    """Each source's list item, by the name in its link text."""
    found = re.findall(r"<li>.*?>(\w+)</a>(.*?)</li>", section, re.S)
    return {name: rest for name, rest in found}


@pytest.mark.django_db
def test_the_summary_page_shows_honest_labels(client):
    summary = summary_citing(SOURCES, verdicts={"changed": "changed", "moved": "supported"})
    section = sources_section(client, summary)
    by_name = {name: visible_text(rest) for name, rest in items(section).items()}
    assert by_name["timeout"].startswith("(timeout.example.org) Could not be checked")
    assert "did not answer in time when we tried on 3 Dec 2026" in by_name["timeout"]
    assert by_name["gone"].startswith("(gone.example.org) Unavailable when last checked")
    assert by_name["moved"].startswith(
        "(moved.example.org) Moved New address: example.net/reports/2026"
    )
    assert f'<a href="{NEW_URL}" rel="nofollow noopener">' in items(section)["moved"]
    assert "The source changed since this was confirmed" in by_name["changed"]
    assert by_name["wall"].startswith("(wall.example.org) Could not be checked")
    assert 'class="source-label source-label--unavailable"' in items(section)["gone"]
    assert 'class="source-label source-label--neutral"' in items(section)["timeout"]


@pytest.mark.django_db
def test_the_summary_page_never_shows_errors_classes_or_status_codes(client):
    every = {
        f"s{n}": {"state": state, "error_class": error_class, "status_code": status}
        for n, (state, error_class, status) in enumerate(
            [(s, "", None) for s in Source.State]
            + [("error", c, None) for c in ErrorClass]
            + [("broken", "http", s) for s in (400, 404, 410, 451, 500, 503)]
            + [("unverifiable", "http", s) for s in (401, 403, 429)]
        )
    }
    summary = summary_citing(every, verdicts={"s1": "not_found", "s2": "changed"})
    section = sources_section(client, summary)
    assert len(items(section)) == len(every)
    assert not FORBIDDEN.search(visible_text(section))
    # Nor in the markup (class names, ids), apart from the links' own addresses.
    markup = re.sub(r'href="[^"]*"', "", section)
    assert not re.search(r"error|\b[1-5]\d\d\b", markup, re.IGNORECASE), markup


@pytest.mark.django_db
def test_each_label_is_focusable_and_described_by_its_explanation(client):
    summary = summary_citing(SOURCES)
    section = sources_section(client, summary)
    names = re.findall(r'tabindex="0" aria-describedby="(source-why-\d+)"', section)
    assert len(names) == len(SOURCES) == len(set(names))
    for name in names:
        assert f'<span class="source-label-why" id="{name}">' in section


@pytest.mark.django_db
def test_labels_add_no_query_to_the_page(
    client, django_assert_num_queries, django_assert_max_num_queries
):
    unchecked = summary_citing({name: {} for name in SOURCES})
    with django_assert_max_num_queries(10_000) as baseline:
        assert "Not checked yet" in sources_section(client, unchecked)
    cache.clear()
    checked = summary_citing(
        {f"{name}2": fields for name, fields in SOURCES.items()}, verdicts={"changed2": "changed"}
    )
    with django_assert_num_queries(len(baseline.captured_queries)):
        assert "Unavailable when last checked" in sources_section(client, checked)


@pytest.mark.django_db
def test_the_api_keeps_the_raw_states(client):
    summary = summary_citing(SOURCES)
    data = client.get(f"/api/v1/summaries/{summary.video.slug}/").json()
    states = {s["url"]: s["state"] for s in _sources_of(data)}
    assert states["https://timeout.example.org/"] == "error"
    assert states["https://gone.example.org/"] == "broken"
    assert states["https://moved.example.org/"] == "redirected"


def _sources_of(data) -> list[dict]:
    """Every dict with a url and a state in an API answer, wherever it is nested."""
    found = []
    if isinstance(data, dict):
        if "url" in data and "state" in data:
            found.append(data)
        for value in data.values():
            found += _sources_of(value)
    elif isinstance(data, list):
        for value in data:
            found += _sources_of(value)
    return found
