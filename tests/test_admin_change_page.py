"""The summary page at the size of a real summary: one warning message per save with the
details under "Things to check", rows that can be added without JavaScript, search, and
the smaller labels and messages of the page and the list."""

import datetime

import pytest
from django.urls import reverse

from summaries.editing import derived, rules
from summaries.models import Source

from .admin_forms import form_fields
from .factories import (
    ChapterFactory,
    OrganisationFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
)

pytestmark = pytest.mark.django_db

CHECKED = datetime.datetime(2026, 11, 2, 8, 30, tzinfo=datetime.UTC)


@pytest.fixture
def editor(client):
    user = ReviewerFactory(username="alice")
    client.force_login(user)
    return user


def change_url(summary):
    return reverse("admin:summaries_summary_change", args=[summary.pk])


def open_form(client, summary):
    response = client.get(change_url(summary))
    assert response.status_code == 200
    return form_fields(response)


def _unresolvable_sources(summary, count):
    body = " ".join(f"[page {n}](https://example{n}.invalid-host.org/p)." for n in range(count))
    ChapterFactory(summary=summary, title="Sources", body=body)
    derived.sync_citations(summary=summary)
    Source.objects.filter(citations__summary=summary).update(
        state=Source.State.ERROR,
        error_class="dns",
        error="[Errno -2] Name or service not known",
        last_checked_at=CHECKED,
    )


def test_a_save_says_once_how_many_sources_could_not_be_checked(client, editor):
    summary = SummaryFactory()
    _unresolvable_sources(summary, 3)
    response = client.post(change_url(summary), open_form(client, summary), follow=True)
    shown = [str(m) for m in response.context["messages"]]
    warnings = [m for m in shown if "check" in m.lower() and "changed successfully" not in m]
    assert warnings == ["3 sources could not be checked — see Things to check."]
    assert not any("Errno" in m for m in shown)


def test_things_to_check_use_the_readers_words_and_hide_the_reason(client, editor):
    summary = SummaryFactory()
    _unresolvable_sources(summary, 2)
    content = client.get(change_url(summary)).content.decode()
    section = content[content.index('id="things-to-check"') :]
    section = section[: section.index("</div>")]
    assert "2 sources could not be checked." in section
    assert "The site&#x27;s name could not be looked up when we tried on 2 Nov 2026" in section
    reason = section[section.index("<details>") :]
    assert reason.startswith("<details><summary>Technical reason</summary>")
    assert "[Errno -2] Name or service not known" in reason
    assert section.count("Errno") == 2  # only behind the disclosures


def test_headline_counts_each_kind_of_warning():
    warnings = [
        rules.ExplainedWarning("a", "x", group="neutral"),
        rules.ExplainedWarning("b", "x", group="neutral"),
        rules.ExplainedWarning("c", "x", group="unavailable"),
        rules.ExplainedWarning("d", "x"),
    ]
    assert rules.warnings_headline(warnings) == (
        "2 sources could not be checked, 1 source was unavailable, 1 other thing to check"
    )
    assert rules.warnings_headline([]) == ""


def test_text_warnings_are_in_things_to_check_not_in_messages(client, editor):
    OrganisationFactory(name="Anthropic", domains="anthropic.com")
    summary = SummaryFactory(video__duration_seconds=600)
    ChapterFactory(summary=summary, start_time=300, title="Late")
    ChapterFactory(summary=summary, start_time=100, title="Early")
    TakeawayFactory(summary=summary, text="It reached 1,000 tokens per second.")
    response = client.post(change_url(summary), open_form(client, summary), follow=True)
    shown = [str(m) for m in response.context["messages"]]
    assert "2 other things to check — see Things to check." in shown
    content = client.get(change_url(summary)).content.decode()
    assert "not after the chapter before it" in content
    assert "1,000 tokens per second" in content
