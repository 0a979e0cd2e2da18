"""What editors type, judged the same way in the admin and in the API.

Titles, names and slugs must have a visible character (zero-width spaces, bidi overrides
and the like at the edges are dropped); cited links must be links readers can follow.
"""

import pytest
from django.urls import reverse

from summaries.models import Chapter, Person, Topic, Video

from .admin_forms import add_inline_row, form_fields
from .factories import ChannelFactory, ChapterFactory, SummaryFactory
from .test_api_write import LIST_URL, catalogue, detail_url, example_payload  # noqa: F401

pytestmark = pytest.mark.django_db

# Each draws nothing: zero-width space, word joiner, byte order mark, bidi override and
# isolate controls, a Hangul filler, the braille blank and a no-break space.
INVISIBLE = [
    "\u200b",
    "\u200b\u200c\u200d",
    "\u2060\ufeff",
    "\u202e",
    "\u202a\u202c\u2066\u2069",
    "\u3164",
    "\u2800",
    "\u00a0\u200b",
]


def error_fields(response) -> dict:
    assert response.status_code == 400, response.content
    return response.json()["error"]["fields"]


# --- Titles, names and slugs ------------------------------------------------------------


@pytest.mark.parametrize("text", INVISIBLE)
@pytest.mark.parametrize("kind", ["people", "topics", "channels", "organisations"])
def test_the_api_refuses_a_name_with_no_visible_character(editor_api, kind, text):
    response = editor_api.post(f"/api/v1/{kind}/", {"name": text, "slug": "x"}, format="json")
    assert "no visible character" in " ".join(error_fields(response)["name"])


@pytest.mark.parametrize("text", INVISIBLE)
def test_the_admin_refuses_a_name_with_no_visible_character(editor_client, text):
    response = editor_client.post(
        reverse("admin:summaries_person_add"), {"name": text, "slug": "nobody"}
    )
    assert response.status_code == 200
    assert "no visible character" in response.content.decode()
    assert not Person.objects.exists()


@pytest.mark.parametrize("slug", ["\u200b", "ab\u200bc", "\u202e"])
def test_slugs_must_be_visible_letters_digits_and_dashes(editor_api, editor_client, slug):
    response = editor_api.post("/api/v1/topics/", {"name": "Agents", "slug": slug}, format="json")
    assert "slug" in error_fields(response)
    response = editor_client.post(reverse("admin:summaries_topic_add"), {"name": "A", "slug": slug})
    assert response.status_code == 200 and not Topic.objects.exists()


@pytest.mark.parametrize(
    ("path", "where"),
    [
        (("video", "title"), "video.title"),
        (("tldr",), "tldr"),
        (("chapters", 0, "title"), "chapters[0].title"),
        (("key_points", 0, "title"), "key_points[0].title"),
    ],
)
def test_the_api_refuses_summary_text_with_no_visible_character(editor_api, catalogue, path, where):  # noqa: F811
    payload = example_payload()
    target = payload
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = "\u200b\u202e"
    fields = error_fields(editor_api.post(LIST_URL, payload, format="json"))
    assert "no visible character" in " ".join(fields[where])
    assert not Video.objects.exists()


def test_invisible_edges_are_dropped_in_the_api(editor_api, catalogue):  # noqa: F811
    payload = example_payload()
    payload["video"]["title"] = "\u202e\u200bFast Mode\u200b\u2066"
    payload["chapters"][0]["title"] = "\ufeffWhy speed matters\u200d"
    response = editor_api.post(LIST_URL, payload, format="json")
    assert response.status_code == 201, response.content
    assert Video.objects.get().title == "Fast Mode"
    assert Chapter.objects.get(position=1).title == "Why speed matters"
    response = editor_api.post(
        "/api/v1/people/", {"name": "\u200bAda\u202c", "slug": "ada"}, format="json"
    )
    assert response.status_code == 201 and Person.objects.get(slug="ada").name == "Ada"


def test_invisible_edges_are_dropped_in_the_admin(editor_client):
    response = editor_client.post(
        reverse("admin:summaries_person_add"), {"name": "\u2066Ada\u200b", "slug": "ada"}
    )
    assert response.status_code == 302
    assert Person.objects.get().name == "Ada"


def test_the_admin_refuses_a_chapter_title_with_no_visible_character(editor_client):
    summary = SummaryFactory()
    url = reverse("admin:summaries_summary_change", args=[summary.pk])
    data = form_fields(editor_client.get(url))
    add_inline_row(data, "chapters", title="\u200b\u200b", body="Some text.", position="1")
    response = editor_client.post(url, data)
    assert response.status_code == 200
    assert "no visible character" in response.content.decode()
    assert not summary.chapters.exists()


def test_text_that_only_looks_odd_is_kept(editor_api):
    """Right-to-left names, emoji sequences and accents written as combining marks."""
    for name, slug in [("سارة", "sara"), ("👩\u200d💻 Dev", "dev"), ("Cafe\u0301", "cafe")]:
        response = editor_api.post("/api/v1/people/", {"name": name, "slug": slug}, format="json")
        assert response.status_code == 201, response.content
        assert Person.objects.get(slug=slug).name == name


def test_an_existing_chapter_keeps_its_text_when_an_invisible_title_is_refused(editor_client):
    chapter = ChapterFactory(title="Kept title")
    url = reverse("admin:summaries_summary_change", args=[chapter.summary.pk])
    data = form_fields(editor_client.get(url))
    data["chapters-0-title"] = "\u202e"
    assert editor_client.post(url, data).status_code == 200
    chapter.refresh_from_db()
    assert chapter.title == "Kept title"


def test_channel_names_through_the_api_update(editor_api):
    channel = ChannelFactory(name="Old name")
    detail = editor_api.get(f"/api/v1/channels/{channel.slug}/")
    response = editor_api.patch(
        f"/api/v1/channels/{channel.slug}/",
        {"name": "\u200b"},
        format="json",
        HTTP_IF_MATCH=detail["ETag"],
    )
    assert "name" in error_fields(response)
    channel.refresh_from_db()
    assert channel.name == "Old name"


def test_summary_update_refuses_an_invisible_title(editor_api, catalogue):  # noqa: F811
    created = editor_api.post(LIST_URL, example_payload(), format="json")
    slug = created.json()["video"]["slug"]
    response = editor_api.patch(
        detail_url(slug),
        {"video": {"title": "\u2800"}},
        format="json",
        HTTP_IF_MATCH=created["ETag"],
    )
    assert "video.title" in error_fields(response)


# --- Cited links ------------------------------------------------------------------------

# (Markdown, the scheme a browser would follow it with)
LINKS_READERS_CANNOT_FOLLOW = [
    ("[the source](javascript:alert(1))", "javascript"),
    ("[the source](JaVaScRiPt:alert(1))", "javascript"),
    ("[the source](file:///etc/passwd)", "file"),
    ("[the source](gopher://example.com/1)", "gopher"),
    ("[the source](data:text/html,hello)", "data"),
    ("[the source](DATA:text/html;base64,PHNjcmlwdD4=)", "data"),
    ("[the source](vbscript:msgbox)", "vbscript"),
    ("<ftp://example.com/report.pdf>", "ftp"),
    ('<a href="java&#9;script:alert(1)">the source</a>', "javascript"),
    ("[the source][1]\n\n[1]: javascript:alert(1)", "javascript"),
]


@pytest.mark.parametrize(("link", "scheme"), LINKS_READERS_CANNOT_FOLLOW)
def test_the_api_names_the_chapter_and_the_link_of_another_scheme(
    editor_api,
    catalogue,  # noqa: F811
    link,
    scheme,
):
    payload = example_payload()
    payload["chapters"][1]["body"] = f"It is 2.5 times faster, says {link}"
    fields = error_fields(editor_api.post(LIST_URL, payload, format="json"))
    message = " ".join(fields["chapters[1].body"])
    assert f"{scheme}: links cannot be cited" in message
    assert not Video.objects.exists()


@pytest.mark.parametrize("where", ["key_points", "takeaways", "caveats"])
def test_the_api_checks_links_in_every_markdown_text(editor_api, catalogue, where):  # noqa: F811
    payload = example_payload()
    field = "body" if where == "key_points" else "text"
    payload[where][0][field] = "See [this](javascript:alert(1))."
    fields = error_fields(editor_api.post(LIST_URL, payload, format="json"))
    assert "javascript:" in " ".join(fields[f"{where}[0].{field}"])


def test_mailto_links_are_allowed_and_never_checked(editor_api, catalogue):  # noqa: F811
    payload = example_payload()
    payload["chapters"][0]["body"] += " Write to [the editors](mailto:editors@example.com)."
    response = editor_api.post(LIST_URL, payload, format="json")
    assert response.status_code == 201, response.content
    cited = [c["source"]["url"] for c in response.json()["citations"]]
    assert not any(url.startswith("mailto:") for url in cited)


@pytest.mark.parametrize(
    ("link", "scheme"), LINKS_READERS_CANNOT_FOLLOW[:3] + LINKS_READERS_CANNOT_FOLLOW[-2:]
)
def test_the_admin_names_the_chapter_and_the_link_of_another_scheme(editor_client, link, scheme):
    summary = SummaryFactory()
    url = reverse("admin:summaries_summary_change", args=[summary.pk])
    data = form_fields(editor_client.get(url))
    body = f"Faster, says {link}"
    add_inline_row(data, "chapters", title="Speed claims", body=body, position="1")
    response = editor_client.post(url, data)
    assert response.status_code == 200
    content = response.content.decode()
    assert "Chapter “Speed claims”: Link “" in content
    assert f"{scheme}: links cannot be cited" in content
    assert not summary.chapters.exists()


def test_the_admin_refuses_internal_addresses_as_the_api_does(editor_client):
    summary = SummaryFactory()
    url = reverse("admin:summaries_summary_change", args=[summary.pk])
    data = form_fields(editor_client.get(url))
    add_inline_row(data, "takeaways", text="See [it](http://127.0.0.1:8000/admin/).", position="1")
    response = editor_client.post(url, data)
    assert response.status_code == 200
    assert "loopback" in response.content.decode()
    assert not summary.takeaways.exists()


def test_the_admin_accepts_mailto_links(editor_client):
    summary = SummaryFactory()
    url = reverse("admin:summaries_summary_change", args=[summary.pk])
    data = form_fields(editor_client.get(url))
    add_inline_row(
        data, "chapters", title="Contact", body="[Mail](mailto:a@example.com).", position="1"
    )
    assert editor_client.post(url, data).status_code == 302
    assert summary.chapters.get().title == "Contact"
