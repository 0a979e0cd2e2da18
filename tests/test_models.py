import datetime

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from summaries.models import Appearance, EditConflict, Summary, Video

from .factories import (
    AppearanceFactory,
    ChapterFactory,
    KeyPointFactory,
    OrganisationFactory,
    SummaryFactory,
    VideoFactory,
)

pytestmark = pytest.mark.django_db


def violates(**kwargs):
    """True when the database refuses the row (the check is in the schema, not a form)."""
    try:
        with transaction.atomic():
            kwargs.pop("factory")(**kwargs)
    except IntegrityError:
        return True
    return False


def test_slugs_are_unique():
    VideoFactory(slug="same")
    assert violates(factory=VideoFactory, slug="same")


def test_durations_must_be_positive():
    assert violates(factory=VideoFactory, duration_seconds=0)


def test_language_must_be_a_known_code():
    assert violates(factory=VideoFactory, language="xx-nope")
    assert not violates(factory=VideoFactory, language="pt-br")


def test_one_position_per_item_within_a_summary():
    summary = SummaryFactory()
    ChapterFactory(summary=summary, position=1)
    assert violates(factory=ChapterFactory, summary=summary, position=1)
    assert not violates(factory=ChapterFactory, position=1)  # another summary may use it
    KeyPointFactory(summary=summary, position=1)
    assert violates(factory=KeyPointFactory, summary=summary, position=1)


def test_chapter_body_cannot_be_empty_in_the_database():
    assert violates(factory=ChapterFactory, body="")


def test_published_summary_needs_a_publish_time():
    assert violates(factory=SummaryFactory, status="published", publish_at=None)


def test_youtube_id_is_parsed_on_save_and_unique_per_platform():
    video = VideoFactory(source_url="https://youtu.be/dQw4w9WgXcQ?t=3")
    assert (video.platform, video.platform_video_id) == ("youtube", "dQw4w9WgXcQ")
    assert violates(factory=VideoFactory, source_url="https://www.youtube.com/watch?v=dQw4w9WgXcQ")


def test_affiliation_is_stored_per_appearance():
    openai = OrganisationFactory(name="OpenAI")
    forward = OrganisationFactory(name="Forward Future")
    first = AppearanceFactory(person__name="Sam Altman", organisation=openai)
    second = AppearanceFactory(person=first.person, organisation=forward)
    assert str(first) == "Sam Altman · OpenAI"
    assert str(second) == "Sam Altman · Forward Future"
    assert str(Appearance(person=first.person)) == "Sam Altman"


def test_markdown_html_is_rendered_and_sanitised_on_save():
    chapter = ChapterFactory(body="**Bold** <script>alert(1)</script>")
    assert "<strong>Bold</strong>" in chapter.body_html
    assert "<script" not in chapter.body_html


def test_visibility_is_decided_when_read():
    now = timezone.now()
    live = SummaryFactory(status="published", publish_at=now - datetime.timedelta(minutes=1))
    scheduled = SummaryFactory(status="published", publish_at=now + datetime.timedelta(hours=1))
    SummaryFactory(status="draft")
    SummaryFactory(status="review")
    assert list(Summary.objects.published()) == [live]
    assert list(Summary.objects.scheduled()) == [scheduled]
    later = now + datetime.timedelta(hours=2)
    assert set(Summary.objects.published(now=later)) == {live, scheduled}
    assert set(Video.objects.published(now=later)) == {live.video, scheduled.video}


def test_saving_a_stale_copy_raises_instead_of_overwriting():
    summary = SummaryFactory(tldr="one")
    stale = Summary.objects.get(pk=summary.pk)
    summary.tldr = "two"
    summary.save()
    stale.tldr = "three"
    with pytest.raises(EditConflict):
        stale.save()
    summary.refresh_from_db()
    assert summary.tldr == "two"
