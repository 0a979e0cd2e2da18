"""The summary page's article is stored with the summary (summaries/reader/article.py) and
never outlives what it was rendered from: an edit of the parts, a key phrase, the video's
address, a restored revision, a new version of the markup."""

import itertools

import pytest
from django.urls import reverse
from reversion.models import Version

from summaries.editing import copies, derived, restore
from summaries.editing.save import save_summary
from summaries.models import Chapter, Citation, Summary, SummaryPage
from summaries.reader import article

from .factories import (
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    SummaryFactory,
    TakeawayFactory,
    publish_edit,
)

pytestmark = pytest.mark.django_db

_numbers = itertools.count()


def page(client, summary) -> str:
    # A query string of its own: the page cache never answers.
    response = client.get(summary.get_absolute_url(), {"n": str(next(_numbers))})
    assert response.status_code == 200
    return response.content.decode()


@pytest.fixture
def summary():
    summary = SummaryFactory(live=True)
    ChapterFactory(
        summary=summary,
        title="Speed",
        body="Old words, from [the lab](https://lab.example.org/post).",
        start_time=65,
        position=1,
    )
    derived.refresh_derived_data(summary=summary)
    return summary


def edit_chapter(summary, body):
    def change(chapters):
        chapters[0].body = body
        return chapters

    publish_edit(summary, parts={Chapter: change})


def test_the_article_is_stored_once_and_then_read_not_rendered(client, summary):
    assert "Old words" in page(client, summary)
    stored = SummaryPage.objects.get(summary=summary)
    assert "Old words" in stored.html
    assert stored.data["timed_chapters"] == [["Speed", 65, 1]]

    # What the page prints is the stored article, not the parts.
    SummaryPage.objects.filter(pk=stored.pk).update(html="<p>The stored article.</p>")
    content = page(client, summary)

    assert "The stored article." in content and "<p>Old words" not in content
    # The rest of the page still comes from the summary: JSON-LD clips, reading time.
    assert '"startOffset": 65' in content and "min read" in content


def test_an_edit_of_the_parts_shows_at_once(client, summary):
    page(client, summary)

    edit_chapter(summary, "New words, from [the lab](https://lab.example.org/post).")
    content = page(client, summary)

    assert "New words" in content and "Old words" not in content


def chapter_section(content: str) -> str:
    return content.split('<section class="chapter"', 1)[1].split("</section>", 1)[0]


def test_a_new_key_phrase_changes_the_link_into_the_source(client, summary):
    page(client, summary)
    citation = Citation.objects.get(summary=summary)

    copies.set_key_phrase(
        summary=summary, citation_id=citation.pk, phrase="exact figure", user=EditorFactory()
    )
    copies.publish_changes(summary=summary, user=None)

    # The link in the chapter's text, not only the one in the list of sources.
    assert "#:~:text=exact%20figure" in chapter_section(page(client, summary))


def chapter_start_link(content: str) -> str:
    return content.split('<p class="chapter-start">', 1)[1].split("</p>", 1)[0]


def test_a_new_video_address_changes_the_time_links(client, summary):
    page(client, summary)
    video = summary.video
    video.platform_video_id = "vidnew0001"
    video.source_url = "https://www.youtube.com/watch?v=vidnew0001"
    video.save()

    link = chapter_start_link(page(client, summary))

    assert "vidnew0001" in link and "Watch from 1:05" in link


def test_an_article_rendered_from_parts_read_before_an_edit_is_never_shown(client, summary):
    before = Summary.objects.select_related("video").get(pk=summary.pk)
    stale = article.fresh_article(before)  # read, then an editor saves before it is stored
    edit_chapter(summary, "New words.")

    article.store(before, stale)

    content = page(client, summary)
    assert "New words" in content and "Old words" not in content


def test_saving_a_copy_read_before_an_edit_keeps_the_page_version_moving(summary):
    read_before = Summary.objects.get(pk=summary.pk)
    derived.page_changed(summary_id=summary.pk)
    moved = Summary.objects.get(pk=summary.pk).page_version

    read_before.tldr = "Other words."
    read_before.save()

    assert Summary.objects.get(pk=summary.pk).page_version == moved


def test_a_restored_revision_shows_its_text(client, summary):
    # An article stored before the edits, under the page version the summary started at.
    Summary.objects.filter(pk=summary.pk).update(page_version=0)
    assert "<p>Old words" in page(client, summary)
    edit_chapter(summary, "Words of the first revision.")
    first = Version.objects.get_for_object(summary).first()
    edit_chapter(summary, "Words of the second revision.")

    restore.restore_revision(summary=summary, version=first, user=EditorFactory())
    copies.publish_changes(summary=summary, user=None)

    # The article; the updates and corrections below it quote the older words, struck out.
    content = page(client, summary).split('<section class="corrections"')[0]
    assert "first revision" in content
    assert "<p>Old words" not in content and "second revision" not in content


def test_a_new_version_of_the_markup_renders_every_article_again(client, summary, monkeypatch):
    page(client, summary)
    SummaryPage.objects.filter(summary=summary).update(html="<p>Old markup.</p>")

    monkeypatch.setattr(article, "RENDER_VERSION", article.RENDER_VERSION + 1)

    assert "Old markup." not in page(client, summary)


def test_previews_show_unpublished_changes_and_store_nothing(client, summary):
    copy, _ = copies.start_working_copy(summary=summary)
    chapters = list(copy.chapters.all())
    chapters[0].body = "Unpublished words."
    save_summary(summary=copy, parts={Chapter: chapters}, user=None)
    client.force_login(EditorFactory())

    preview = client.get(reverse("summaries:summary-preview", kwargs={"slug": summary.video.slug}))

    assert "Unpublished words." in preview.content.decode()
    assert not SummaryPage.objects.exists()
    client.logout()
    content = page(client, summary)
    assert "Old words" in content and "Unpublished words." not in content


@pytest.fixture
def summary_with_linked_parts(summary):
    KeyPointFactory(
        summary=summary, title="Faster", body="Read [the post](https://lab.example.org/post)."
    )
    TakeawayFactory(summary=summary, text="See [the chart](https://www.charts.example.com/a).")
    derived.refresh_derived_data(summary=summary)
    return summary


def test_links_in_key_points_and_takeaways_name_their_host_as_chapters_do(
    client, summary_with_linked_parts
):
    content = page(client, summary_with_linked_parts)

    key_points = content[content.index('id="key-points"') : content.index('id="takeaways"')]
    takeaways = content[content.index('id="takeaways"') : content.index('id="chapters"')]
    chapters = content[content.index('id="chapters"') :]
    assert 'the post</a> <span class="link-host">(lab.example.org)</span>' in key_points
    assert 'the chart</a> <span class="link-host">(charts.example.com)</span>' in takeaways
    assert 'the lab</a> <span class="link-host">(lab.example.org)</span>' in chapters


def test_articles_stored_before_the_host_labels_are_rendered_again(
    client, summary_with_linked_parts, monkeypatch
):
    # Stored by the markup of version 3, which printed the links of key points bare.
    with monkeypatch.context() as patch:
        patch.setattr(article, "RENDER_VERSION", 3)
        page(client, summary_with_linked_parts)
    SummaryPage.objects.filter(summary=summary_with_linked_parts).update(
        html="<p>Key points without hosts.</p>"
    )

    content = page(client, summary_with_linked_parts)

    assert "Key points without hosts." not in content
    assert 'the post</a> <span class="link-host">(lab.example.org)</span>' in content
