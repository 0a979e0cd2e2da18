import datetime

import pytest
import time_machine
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone

from summaries.editing import derived, workflow
from summaries.models import Caveat, Summary
from summaries.pagecache.generation import content_changed

from .admin_forms import form_fields
from .factories import (
    AppearanceFactory,
    ChannelFactory,
    ChapterFactory,
    EditorFactory,
    KeyPointFactory,
    OrganisationFactory,
    PersonFactory,
    ReviewerFactory,
    SummaryFactory,
    TakeawayFactory,
    TopicFactory,
    UserFactory,
    VideoFactory,
    publish_edit,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def hidden_summaries(channel=None):
    """A draft, one in review and one scheduled for tomorrow: none may appear anywhere."""
    extra = {"video__channel": channel} if channel else {}
    tomorrow = timezone.now() + datetime.timedelta(days=1)
    return [
        SummaryFactory(video__title="Secret draft", **extra),
        SummaryFactory(video__title="Secret review", status="review", **extra),
        SummaryFactory(
            video__title="Secret scheduled", status="published", publish_at=tomorrow, **extra
        ),
    ]


def rich_summary(chapters=3, sources=3):
    summary = SummaryFactory(live=True, video__title="Rich summary")
    person = AppearanceFactory(video=summary.video, organisation=OrganisationFactory()).person
    summary.video.topics.add(TopicFactory())
    for n in range(3):
        KeyPointFactory(summary=summary, title=f"Point {n}")
        TakeawayFactory(summary=summary, text=f"Takeaway {n}")
    links = iter(range(sources))
    for n in range(chapters):
        body = (
            " ".join(
                f"[Source {i}](https://example{i}.org/page) says it is {i + 2} times faster."
                for i in links
            )
            or "No links."
        )
        chapter = ChapterFactory(summary=summary, title=f"Chapter {n}", body=body, start_time=n)
        Caveat.objects.create(
            summary=summary, chapter=chapter, claim="times faster", text="Careful.", position=n + 1
        )
    derived.refresh_derived_data(summary=summary)
    return summary, person


def test_summary_page_shows_every_part(client):
    summary, person = rich_summary()
    response = client.get(summary.get_absolute_url())
    assert response.status_code == 200
    content = response.content.decode()
    for text in [
        "Rich summary",
        "In 30 seconds",
        summary.tldr,
        "Point 0",
        "Takeaway 2",
        "Read the edited text by chapter",
        f'href="#{summary.chapters.first().anchor}"',
        "Chapter 2",
        "Careful.",
        "Cited sources",
        "Not checked yet",
        "(example0.org)",
        person.name,
    ]:
        assert text in content, text
    # The link carries a text fragment pointing at the cited phrase.
    assert "https://example0.org/page#:~:text=" in content


def test_unpublished_summaries_answer_404_everywhere(client):
    channel = ChannelFactory()
    live = SummaryFactory(live=True, video__channel=channel, video__title="Public one")
    hidden = hidden_summaries(channel)
    for summary in hidden:
        ChapterFactory(summary=summary, body="secretword")
        derived.refresh_derived_data(summary=summary)
        assert client.get(summary.get_absolute_url()).status_code == 404
    pages = [
        reverse("summaries:home"),
        channel.get_absolute_url(),
        live.get_absolute_url(),
        reverse("summaries:search") + "?q=secretword",
        reverse("summaries:search") + "?q=Secret",
    ]
    for url in pages:
        content = client.get(url).content.decode()
        for summary in hidden:
            assert summary.video.title not in content, (url, summary.video.title)


def test_staff_preview_shows_a_draft_exactly_and_is_never_cached(client):
    draft = SummaryFactory(video__title="Draft title")
    url = reverse("summaries:summary-preview", kwargs={"slug": draft.video.slug})
    assert client.get(url).status_code == 302  # anonymous: to the login page
    client.force_login(EditorFactory())
    response = client.get(url)
    assert response.status_code == 200
    assert "Draft title" in response.content.decode()
    assert "no-cache" in response["Cache-Control"]
    assert "Readers cannot see this page" in response.content.decode()


def test_the_preview_is_only_for_those_who_may_see_unpublished_work(client):
    """Staff without the permission to view summaries are refused (403, before the address
    is looked up: every address answers the same, so it tells nothing about drafts)."""
    draft = SummaryFactory(video__title="Draft title")
    url = reverse("summaries:summary-preview", kwargs={"slug": draft.video.slug})
    nowhere = reverse("summaries:summary-preview", kwargs={"slug": "no-such-video"})
    login = reverse("admin:login")

    anonymous = client.get(url)
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(login)
    reader = UserFactory()
    reader.save()  # the factory's password, as force_login's session hash reads it
    client.force_login(reader)
    assert client.get(url).status_code == 302  # not staff: to the admin's login page

    staff = UserFactory(is_staff=True)
    staff.save()
    client.force_login(staff)
    refused = client.get(url)
    assert refused.status_code == 403
    assert "Draft title" not in refused.content.decode()
    assert client.get(nowhere).status_code == 403

    staff.user_permissions.add(Permission.objects.get(codename="view_summary"))
    assert client.get(url).status_code == 200
    assert client.get(nowhere).status_code == 404

    client.force_login(EditorFactory())
    page = client.get(url)
    assert page.status_code == 200 and "Draft title" in page.content.decode()


def test_channel_page_lists_newest_first_and_filters(client):
    channel = ChannelFactory()
    topic, person = TopicFactory(), PersonFactory()
    old = SummaryFactory(
        live=True,
        video__channel=channel,
        video__title="Old video",
        video__published_on=datetime.date(2026, 1, 1),
    )
    new = SummaryFactory(
        live=True,
        video__channel=channel,
        video__title="New video",
        video__published_on=datetime.date(2026, 6, 1),
        video__language="de",
    )
    new.video.topics.add(topic)
    AppearanceFactory(video=old.video, person=person)
    content = client.get(channel.get_absolute_url()).content.decode()
    assert content.index("New video") < content.index("Old video")
    by_topic = client.get(channel.get_absolute_url(), {"topic": topic.slug}).content.decode()
    assert "New video" in by_topic and "Old video" not in by_topic
    by_person = client.get(channel.get_absolute_url(), {"person": person.slug}).content.decode()
    assert "Old video" in by_person and "New video" not in by_person
    german = client.get(channel.get_absolute_url(), {"language": "de"}).content.decode()
    assert "New video" in german and "Old video" not in german
    assert client.get(channel.get_absolute_url(), {"language": "zz"}).status_code == 200


def test_person_and_topic_pages(client):
    summary = SummaryFactory(live=True, video__title="Featured")
    person = AppearanceFactory(video=summary.video).person
    topic = TopicFactory()
    summary.video.topics.add(topic)
    assert "Featured" in client.get(person.get_absolute_url()).content.decode()
    assert "Featured" in client.get(topic.get_absolute_url()).content.decode()
    assert client.get("/people/nobody/").status_code == 404


def test_friendly_404_page(client):
    response = client.get("/videos/does-not-exist/")
    assert response.status_code == 404
    assert "We can’t find that page" in response.content.decode()


def test_reader_pages_send_a_strict_content_security_policy(client):
    summary = SummaryFactory(live=True)
    policy = client.get(summary.get_absolute_url())["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert "frame-ancestors 'none'" in policy


def test_summary_page_query_count_does_not_grow(
    client, django_assert_num_queries, django_assert_max_num_queries
):
    small, _ = rich_summary(chapters=1, sources=1)
    neighbour = SummaryFactory(live=True, video__channel=small.video.channel)
    neighbour.video.topics.add(*small.video.topics.all())
    # "Related" never repeats "More from this channel": one from elsewhere fills it.
    elsewhere = SummaryFactory(live=True)
    elsewhere.video.topics.add(*small.video.topics.all())
    with django_assert_max_num_queries(10_000) as baseline:
        client.get(small.get_absolute_url())
    cache.clear()
    count = len(baseline.captured_queries)
    big, _ = rich_summary(chapters=12, sources=40)
    for _ in range(10):
        other = SummaryFactory(live=True, video__channel=big.video.channel)
        other.video.topics.add(*big.video.topics.all())
    with django_assert_num_queries(count):
        response = client.get(big.get_absolute_url())
    assert response.content.decode().count('class="chapter"') == 12


@pytest.mark.parametrize("page", ["home", "channel"])
def test_list_pages_query_count_does_not_grow(
    client, django_assert_num_queries, django_assert_max_num_queries, page
):
    channel = ChannelFactory()

    def add_videos(n):
        for _ in range(n):
            summary = SummaryFactory(live=True, video__channel=channel)
            AppearanceFactory(video=summary.video, organisation=OrganisationFactory())
            summary.video.topics.add(TopicFactory())

    url = reverse("summaries:home") if page == "home" else channel.get_absolute_url()
    add_videos(2)
    with django_assert_max_num_queries(10_000) as baseline:
        client.get(url)
    cache.clear()
    add_videos(15)
    content_changed()  # as publishing them does: this process's copy of the page is stale
    with django_assert_num_queries(len(baseline.captured_queries)):
        assert client.get(url).status_code == 200


def test_cached_page_is_served_with_one_query_and_invalidated_on_edit(
    client, django_assert_num_queries
):
    summary = SummaryFactory(live=True, tldr="First words.")
    url = summary.get_absolute_url()
    assert "First words." in client.get(url).content.decode()
    with django_assert_num_queries(1):  # the content generation
        assert "First words." in client.get(url).content.decode()
    publish_edit(summary, tldr="Second words.")
    assert "Second words." in client.get(url).content.decode()
    home = reverse("summaries:home")
    assert summary.video.title in client.get(home).content.decode()
    workflow.unpublish_summary(summary=summary)
    assert client.get(url).status_code == 404
    assert summary.video.title not in client.get(home).content.decode()


def test_editing_a_video_or_channel_invalidates_cached_pages(client):
    summary = SummaryFactory(live=True)
    url = summary.get_absolute_url()
    client.get(url)
    client.force_login(EditorFactory())
    channel = summary.video.channel
    change = reverse("admin:summaries_channel_change", args=[channel.pk])
    data = {**form_fields(client.get(change), form_id="channel_form"), "name": "Renamed channel"}
    assert client.post(change, data).status_code == 302
    video = reverse("admin:summaries_video_change", args=[summary.video.pk])
    data = {**form_fields(client.get(video), form_id="video_form"), "title": "Renamed video"}
    assert client.post(video, data).status_code == 302
    client.logout()
    page = client.get(url).content.decode()
    # The channel is shared and renamed at once; the video's title waits for review.
    assert "Renamed channel" in page and "Renamed video" not in page
    workflow.publish_summary(summary=summary, user=ReviewerFactory())
    assert "Renamed video" in client.get(url).content.decode()


def test_scheduled_summary_appears_on_cached_pages_when_it_goes_live(client):
    SummaryFactory(live=True, video__title="Already live")
    at = timezone.now() + datetime.timedelta(minutes=2)
    SummaryFactory(video__title="Coming soon", status=Summary.Status.PUBLISHED, publish_at=at)
    home = reverse("summaries:home")
    assert "Coming soon" not in client.get(home).content.decode()
    with time_machine.travel(at + datetime.timedelta(seconds=5)):
        assert "Coming soon" in client.get(home).content.decode()


def test_search_finds_live_summaries_only(client):
    SummaryFactory(live=True, video__title="Agents and speed")
    SummaryFactory(video__title="Agents draft")
    derived.refresh_derived_data(summary=Summary.objects.get(video__title="Agents and speed"))
    derived.refresh_derived_data(summary=Summary.objects.get(video__title="Agents draft"))
    content = client.get(reverse("summaries:search"), {"q": "agents"}).content.decode()
    assert "Agents and speed" in content
    assert "Agents draft" not in content
    for hostile in ["", "   ", "' OR 1=1 --", "%_%", "<script>alert(1)</script>", "a" * 5000]:
        response = client.get(reverse("summaries:search"), {"q": hostile})
        assert response.status_code == 200
        assert "<script>alert(1)</script>" not in response.content.decode()


def test_more_from_this_channel_shows_card_details(client):
    channel = ChannelFactory(name="Matthew Berman")
    main = SummaryFactory(live=True, video__channel=channel)
    other = SummaryFactory(
        live=True,
        video__channel=channel,
        video__title="Local AI",
        video__duration_seconds=1940,
        video__blurb="Weighs data control.",
        video__published_on=datetime.date(2026, 10, 23),
    )
    AppearanceFactory(
        video=other.video,
        person__name="Sam Altman",
        organisation=OrganisationFactory(name="OpenAI"),
    )
    content = client.get(main.get_absolute_url()).content.decode()
    more = content[content.index("More from this channel") :]
    for text in [
        "Local AI",
        "32:20",  # a length reads as video sites show it
        "EN",
        "Oct 23, 2026",
        "Weighs data control.",
        "Sam Altman</a> · OpenAI",
        "Matthew Berman",
    ]:
        assert text in more, text
    assert VideoFactory._meta.model.objects.count() == 2


def test_sources_that_no_longer_support_their_claim_are_marked(client):
    summary, _ = rich_summary(chapters=1, sources=2)
    first, second = summary.citations.order_by("position")
    first.source.state = "broken"
    first.source.save()
    second.source.state = "ok"  # a verdict comes from reading the page
    second.source.save()
    second.verdict = "changed"
    second.save()
    content = client.get(summary.get_absolute_url()).content.decode()
    assert "Unavailable when last checked" in content
    assert "The source changed since this was confirmed" in content


def test_the_preview_banner_tells_the_summary_state(client):
    client.force_login(EditorFactory())
    live = SummaryFactory(live=True)
    url = reverse("summaries:summary-preview", kwargs={"slug": live.video.slug})
    banner = client.get(url).content.decode()
    assert "Readers cannot see this page" not in banner
    assert "Live" in banner and "Readers see this page" in banner
    soon = timezone.now() + datetime.timedelta(days=1)
    scheduled = SummaryFactory(status=Summary.Status.PUBLISHED, publish_at=soon)
    url = reverse("summaries:summary-preview", kwargs={"slug": scheduled.video.slug})
    assert "Readers cannot see this page until" in client.get(url).content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["topic", "person", "language"])
def test_a_list_filter_holding_a_nul_character_shows_no_videos_rather_than_failing(client, name):
    # PostgreSQL refuses text with NUL in a comparison (a DataError: a 500 before).
    summary = SummaryFactory(live=True)
    topic = TopicFactory()
    summary.video.topics.add(topic)
    for url in (summary.video.channel.get_absolute_url(), topic.get_absolute_url()):
        response = client.get(url, {name: "ab\x00c"})
        assert response.status_code == 200
        assert summary.video.title not in response.content.decode()
        assert client.get(url).status_code == 200
