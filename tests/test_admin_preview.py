"""The summary page's live Markdown preview: an admin endpoint rendering what editors type
exactly as the saved part will be rendered, for staff only, with CSRF and a size cap."""

import re

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from summaries.models import SHORT_TEXT, Caveat, Chapter, KeyPoint, Takeaway
from summaries.text.markdown import MAX_SOURCE_CHARS

from .factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    SummaryFactory,
    TakeawayFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db

HOSTILE = (
    "**Bold** and <script>alert(1)</script> [x](javascript:alert(2)) "
    '<img src="https://tracker.example/p.gif"> <a href="https://ok.example/" onclick="x()">ok</a>'
)


def preview_url():
    return reverse("admin:summaries_summary_markdown_preview")


def preview(client, field, text, **extra):
    return client.post(preview_url(), {"field": field, "text": text}, **extra)


def test_a_chapter_body_is_rendered_as_markdown(editor_client):
    response = preview(editor_client, "chapters-body", "# Title\n\nSome **bold** text.")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "html": "<h2>Title</h2>\n<p>Some <strong>bold</strong> text.</p>",
        "problems": [],
    }


def test_the_preview_is_sanitised_like_the_page(editor_client):
    html = preview(editor_client, "chapters-body", HOSTILE).json()["html"]
    assert "<strong>Bold</strong>" in html
    assert "<script" not in html and "alert(1)" not in html
    assert "javascript:" not in html
    assert "<img" not in html and "onclick" not in html
    assert '<a href="https://ok.example/" rel="nofollow noopener">ok</a>' in html


def test_plain_text_is_escaped(editor_client):
    html = preview(editor_client, "takeaways-text", "5 < 6 & \"quotes\" > 'x'").json()["html"]
    assert "<" not in html.replace("&lt;", "")
    assert "5 &lt; 6 &amp;" in html


@pytest.mark.parametrize(
    ("field", "make", "attribute"),
    [
        ("chapters-body", lambda text: ChapterFactory(body=text), "body_html"),
        ("key_points-body", lambda text: KeyPointFactory(body=text), "body_html"),
        ("takeaways-text", lambda text: TakeawayFactory(text=text), "text_html"),
        (
            "caveats-text",
            lambda text: Caveat.objects.create(summary=SummaryFactory(), text=text, position=1),
            "text_html",
        ),
    ],
)
def test_the_preview_is_what_saving_stores(editor_client, field, make, attribute):
    """Chapters are block Markdown; key points, takeaways and caveats one-line (no <p>)."""
    text = "It is *2.5 times* faster, [says Anthropic](https://www.anthropic.com/x) <b>now</b>."
    saved = make(text)
    assert preview(editor_client, field, text).json()["html"] == getattr(saved, attribute)


def test_empty_text_previews_as_nothing(editor_client):
    assert preview(editor_client, "chapters-body", "  \n").json() == {"html": "", "problems": []}


@pytest.mark.parametrize(
    ("field", "model", "name"),
    [
        ("chapters-body", Chapter, "body"),
        ("key_points-body", KeyPoint, "body"),
        ("takeaways-text", Takeaway, "text"),
        ("caveats-text", Caveat, "text"),
    ],
)
def test_the_cap_is_the_models_max_length(editor_client, field, model, name):
    cap = model._meta.get_field(name).max_length
    assert cap in (SHORT_TEXT, MAX_SOURCE_CHARS)
    assert preview(editor_client, field, "a" * cap).status_code == 200
    response = preview(editor_client, field, "a" * (cap + 1))
    assert response.status_code == 400
    message = response.json()["error"]
    assert f"{cap:,}" in message and f"{cap + 1:,}" in message


def test_an_unknown_field_or_missing_text_is_a_400_with_a_message(editor_client):
    unknown = preview(editor_client, "video-title", "x")
    assert unknown.status_code == 400
    assert "video-title" in unknown.json()["error"]
    missing = editor_client.post(preview_url(), {"field": "chapters-body"})
    assert missing.status_code == 400
    assert "text" in missing.json()["error"]


def test_get_is_not_allowed(editor_client):
    assert (
        editor_client.get(preview_url(), {"field": "chapters-body", "text": "x"}).status_code == 405
    )


def test_anonymous_and_non_staff_users_are_sent_to_the_login_page(client):
    response = preview(client, "chapters-body", "**x**")
    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]
    reader = UserFactory()
    reader.save()
    client.force_login(reader)
    response = preview(client, "chapters-body", "**x**")
    assert response.status_code == 302
    assert reverse("admin:login") in response["Location"]


def test_staff_who_may_not_edit_summaries_are_refused(client):
    viewer = UserFactory(is_staff=True)
    viewer.save()  # the factory's password, as force_login's session hash reads it
    viewer.user_permissions.add(Permission.objects.get(codename="view_summary"))
    client.force_login(viewer)
    assert preview(client, "chapters-body", "**x**").status_code == 403


def test_csrf_is_enforced():
    user = EditorFactory()
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    assert preview(browser, "chapters-body", "**x**").status_code == 403

    # The token of the summary's form (as the page's script sends it) is accepted.
    summary = SummaryFactory()
    page = browser.get(reverse("admin:summaries_summary_change", args=[summary.pk]))
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = preview(browser, "chapters-body", "**x**", headers={"X-CSRFToken": token})
    assert response.status_code == 200
    assert response.json() == {"html": "<p><strong>x</strong></p>", "problems": []}


def test_the_summary_page_loads_the_preview_script_with_its_endpoint(editor_client):
    summary = SummaryFactory()
    ChapterFactory(summary=summary)
    page = editor_client.get(reverse("admin:summaries_summary_change", args=[summary.pk])).text
    script = re.search(r"<script[^>]*markdown-preview\.js[^>]*>", page)
    assert script is not None
    assert f'data-preview-url="{preview_url()}"' in script.group(0)
    for field in ("chapters-body", "key_points-body", "takeaways-text", "caveats-text"):
        assert field in script.group(0)
    # Without JavaScript the reader page's preview is a button away (the saved HTML of every
    # chapter is not repeated in the page: the script previews a body when it is opened).
    assert 'name="_preview"' in page


def test_the_preview_names_links_the_save_would_refuse(editor_client):
    response = preview(
        editor_client,
        "chapters-body",
        "[click](javascript:alert(1)) and [ok](https://example.org/)",
    )
    problems = response.json()["problems"]
    assert len(problems) == 1 and "javascript: links cannot be cited" in problems[0]
