"""Cards written in Python (summaries/reader/card_html.py): every value escaped, the same
markup on every list, the search result's snippet in place of the blurb."""

import datetime

from django.utils.html import format_html

from summaries.models.catalogue import StoredThumbnail
from summaries.reader.card_html import card_html, cards_html

HOSTILE = '<script>alert("x")</script>&'


def a_card(**changes):
    card = {
        "pk": 1,
        "title": "Agents & tools",
        "slug": "agents",
        "get_absolute_url": "/videos/agents/",
        "duration_seconds": 2061,
        "language": "en",
        "published_on": datetime.date(2026, 3, 4),
        "blurb": "Why agents need tools.",
        "thumbnail": None,
        "channel": {"name": "Lab", "slug": "lab", "get_absolute_url": "/channels/lab/"},
        "appearances": {"all": []},
    }
    card.update(changes)
    return card


def person(name, organisation=None):
    return {
        "person": {"name": name, "get_absolute_url": f"/people/{name.lower()}/"},
        "organisation": {"name": organisation} if organisation else None,
    }


def test_a_card_shows_what_readers_scan_a_list_for():
    html = card_html(a_card())

    assert '<a href="/videos/agents/">Agents &amp; tools</a></h3>' in html
    assert '<a class="channel" href="/channels/lab/">Lab</a>' in html
    assert '<time datetime="2026-03-04">Mar 4, 2026</time>' in html
    assert "Duration </span>34:21</span>" in html
    assert '<abbr class="language" title="English">EN</abbr>' in html
    assert '<p class="blurb">Why agents need tools.</p>' in html
    assert 'class="video-thumb video-thumb--placeholder"' in html
    assert 'class="people"' not in html


def test_every_value_from_the_database_is_escaped():
    hostile_person = person(HOSTILE, organisation=HOSTILE)
    card = a_card(
        title=HOSTILE,
        blurb=HOSTILE,
        language='x"><b>',
        channel={"name": HOSTILE, "slug": "c", "get_absolute_url": '/c/"onmouseover="x'},
        appearances={"all": [hostile_person]},
    )

    html = card_html(card)

    assert "<script>" not in html and "<b>" not in html
    assert '"onmouseover' not in html
    # Title, blurb, channel, the person (name and link) and the organisation.
    assert html.count("&lt;script&gt;") == 6


def test_people_with_their_organisations_are_listed_in_order():
    card = a_card(appearances={"all": [person("Ada", "Lab"), person("Bo")]})

    html = card_html(card)

    people = '<a href="/people/ada/">Ada</a> · Lab; <a href="/people/bo/">Bo</a>'
    assert f'<p class="people">{people}</p>' in html


def test_a_stored_thumbnail_reserves_its_size_and_loads_lazily():
    thumb = StoredThumbnail(
        src="/t/b.webp", srcset="/t/a.webp 320w, /t/b.webp 640w", width=640, height=360
    )

    html = card_html(a_card(thumbnail=thumb))

    assert 'src="/t/b.webp" srcset="/t/a.webp 320w, /t/b.webp 640w"' in html
    assert 'width="640" height="360"' in html and 'loading="lazy"' in html
    assert "placeholder" not in html


def test_lists_choose_the_heading_level_and_search_results_show_their_snippet():
    assert "<h2><a" in cards_html([a_card(), a_card()], heading_level=2)
    assert cards_html([a_card(), a_card()], heading_level=2).count("<article") == 2

    snippet = format_html('<p class="snippet">{}</p>', "found <mark>")
    html = card_html(a_card(), css_class="video-card search-result", tail=snippet)

    assert '<article class="video-card search-result">' in html
    assert '<p class="snippet">found &lt;mark&gt;</p>' in html
    assert "blurb" not in html


def test_a_card_without_blurb_has_no_empty_paragraph():
    assert '<p class="blurb">' not in card_html(a_card(blurb=""))


def test_the_featured_card_loads_its_larger_picture_first_under_an_h2():
    thumb = StoredThumbnail(
        src="/t/b.webp", srcset="/t/a.webp 320w, /t/b.webp 640w", width=640, height=360
    )

    html = card_html(
        a_card(thumbnail=thumb), heading_level=2, css_class="video-card featured", featured=True
    )

    assert 'fetchpriority="high"' in html and 'loading="lazy"' not in html
    assert 'sizes="(max-width: 48rem) calc(100vw - 2rem), 44rem"' in html
    assert '<h2><a href="/videos/agents/">' in html


def test_a_related_card_says_why_inside_it_and_the_length_is_on_the_picture():
    html = card_html(a_card(), reasons=["also features Ada", "same topic: Agents"])

    reason = html[html.index('<p class="card-reason">') : html.index("<h3>")]
    assert "Also features Ada · Same topic: Agents" in reason
    media = html[html.index('<div class="card-media">') : html.index('<div class="card-text">')]
    assert "Duration </span>34:21</span>" in media
    assert '<p class="video-meta"><a class="channel" href="/channels/lab/">Lab</a> · <time' in html
