"""The summary page at the size of a real summary: one warning message per save with the
details under "Things to check", rows that can be added without JavaScript, search, and
the smaller labels and messages of the page and the list."""

import datetime

import pytest
from django.urls import reverse

from summaries.editing import derived, restore, rules
from summaries.models import Caveat, Source, Summary

from .admin_forms import form_fields
from .factories import (
    ChapterFactory,
    EditorFactory,
    OrganisationFactory,
    SummaryFactory,
    TakeawayFactory,
)

pytestmark = pytest.mark.django_db

CHECKED = datetime.datetime(2026, 11, 2, 8, 30, tzinfo=datetime.UTC)


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


def test_a_save_says_once_how_many_sources_could_not_be_checked(reviewer_client):
    summary = SummaryFactory()
    _unresolvable_sources(summary, 3)
    response = reviewer_client.post(
        change_url(summary), open_form(reviewer_client, summary), follow=True
    )
    shown = [str(m) for m in response.context["messages"]]
    warnings = [m for m in shown if "check" in m.lower() and "changed successfully" not in m]
    assert warnings == ["3 sources could not be checked — see Things to check."]
    assert not any("Errno" in m for m in shown)


def test_things_to_check_use_the_readers_words_and_hide_the_reason(reviewer_client):
    summary = SummaryFactory()
    _unresolvable_sources(summary, 2)
    content = reviewer_client.get(change_url(summary)).content.decode()
    section = content[content.index('id="things-to-check"') :]
    section = section[: section.index("</div>")]
    assert "2 sources could not be checked." in section
    assert "The site&#x27;s name could not be looked up when we tried on 2 Nov 2026" in section
    reason = section[section.index("<details>") :]
    # The two links say the same: one item naming both, their reasons behind one disclosure.
    assert "<strong>Link “page 0”, Link “page 1”</strong>" in section
    assert reason.startswith("<details><summary>Technical reasons</summary>")
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


def test_text_warnings_are_in_things_to_check_not_in_messages(reviewer_client):
    OrganisationFactory(name="Anthropic", domains="anthropic.com")
    summary = SummaryFactory(video__duration_seconds=600)
    ChapterFactory(summary=summary, start_time=300, title="Late")
    ChapterFactory(summary=summary, start_time=100, title="Early")
    TakeawayFactory(summary=summary, text="It reached 1,000 tokens per second.")
    response = reviewer_client.post(
        change_url(summary), open_form(reviewer_client, summary), follow=True
    )
    shown = [str(m) for m in response.context["messages"]]
    assert "2 other things to check — see Things to check." in shown
    content = reviewer_client.get(change_url(summary)).content.decode()
    assert "not after the chapter before it" in content
    assert "1,000 tokens per second" in content


# --- Search --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "words",
    ["tokens per second", "benchmark caveat", "qualified claim", "Anthropic post", "x.example"],
)
def test_search_finds_words_in_chapters_caveats_and_citations_once(reviewer_client, words):
    summary = SummaryFactory(video__title="Found")
    SummaryFactory(video__title="Other")
    for n in range(2):  # two matching chapters must not list the summary twice
        ChapterFactory(
            summary=summary,
            body=f"It runs at 1,000 tokens per second [Anthropic post {n}](https://x.example/{n}).",
        )
    derived.sync_citations(summary=summary)
    Caveat.objects.create(
        summary=summary, position=1, text="A benchmark caveat.", claim="qualified claim"
    )
    response = reviewer_client.get(reverse("admin:summaries_summary_changelist"), {"q": words})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    assert [s.pk for s in response.context["cl"].result_list] == [summary.pk]


# --- Rows added without JavaScript -----------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "fields"),
    [
        ("key_points", {"title": "New point", "body": "Why."}),
        ("takeaways", {"text": "New takeaway."}),
        ("chapters", {"title": "New chapter", "body": "Text."}),
        ("caveats", {"text": "New caveat."}),
    ],
)
def test_an_empty_extra_row_is_offered_and_fills_without_javascript(
    reviewer_client, prefix, fields
):
    summary = SummaryFactory()
    data = open_form(reviewer_client, summary)
    assert data[f"{prefix}-TOTAL_FORMS"] == "1"  # one empty row, in the page itself
    untouched = dict(data)
    response = reviewer_client.post(change_url(summary), untouched)
    assert response.status_code == 302  # the empty rows are neither saved nor errors
    assert getattr(summary, prefix).count() == 0
    data = open_form(reviewer_client, summary)
    data.update({f"{prefix}-0-{name}": value for name, value in fields.items()})
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert getattr(summary, prefix).count() == 1


def test_more_empty_rows_are_asked_for_with_a_reload(reviewer_client):
    summary = SummaryFactory()
    response = reviewer_client.get(change_url(summary), {"rows": "3"})
    assert form_fields(response)["chapters-TOTAL_FORMS"] == "3"
    data = form_fields(response)
    assert 'name="_more_rows"' in response.content.decode()  # the "add rows" button
    data["_more_rows"] = "1"
    response = reviewer_client.post(change_url(summary) + "?rows=3", data)
    assert response.status_code == 302
    assert response["Location"].endswith(change_url(summary) + "?rows=6")


# --- Smaller things ----------------------------------------------------------------------


def test_the_dashboard_praises_sources_only_after_they_were_checked(reviewer_client):
    summary = SummaryFactory()
    ChapterFactory(summary=summary, body="[a](https://example.org/a)")
    derived.sync_citations(summary=summary)
    content = reviewer_client.get(reverse("admin:index")).content.decode()
    assert "Every cited source checks out." not in content
    assert "No cited source has been checked yet." in content
    Source.objects.update(state=Source.State.OK, status_code=200, last_checked_at=CHECKED)
    content = reviewer_client.get(reverse("admin:index")).content.decode()
    assert "Every cited source checks out." in content


def test_send_back_without_a_note_stays_on_the_page_with_the_input(reviewer_client):
    summary = SummaryFactory(status=Summary.Status.IN_REVIEW, tldr="Old words.")
    data = open_form(reviewer_client, summary)
    data.update({"tldr": "Reviewer's fix.", "_send_back": "1", "review_note": "  "})
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 200
    content = response.content.decode()
    assert "Say what the editor should change." in content
    assert "Reviewer&#x27;s fix." in content
    summary.refresh_from_db()
    assert (summary.status, summary.tldr) == (Summary.Status.IN_REVIEW, "Old words.")


def test_send_back_keeps_the_note_typed_when_the_form_has_errors(reviewer_client):
    summary = SummaryFactory(status=Summary.Status.IN_REVIEW)
    data = open_form(reviewer_client, summary)
    data.update({"tldr": "", "_send_back": "1", "review_note": "Fix the title."})
    response = reviewer_client.post(change_url(summary), data)
    assert response.status_code == 200
    assert "Fix the title.</textarea>" in response.content.decode()


def test_the_list_state_is_short_and_names_sent_back_drafts(reviewer_client):
    SummaryFactory(live=True, video__title="Live one")
    SummaryFactory(video__title="Back", review_note="Fix it.")
    response = reviewer_client.get(reverse("admin:summaries_summary_changelist"))
    content = response.content.decode()
    cells = [
        c.split("</span>")[0]
        for c in content.split('<td class="field-list_state"><span class="nowrap">')[1:]
    ]
    assert sorted(cells) == ["Draft (sent back)", "Live"]


def test_last_edit_falls_back_to_the_creator(reviewer_client):
    author = EditorFactory(username="bob")
    summary = SummaryFactory(created_by=author, updated_by=None)
    content = reviewer_client.get(reverse("admin:summaries_summary_changelist")).content.decode()
    assert ", bob</td>" in content
    content = reviewer_client.get(change_url(summary)).content.decode()
    assert "unknown" not in content.split("field-edited")[1][:300]


def test_publish_at_has_a_picker_and_a_format_hint(reviewer_client):
    content = reviewer_client.get(change_url(SummaryFactory())).content.decode()
    field = content.split('class="form-row field-publish_at')[1][:3000]
    assert 'class="vDateField' in field and 'class="vTimeField' in field
    assert "YYYY-MM-DD" in field


def test_the_key_point_body_box_is_four_rows_high(reviewer_client):
    content = reviewer_client.get(change_url(SummaryFactory())).content.decode()
    assert (
        'name="key_points-__prefix__-body" rows="4"'
        in content.replace('cols="40" rows="4"', 'rows="4"')
        or '<textarea name="key_points-__prefix__-body" cols="40" rows="4"' in content
    )


def test_the_saved_message_does_not_nest_quotes(reviewer_client):
    summary = SummaryFactory(video__title="Speed")
    response = reviewer_client.post(
        change_url(summary), open_form(reviewer_client, summary), follow=True
    )
    shown = " ".join(str(m) for m in response.context["messages"])
    assert "Summary of Speed</a>” was changed" in shown
    assert "““" not in shown and "””" not in shown


def test_a_restored_version_without_an_author_is_named_by_its_time():
    from reversion.models import Revision, Version

    version = Version(revision=Revision(date_created=CHECKED, user=None))
    assert restore.describe(version).startswith("the version saved on 2026-11-02")


# --- A light page ------------------------------------------------------------------------


def test_the_page_drops_indentation_but_keeps_texts_as_typed(reviewer_client):
    summary = SummaryFactory()
    body = "    indented code\n\n  two spaces\n\n\n\nfour breaks"
    ChapterFactory(summary=summary, body=body)
    content = reviewer_client.get(change_url(summary)).content.decode()
    assert "\n    <" not in content and ">\n\n" not in content
    assert open_form(reviewer_client, summary)["chapters-0-body"] == body


def test_compacting_leaves_textareas_and_pre_alone():
    from django.http import HttpResponse

    from summaries.admin.summary import compact_html

    html = (
        "<div>\n   <p>\n  a\n  b </p>\n<textarea>\n  x\n\n  y</textarea>"
        "<pre> 1\n\n 2</pre>\n </div>"
    )
    assert compact_html(HttpResponse(html)).content.decode() == (
        "<div>\n<p>\na\nb </p>\n<textarea>\n  x\n\n  y</textarea><pre> 1\n\n 2</pre>\n</div>"
    )


def test_a_save_writes_only_the_parts_that_changed():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from summaries.editing import save
    from summaries.models import Chapter

    summary = SummaryFactory()
    for n in range(1, 4):
        ChapterFactory(summary=summary, position=n, title=f"Chapter {n}", body="Words.")
    chapters = list(summary.chapters.order_by("position"))
    chapters[1].body = "Changed words."
    with CaptureQueriesContext(connection) as captured:
        save.save_summary(summary=summary, parts={Chapter: chapters}, user=None)
    writes = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith('UPDATE "summaries_chapter"')
    ]
    assert len(writes) == 1  # the changed chapter only
    assert list(summary.chapters.order_by("position").values_list("body", "position")) == [
        ("Words.", 1),
        ("Changed words.", 2),
        ("Words.", 3),
    ]
    # Reordered, every row is written again (positions are unique per summary).
    chapters = list(reversed(summary.chapters.order_by("position")))
    save.save_summary(summary=summary, parts={Chapter: chapters}, user=None)
    titles = list(summary.chapters.order_by("position").values_list("title", flat=True))
    assert titles == ["Chapter 3", "Chapter 2", "Chapter 1"]
