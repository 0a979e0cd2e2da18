"""Index pages of channels, people and topics; the header navigation and breadcrumbs; the
person page's affiliations; "Related" never repeating "More from this channel"."""

import datetime
import re

import pytest
from django.core.cache import cache
from django.urls import reverse
from django.utils import timezone
from pytest_django.asserts import assertInHTML

from summaries.editing import workflow
from summaries.models import Summary
from summaries.reader import indexes
from summaries.reader.related import refresh_related
from summaries.reader.views_lists import affiliations

from .factories import (
    AppearanceFactory,
    ChannelFactory,
    OrganisationFactory,
    PersonFactory,
    SummaryFactory,
    TopicFactory,
    VideoFactory,
)

pytestmark = pytest.mark.django_db

INDEXES = ["channels", "people", "topics"]
URL_NAMES = {
    "channels": "summaries:channel-list",
    "people": "summaries:person-list",
    "topics": "summaries:topic-list",
}


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()
    yield
    cache.clear()


def day(month, date, year=2026):
    return datetime.date(year, month, date)


def live_video(*, channel, published_on, person=None, topic=None, organisation=None):
    summary = SummaryFactory(live=True, video__channel=channel, video__published_on=published_on)
    attach(summary.video, person, topic, organisation)
    return summary.video


def attach(video, person=None, topic=None, organisation=None):
    if person is not None:
        AppearanceFactory(video=video, person=person, organisation=organisation)
    if topic is not None:
        video.topics.add(topic)


def hidden_videos(*, channel, person, topic):
    """A draft, one in review, one scheduled, one unpublished and a video with no summary,
    each newer than anything live: none may be counted or listed anywhere."""
    tomorrow = timezone.now() + datetime.timedelta(days=1)
    new = {"video__channel": channel, "video__published_on": day(12, 1)}
    summaries = [
        SummaryFactory(**new),
        SummaryFactory(status=Summary.Status.IN_REVIEW, **new),
        SummaryFactory(status=Summary.Status.PUBLISHED, publish_at=tomorrow, **new),
        workflow.unpublish_summary(summary=SummaryFactory(live=True, **new)),
    ]
    videos = [s.video for s in summaries] + [VideoFactory(channel=channel, published_on=day(12, 1))]
    for video in videos:
        attach(video, person, topic)
    return videos


@pytest.fixture
def catalogue():
    """Three channels, people and topics with live videos; a fourth of each with only
    hidden ones. "B" has the newest live video, "A" the most."""
    a, b, c = (ChannelFactory(name=f"Channel {n}", slug=f"channel-{n.lower()}") for n in "ABC")
    people = {n: PersonFactory(name=f"Person {n}", slug=f"person-{n.lower()}") for n in "ABC"}
    topics = {n: TopicFactory(name=f"Topic {n}", slug=f"topic-{n.lower()}") for n in "ABC"}
    for date in (1, 2, 3):
        live_video(channel=a, published_on=day(10, date), person=people["A"], topic=topics["A"])
    live_video(channel=b, published_on=day(11, 5), person=people["B"], topic=topics["B"])
    live_video(channel=c, published_on=day(9, 1), person=people["C"], topic=topics["C"])
    # Hidden videos of a listed channel, person and topic, newer than their live ones.
    hidden_videos(channel=c, person=people["C"], topic=topics["C"])
    hidden_videos(
        channel=ChannelFactory(name="Channel Secret"),
        person=PersonFactory(name="Person Secret"),
        topic=TopicFactory(name="Topic Secret"),
    )
    return {"channels": [b, a, c], "people": people, "topics": topics}


def entries(content: str) -> list[tuple[str, str]]:
    """(name, count text) of each entry of an index page, in order."""
    return re.findall(
        r'<li><a href="[^"]+">([^<]+)</a>\s*<span class="index-meta">(\d+ summar(?:y|ies))',
        content,
    )


@pytest.mark.parametrize("index", INDEXES)
def test_index_lists_live_counts_newest_activity_first(client, catalogue, index):
    response = client.get(reverse(URL_NAMES[index]))
    assert response.status_code == 200
    content = response.content.decode()
    label = {"channels": "Channel", "people": "Person", "topics": "Topic"}[index]
    # B has the newest video; A more videos but older ones; C's hidden videos do not count.
    assert entries(content) == [
        (f"{label} B", "1 summary"),
        (f"{label} A", "3 summaries"),
        (f"{label} C", "1 summary"),
    ]
    assert "Secret" not in content
    assert '<time datetime="2026-11-05">Nov 5, 2026</time>' in content
    assert "2026-12-01" not in content  # the hidden videos' date


def test_entries_link_to_their_pages(client, catalogue):
    content = client.get(reverse("summaries:person-list")).content.decode()
    assertInHTML(f'<a href="{catalogue["people"]["A"].get_absolute_url()}">Person A</a>', content)
    content = client.get(reverse("summaries:channel-list")).content.decode()
    assert f'href="{catalogue["channels"][0].get_absolute_url()}"' in content


def test_ties_in_activity_go_to_more_videos_then_the_older_entry(client):
    first, second, third = (ChannelFactory(name=f"Tied {n}") for n in range(3))
    for channel in (third, second, first):
        live_video(channel=channel, published_on=day(10, 1))
    live_video(channel=second, published_on=day(9, 1))
    content = client.get(reverse("summaries:channel-list")).content.decode()
    assert [name for name, _ in entries(content)] == ["Tied 1", "Tied 0", "Tied 2"]


@pytest.mark.parametrize("index", INDEXES)
def test_index_titles_and_meta_descriptions(client, catalogue, index):
    content = client.get(reverse(URL_NAMES[index])).content.decode()
    title = index.capitalize()
    assert f"<title>{title} — Curation</title>" in content
    description = re.search(r'<meta name="description" content="([^"]+)">', content)
    assert description is not None
    assert description.group(1).startswith(f"3 {index} ")
    assertInHTML(f"<h1>{title}</h1>", content)


def test_an_empty_index_says_so(client):
    response = client.get(reverse("summaries:topic-list"))
    assert response.status_code == 200
    assert "Nothing published here yet." in response.content.decode()
    assert '<meta name="description" content="0 topics ' in response.content.decode()


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(indexes.IndexView, "paginate_by", 2)


def test_index_is_paginated_and_a_page_out_of_range_is_404(client, catalogue, small_pages):
    url = reverse("summaries:channel-list")
    first = client.get(url).content.decode()
    assert [name for name, _ in entries(first)] == ["Channel B", "Channel A"]
    assert 'rel="next" href="?page=2"' in first
    assert "Page 1 of 2" in first
    second = client.get(url, {"page": 2}).content.decode()
    assert [name for name, _ in entries(second)] == ["Channel C"]
    assert f'rel="prev" href="{url}"' in second
    assert "<title>Channels, page 2 — Curation</title>" in second
    assert client.get(url, {"page": 3}).status_code == 404
    assert client.get(url, {"page": "x"}).status_code == 404


@pytest.mark.parametrize("index", INDEXES)
def test_index_query_count_is_fixed(client, django_assert_num_queries, index, small_pages):
    channels = [ChannelFactory() for _ in range(3)]
    for n in range(12):
        live_video(
            channel=channels[n % 3],
            published_on=day(10, n + 1),
            person=PersonFactory(),
            topic=TopicFactory(),
            organisation=OrganisationFactory(),
        )
    url = reverse(URL_NAMES[index])
    # The content generation, the count, the page's rows, the objects they name, and twice
    # how long the count and the page may be kept (until the next scheduled publication).
    with django_assert_num_queries(6):
        assert client.get(url, {"page": 2}).status_code == 200
    cache.clear()
    for n in range(20):
        live_video(
            channel=ChannelFactory(),
            published_on=day(11, n + 1),
            person=PersonFactory(),
            topic=TopicFactory(),
        )
    with django_assert_num_queries(6):
        assert client.get(url).status_code == 200
    # The count is kept for the other pages; a page itself is kept whole.
    with django_assert_num_queries(4):
        assert client.get(url, {"page": 3}).status_code == 200
    with django_assert_num_queries(1):  # the content generation
        assert client.get(url, {"page": 3}).status_code == 200


def test_index_pages_are_page_cached_and_invalidated_on_publish(client, catalogue):
    url = reverse("summaries:channel-list")
    response = client.get(url)
    assert "max-age" in response["Cache-Control"]
    assert "Channel Secret" not in response.content.decode()
    draft = Summary.objects.filter(
        status=Summary.Status.DRAFT, video__channel__name="Channel Secret"
    ).first()
    workflow.publish_summary(summary=draft)
    assert "Channel Secret" in client.get(url).content.decode()


# --- Header navigation and breadcrumbs ------------------------------------------------------


def nav_current(content: str) -> list[tuple[str, str]]:
    """(link text, aria-current) of the marked links of the header navigation."""
    nav = re.search(r'<nav class="site-nav" aria-label="Main">(.*?)</nav>', content, re.S)
    assert nav is not None
    return re.findall(r'aria-current="(\w+)">(\w+)</a>', nav.group(1))


def test_header_navigation_marks_the_current_section(client, catalogue):
    channel = catalogue["channels"][1]
    person, topic = catalogue["people"]["A"], catalogue["topics"]["A"]
    video = channel.videos.filter(summary__status="published").first()
    pages = {
        reverse("summaries:home"): [("page", "Home")],
        reverse("summaries:channel-list"): [("page", "Channels")],
        reverse("summaries:person-list"): [("page", "People")],
        reverse("summaries:topic-list"): [("page", "Topics")],
        # Inside a section: marked, but not as the page itself.
        channel.get_absolute_url(): [("true", "Channels")],
        person.get_absolute_url(): [("true", "People")],
        topic.get_absolute_url(): [("true", "Topics")],
        video.get_absolute_url(): [("true", "Channels")],
        reverse("summaries:search") + "?q=x": [],
    }
    for url, expected in pages.items():
        assert nav_current(client.get(url).content.decode()) == expected, url


def test_the_two_search_landmarks_have_names_of_their_own(client):
    content = client.get(reverse("summaries:search"), {"q": "agents"}).content.decode()
    names = re.findall(r'role="search" aria-label="([^"]+)"', content)
    assert len(names) == 2
    assert len(set(names)) == 2


def breadcrumb_html(*crumbs: tuple[str, str]) -> str:
    current = ' aria-current="page"'
    items = "".join(
        f'<li><a href="{url}"{current if n == len(crumbs) - 1 else ""}>{label}</a></li>'
        for n, (label, url) in enumerate(crumbs)
    )
    return f'<nav class="breadcrumbs" aria-label="Breadcrumb"><ol>{items}</ol></nav>'


def test_breadcrumbs_on_summary_channel_person_topic_and_index_pages(client):
    channel = ChannelFactory(name="Matthew Berman", slug="matthew-berman")
    person, topic = PersonFactory(name="Sam Altman"), TopicFactory(name="Agents")
    video = live_video(channel=channel, published_on=day(10, 1), person=person, topic=topic)
    home, channels = ("Home", "/"), ("Channels", "/channels/")
    pages = {
        video.get_absolute_url(): [
            home,
            channels,
            ("Matthew Berman", "/channels/matthew-berman/"),
            (video.title, video.get_absolute_url()),
        ],
        channel.get_absolute_url(): [
            home,
            channels,
            ("Matthew Berman", channel.get_absolute_url()),
        ],
        person.get_absolute_url(): [
            home,
            ("People", "/people/"),
            ("Sam Altman", person.get_absolute_url()),
        ],
        topic.get_absolute_url(): [
            home,
            ("Topics", "/topics/"),
            ("Agents", topic.get_absolute_url()),
        ],
        "/channels/": [home, channels],
    }
    for url, crumbs in pages.items():
        content = client.get(url).content.decode()
        assertInHTML(breadcrumb_html(*crumbs), content)
        assert content.count('aria-label="Breadcrumb"') == 1


def test_cards_link_the_channel_and_the_people(client):
    channel = ChannelFactory(name="Matthew Berman")
    person = PersonFactory(name="Sam Altman")
    live_video(
        channel=channel,
        published_on=day(10, 1),
        person=person,
        organisation=OrganisationFactory(name="OpenAI"),
    )
    content = client.get(reverse("summaries:home")).content.decode()
    assertInHTML(
        f'<a class="channel" href="{channel.get_absolute_url()}">Matthew Berman</a>', content
    )
    assert f'<a href="{person.get_absolute_url()}">Sam Altman</a> · OpenAI' in content


@pytest.mark.parametrize("page", ["home", "topic"])
def test_card_headings_follow_the_page_heading(client, page):
    topic = TopicFactory()
    live_video(channel=ChannelFactory(), published_on=day(10, 1), topic=topic)
    url = reverse("summaries:home") if page == "home" else topic.get_absolute_url()
    levels = [int(n) for n in re.findall(r"<h(\d)[ >]", client.get(url).content.decode())]
    assert levels[0] == 1
    assert all(later <= earlier + 1 for earlier, later in zip(levels, levels[1:], strict=False))


def test_summary_page_names_the_duration_without_aria_label_on_a_span(client):
    video = live_video(channel=ChannelFactory(), published_on=day(10, 1))
    content = client.get(video.get_absolute_url()).content.decode()
    assert not re.search(r"<span[^>]*aria-label", content)
    assert '<span class="visually-hidden">Duration </span>10:00</span>' in content


# --- The person page's affiliations ---------------------------------------------------------


def test_affiliations_per_appearance_over_time(client):
    person = PersonFactory(name="Ilya")
    openai, anthropic = OrganisationFactory(name="OpenAI"), OrganisationFactory(name="Anthropic")
    channel = ChannelFactory()
    for published_on, organisation in [
        (day(3, 1, 2023), openai),
        (day(6, 1, 2024), openai),
        (day(1, 1, 2025), None),
        (day(2, 1, 2025), anthropic),
        (day(4, 1, 2026), openai),
    ]:
        live_video(
            channel=channel, published_on=published_on, person=person, organisation=organisation
        )
    # A draft for another organisation, in between, says nothing.
    draft = SummaryFactory(video__channel=channel, video__published_on=day(1, 1, 2024))
    AppearanceFactory(video=draft.video, person=person, organisation=OrganisationFactory())

    assert [(a.organisation, a.years) for a in affiliations(person)] == [
        ("OpenAI", "2023–2024"),
        ("Anthropic", "2025"),
        ("OpenAI", "2026"),
    ]
    content = client.get(person.get_absolute_url()).content.decode()
    assert (
        '<p class="affiliations">Appeared for '
        "OpenAI (2023–2024), Anthropic (2025), OpenAI (2026)</p>" in content
    )


def test_a_person_with_no_organisation_shows_no_affiliations(client):
    person = PersonFactory()
    live_video(channel=ChannelFactory(), published_on=day(10, 1), person=person)
    assert affiliations(person) == []
    assert 'class="affiliations"' not in client.get(person.get_absolute_url()).content.decode()


# --- "Related" and "More from this channel" -------------------------------------------------


@pytest.fixture
def crowded_channel():
    """A video whose channel has eight other live videos on its topic (six are shown under
    "More from this channel"), and two on the topic elsewhere."""
    topic = TopicFactory()
    channel = ChannelFactory()
    main = live_video(channel=channel, published_on=day(10, 1), topic=topic)
    same = [live_video(channel=channel, published_on=day(10, n), topic=topic) for n in range(2, 10)]
    elsewhere = [
        live_video(channel=ChannelFactory(), published_on=day(9, n), topic=topic) for n in (1, 2)
    ]
    return main, same, elsewhere


def section_titles(content: str, heading: str) -> list[str]:
    start = content.index(f">{heading}</h2>")
    end = content.index("</section>", start)
    return re.findall(r'<h3><a href="[^"]+">([^<]+)</a></h3>', content[start:end])


@pytest.mark.parametrize("stored", [False, True], ids=["computed", "stored"])
def test_related_never_repeats_more_from_this_channel(client, crowded_channel, stored):
    main, same, elsewhere = crowded_channel
    if stored:
        refresh_related(video=main)
        cache.clear()
    content = client.get(main.get_absolute_url()).content.decode()
    more = section_titles(content, "More from this channel")
    related = section_titles(content, "Related")
    assert more == [video.title for video in sorted(same, key=lambda v: v.published_on)[::-1][:6]]
    assert not set(more) & set(related)
    # The two older videos of the channel and the two from elsewhere fill "Related".
    assert set(related) == {v.title for v in [*same[:2], *elsewhere]}
