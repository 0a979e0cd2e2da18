"""In a real browser: cards and the summary page show the stored thumbnails, served by this
site, and the browser contacts no other host.

The thumbnails are fetched first, as the worker does, from a loopback image server on
127.0.0.2 (allowed through FETCH_ALLOWED_NETWORKS); the browser must never ask that server
(or any host but the site) for anything.
"""

import io
from urllib.parse import urlsplit

import pytest
from PIL import Image
from playwright.sync_api import expect

from summaries import thumbnails
from tests.factories import ChannelFactory, SummaryFactory
from tests.integration.browser_helpers import ARTIFACTS, DESKTOP, PHONE
from tests.test_checking import start_server, url
from tests.test_linkcheck_fetch import page as route

pytestmark = [
    pytest.mark.integration,
    pytest.mark.django_db(transaction=True, serialized_rollback=True),
]


def jpeg(color) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (1280, 720), color).save(buffer, format="JPEG")
    return buffer.getvalue()


@pytest.fixture
def image_server(settings, tmp_path):
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    settings.FETCH_DEADLINE = 3.0
    settings.STORAGES = {
        **settings.STORAGES,
        "thumbnails": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "media"), "base_url": settings.MEDIA_URL},
        },
    }
    server = start_server("127.0.0.2")
    yield server
    server.stopping.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def summaries(image_server, live_server):
    """Three live summaries of one channel: two with stored thumbnails, one without."""
    channel = ChannelFactory(name="Matthew Berman")
    stored = []
    for n, color in enumerate([(200, 40, 40), (30, 90, 200)]):
        image_server.routes[f"/thumb-{n}.jpg"] = route(200, jpeg(color), "image/jpeg")
        summary = SummaryFactory(
            live=True,
            video__channel=channel,
            video__title=f"Video with a thumbnail {n}",
            video__source_url=f"https://www.youtube.com/watch?v=dQw4w9WgXc{n}",
            video__thumbnail_url=url(image_server, f"/thumb-{n}.jpg"),
        )
        assert thumbnails.fetch_thumbnail(video=summary.video, retries=0) == thumbnails.STORED
        stored.append(summary)
    without = SummaryFactory(
        live=True,
        video__channel=channel,
        video__title="Video without one",
        video__source_url="https://example.com/talk.mp4",
    )
    return stored, without


@pytest.fixture
def browse(browser, live_server):
    """A page whose context records every request and aborts those to other hosts."""
    contexts = []
    local = urlsplit(live_server.url).hostname

    def open_(path):
        context = browser.new_context(viewport=DESKTOP)
        contexts.append(context)
        requests = []

        def handle(request_route):
            requests.append(request_route.request.url)
            if urlsplit(request_route.request.url).hostname == local:
                request_route.continue_()
            else:
                request_route.abort()

        context.route("**/*", handle)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(live_server.url + path)
        page.wait_for_load_state("networkidle")
        return page, requests

    yield open_
    for context in contexts:
        context.close()


def loaded(image) -> bool:
    return image.evaluate("img => img.complete && img.naturalWidth > 0")


def test_pages_show_the_stored_thumbnails_and_ask_no_other_host(
    browse, summaries, image_server, live_server
):
    (first, second), without = summaries
    hits = sum(image_server.hits.values())
    local = urlsplit(live_server.url).hostname

    page, requests = browse(first.get_absolute_url())
    main = page.locator(".player-stage img.video-thumb")
    expect(main).to_be_visible()
    assert loaded(main)
    assert main.evaluate("img => img.currentSrc").startswith(live_server.url + "/media/thumbnails/")
    card = page.locator(".video-card", has_text=second.video.title).locator("img.video-thumb")
    card.scroll_into_view_if_needed()
    expect(card).to_be_visible()
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=card.element_handle())
    # The card without a thumbnail holds a block of the very same size: nothing shifts.
    placeholder = page.locator(".video-card", has_text=without.video.title).locator(
        ".video-thumb--placeholder"
    )
    # (to the layout's 1/64 px: grid columns share the width in fractions)
    assert placeholder.bounding_box()["width"] == pytest.approx(
        card.bounding_box()["width"], abs=0.1
    )
    assert placeholder.bounding_box()["height"] == pytest.approx(
        card.bounding_box()["height"], abs=0.1
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "thumbnails-summary-desktop.png")

    home, home_requests = browse("/")
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        home.set_viewport_size(viewport)
        home.wait_for_load_state("networkidle")
        home.screenshot(path=ARTIFACTS / f"thumbnails-home-{label}.png", full_page=True)
    images = home.locator(".video-card img.video-thumb")
    expect(images).to_have_count(2)
    for n in range(2):
        images.nth(n).scroll_into_view_if_needed()
        home.wait_for_function(
            "img => img.complete && img.naturalWidth > 0", arg=images.nth(n).element_handle()
        )

    everything = requests + home_requests
    assert any("/media/thumbnails/" in request for request in everything)
    assert [r for r in everything if urlsplit(r).hostname != local] == []
    assert sum(image_server.hits.values()) == hits  # the browser never asked the source
