"""Thumbnails: fetched through the source checker's fetcher from a real
loopback server, re-encoded as WebP with Pillow, stored through the storage API and shown
on cards and summary pages (or a placeholder), as og:image and JSON-LD thumbnailUrl.

The test server listens on 127.0.0.2 (allowed through FETCH_ALLOWED_NETWORKS); 127.0.0.1
plays the internal address that must never be reached. Files go to a temporary folder.
"""

import io
import json
import os
import re
import resource
import subprocess
import sys
from html.parser import HTMLParser

import pytest
from django.core.files.storage import storages
from django.core.management import call_command
from django.utils import timezone
from PIL import Image, ImageFile

from summaries import linkcheck, tasks, thumbnails
from summaries.editing import save
from summaries.models import Video
from summaries.pagecache.generation import current_generation
from summaries.thumbnails import images, store
from tests import image_bombs
from tests.factories import EditorFactory, SummaryFactory, VideoFactory
from tests.test_checking import internal, site, start_server, url  # noqa: F401 - fixtures
from tests.test_linkcheck_fetch import page, send

pytestmark = pytest.mark.django_db

FAST = {"retries": 0, "backoff": 0.01, "max_backoff": 0.02}


@pytest.fixture(autouse=True)
def thumbnail_settings(settings, tmp_path):
    settings.FETCH_ALLOWED_NETWORKS = ["127.0.0.2/31"]
    settings.FETCH_DEADLINE = 3.0
    settings.MEDIA_URL = "/media/"
    settings.STORAGES = {
        **settings.STORAGES,
        "thumbnails": {
            "BACKEND": "django.core.files.storage.FileSystemStorage",
            "OPTIONS": {"location": str(tmp_path / "media"), "base_url": "/media/"},
        },
    }
    return settings


def picture(size=(1280, 720), fmt="JPEG", color=(200, 40, 40)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format=fmt)
    return buffer.getvalue()


def image_route(data: bytes, content_type: str = "image/jpeg"):
    return page(200, data, content_type)


def video_with_thumbnail(site, path="/thumb.jpg", data=None, content_type="image/jpeg", **kw):  # noqa: F811
    site.routes[path] = image_route(data or picture(), content_type)
    return VideoFactory(thumbnail_url=url(site, path), **kw)


class _Elements(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, {name: value or "" for name, value in attrs}))


def elements(html: str, tag: str, cls: str = "") -> list[dict]:
    """The attributes of each `tag` element (with the class `cls`) in `html`."""
    parser = _Elements()
    parser.feed(html)
    return [
        attrs
        for name, attrs in parser.found
        if name == tag and (not cls or cls in attrs.get("class", "").split())
    ]


def cards(html: str) -> dict[str, str]:
    """Each video card's HTML by the title it links to."""
    found = {}
    for card in re.findall(r'<article class="video-card[^"]*">.*?</article>', html, re.S):
        title = re.search(r"<h[23]><a [^>]*>([^<]*)</a>", card).group(1)
        found[title] = card
    return found


def meta_tags(html: str) -> dict[str, str]:
    return {
        attrs.get("property") or attrs.get("name"): attrs["content"]
        for attrs in elements(html, "meta")
        if "content" in attrs
    }


def json_ld(html: str) -> dict:
    return json.loads(
        re.search(r'<script type="application/ld\+json">(.*?)</script>', html, re.S).group(1)
    )


def stored_bytes(name: str) -> bytes:
    with storages["thumbnails"].open(name) as file:
        return file.read()


# --- The service ------------------------------------------------------------------------


@pytest.mark.parametrize(("fmt", "content_type"), [("JPEG", "image/jpeg"), ("PNG", "image/png")])
def test_a_fetched_image_is_stored_as_two_webp_variants(site, fmt, content_type):  # noqa: F811
    original = picture((1280, 720), fmt)
    video = video_with_thumbnail(site, data=original, content_type=content_type)

    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.STORED

    video.refresh_from_db()
    assert [(w, h) for _, w, h in video.thumbnail_files] == [(320, 180), (640, 360)]
    for name, width, height in video.thumbnail_files:
        data = stored_bytes(name)
        assert data != original and data[:4] == b"RIFF" and data[8:12] == b"WEBP"
        with Image.open(io.BytesIO(data)) as image:
            assert image.format == "WEBP" and image.size == (width, height)
        assert re.fullmatch(r"thumbnails/[0-9a-f]{20}-\d+\.webp", name)
    assert video.thumbnail_source == url(site, "/thumb.jpg")
    assert video.thumbnail_error == "" and video.thumbnail_fetched_at is not None
    thumb = video.thumbnail
    assert (thumb.width, thumb.height) == (640, 360)
    assert thumb.src == "/media/" + video.thumbnail_files[1][0]
    assert thumb.srcset == ", ".join(f"/media/{n} {w}w" for n, w, _ in video.thumbnail_files)
    # The request asked for images, from the checker's fetcher.
    (_method, _path, headers) = site.requests[-1]
    assert headers["Accept"].startswith("image/")


def test_a_narrow_image_is_not_enlarged(site):  # noqa: F811
    video = video_with_thumbnail(site, data=picture((480, 360)))
    thumbnails.fetch_thumbnail(video=video, **FAST)
    assert [(w, h) for _, w, h in video.thumbnail_files] == [(320, 240), (480, 360)]


def test_a_private_address_is_refused_without_connecting(internal):  # noqa: F811
    internal.routes["/thumb.jpg"] = image_route(picture())
    video = VideoFactory(thumbnail_url=url(internal, "/thumb.jpg"))

    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.FAILED

    assert internal.connections == 0 and not internal.requests
    video.refresh_from_db()
    assert video.thumbnail_files == [] and video.thumbnail is None
    assert video.thumbnail_error.startswith("refused")
    assert video.thumbnail_source == url(internal, "/thumb.jpg")  # recorded: not retried


def test_a_body_over_the_cap_is_refused(site, monkeypatch):  # noqa: F811
    monkeypatch.setattr(thumbnails.store, "MAX_BYTES", 1000)
    video = video_with_thumbnail(site, data=picture((1280, 720)))
    assert len(picture((1280, 720))) > 1000

    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.FAILED

    video.refresh_from_db()
    assert video.thumbnail_files == [] and "larger than 1000" in video.thumbnail_error
    assert not storages["thumbnails"].exists("thumbnails")


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"<html><title>Not found</title></html>", "text/html"),
        (b"GIF89a but not really", "image/gif"),  # says it is an image, is not
        (b"%PDF-1.7 a document", "image/jpeg"),
    ],
)
def test_something_that_is_not_an_image_is_refused(site, body, content_type):  # noqa: F811
    video = video_with_thumbnail(site, data=body, content_type=content_type)

    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.FAILED

    video.refresh_from_db()
    assert video.thumbnail_files == [] and "not" in video.thumbnail_error


def test_an_svg_is_refused_even_as_an_image_type(site):  # noqa: F811
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>'
    video = video_with_thumbnail(site, data=svg, content_type="image/svg+xml")
    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.FAILED
    assert "not an image" in Video.objects.get(pk=video.pk).thumbnail_error


def test_a_decompression_bomb_is_refused_before_decoding(site):  # noqa: F811
    buffer = io.BytesIO()
    Image.new("1", (8000, 8000)).save(buffer, format="PNG")  # 64 megapixels in a few kB
    bomb = buffer.getvalue()
    assert len(bomb) < 100_000
    video = video_with_thumbnail(site, data=bomb, content_type="image/png")

    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.FAILED

    video.refresh_from_db()
    assert video.thumbnail_files == [] and "8000x8000" in video.thumbnail_error


BOMBS = image_bombs.corpus()


@pytest.mark.parametrize("name", BOMBS)
def test_a_bomb_is_refused_from_its_header_as_not_an_image(name, monkeypatch):
    decoded = []

    def decode(image):
        decoded.append(image.size)
        raise OSError("decoding is not allowed in this test")

    monkeypatch.setattr(ImageFile.ImageFile, "load", decode)

    with pytest.raises(images.NotAnImage):
        images.make_variants(BOMBS[name])
    assert decoded == []


def test_sides_past_what_webp_holds_are_refused():
    assert images.size_problem(images.WEBP_MAX_SIDE, 1) is None
    assert "WebP" in images.size_problem(images.WEBP_MAX_SIDE + 1, 1)
    assert "WebP" in images.size_problem(1, 25_000_000)


# What refusing the whole corpus may add to a worker's peak memory (it adds under 1 MB).
BOMB_PEAK_MIB = 16

DECODE_IN_A_WORKER = """
import json, os, sys
import django
django.setup()
from summaries.thumbnails import images

def peak_mib():
    status = open("/proc/self/status").read()
    return int(status.split("VmHWM:")[1].split()[0]) / 1024

before, outcomes = peak_mib(), {}
for path in sorted(os.listdir(sys.argv[1])):
    try:
        images.make_variants(open(os.path.join(sys.argv[1], path), "rb").read())
        outcomes[path] = "stored"
    except Exception as error:
        outcomes[path] = type(error).__name__
print(json.dumps({"growth_mib": peak_mib() - before, "outcomes": outcomes}))
"""


def limit_memory():
    # A worker that decodes a bomb would take gigabytes: fail it at 1 GB instead.
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


def test_refusing_every_bomb_keeps_a_workers_peak_memory_within_a_few_mb(tmp_path):
    for number, data in enumerate(BOMBS.values()):
        (tmp_path / f"bomb-{number}").write_bytes(data)

    child = subprocess.run(  # noqa: S603 - fixed arguments
        [sys.executable, "-c", DECODE_IN_A_WORKER, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=limit_memory,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "curation.settings"},
    )

    assert child.returncode == 0, child.stderr[-2000:]
    measured = json.loads(child.stdout.splitlines()[-1])
    assert set(measured["outcomes"].values()) == {"NotAnImage"}, measured
    assert measured["growth_mib"] < BOMB_PEAK_MIB, measured


def test_a_bomb_is_recorded_as_a_permanent_failure_and_never_queued_again(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    video = video_with_thumbnail(
        site, "/tall.png", BOMBS["png 1 x 25,000,000 grey"], content_type="image/png"
    )

    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.FAILED

    video.refresh_from_db()
    assert "WebP" in video.thumbnail_error and video.thumbnail_files == []
    assert video.thumbnail_retry_at is None and not thumbnails.needs_fetch(video)
    later = timezone.now() + store.CLAIM + store.RETRY_MAX
    with django_capture_on_commit_callbacks() as callbacks:
        thumbnails.sweep_thumbnails(limit=10, now=later)
    assert queued_thumbnails(callbacks) == []


def test_a_second_run_fetches_nothing_and_a_changed_url_is_fetched(site):  # noqa: F811
    video = video_with_thumbnail(site)
    thumbnails.fetch_thumbnail(video=video, **FAST)
    first = list(video.thumbnail_files)
    assert site.hits["/thumb.jpg"] == 1

    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.UNCHANGED
    assert tasks.fetch_thumbnail(video.pk) is None
    assert site.hits["/thumb.jpg"] == 1

    site.routes["/other.png"] = image_route(picture(fmt="PNG", color=(0, 90, 200)), "image/png")
    Video.objects.filter(pk=video.pk).update(thumbnail_url=url(site, "/other.png"))
    video.refresh_from_db()
    assert thumbnails.needs_fetch(video)
    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.STORED
    assert site.hits["/other.png"] == 1
    assert video.thumbnail_files != first
    assert video.thumbnail_source == url(site, "/other.png")


def test_a_youtube_video_without_a_thumbnail_url_wants_the_platform_one():
    video = VideoFactory(source_url="https://youtu.be/dQw4w9WgXcQ", thumbnail_url="")
    assert thumbnails.wanted_source(video) == "https://i.ytimg.com/vi/dQw4w9WgXcQ/hqdefault.jpg"
    other = VideoFactory(source_url="https://example.com/talk.mp4", thumbnail_url="")
    assert thumbnails.wanted_source(other) == ""
    assert thumbnails.fetch_thumbnail(video=other) == thumbnails.UNCHANGED


def test_a_404_is_recorded_and_not_retried(site):  # noqa: F811
    video = VideoFactory(thumbnail_url=url(site, "/missing.jpg"))
    assert thumbnails.fetch_thumbnail(video=video, **FAST) == thumbnails.FAILED
    video.refresh_from_db()
    assert video.thumbnail_error == "HTTP 404" and not thumbnails.needs_fetch(video)


def test_a_server_error_is_transient_keeps_what_is_stored_and_is_retried(site):  # noqa: F811
    video = video_with_thumbnail(site)
    thumbnails.fetch_thumbnail(video=video, **FAST)
    stored = list(video.thumbnail_files)
    site.routes["/down.jpg"] = lambda handler: send(handler, 503, b"busy")
    Video.objects.filter(pk=video.pk).update(thumbnail_url=url(site, "/down.jpg"))
    video.refresh_from_db()

    with pytest.raises(thumbnails.TransientFetchError):
        thumbnails.fetch_thumbnail(video=video, **FAST)

    video.refresh_from_db()
    assert video.thumbnail_files == stored and video.thumbnail_error == "HTTP 503"
    assert thumbnails.needs_fetch(video)  # a later save or the command tries again
    assert thumbnails.TransientFetchError in tasks.fetch_thumbnail.autoretry_for


def test_the_task_skips_a_deleted_video():
    assert tasks.fetch_thumbnail(987654) is None


def test_storing_a_thumbnail_makes_cached_pages_stale(site):  # noqa: F811
    video = video_with_thumbnail(site)
    before = current_generation()
    thumbnails.fetch_thumbnail(video=video, **FAST)
    assert current_generation() > before
    unchanged = current_generation()
    thumbnails.fetch_thumbnail(video=video, **FAST)
    thumbnails.fetch_thumbnail(video=video, force=True, **FAST)  # the same picture again
    assert current_generation() == unchanged


def test_the_same_picture_twice_is_stored_once(site):  # noqa: F811
    data = picture()
    one = video_with_thumbnail(site, "/a.jpg", data)
    two = video_with_thumbnail(site, "/b.jpg", data)
    thumbnails.fetch_thumbnail(video=one, **FAST)
    thumbnails.fetch_thumbnail(video=two, **FAST)
    assert one.thumbnail_files == two.thumbnail_files


def test_variant_sizes_keep_the_aspect_ratio():
    assert images.variant_sizes(1280, 720) == [(320, 180), (640, 360)]
    assert images.variant_sizes(200, 100) == [(200, 100)]
    assert images.variant_sizes(4000, 1000) == [(320, 80), (640, 160)]


def test_transparency_and_animation_survive_as_one_webp_frame():
    buffer = io.BytesIO()
    frames = [Image.new("RGBA", (400, 300), (255, 0, 0, 0)), Image.new("RGBA", (400, 300))]
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:])
    variants = images.make_variants(buffer.getvalue())
    assert [(v.width, v.height) for v in variants] == [(320, 240), (400, 300)]
    with Image.open(io.BytesIO(variants[0].data)) as image:
        assert image.format == "WEBP" and getattr(image, "n_frames", 1) == 1


# --- Queueing ---------------------------------------------------------------------------


def queued_thumbnails(callbacks) -> list[tuple]:
    return [
        callback.args
        for callback in callbacks
        if getattr(getattr(callback, "task", None), "name", "") == tasks.fetch_thumbnail.name
    ]


def test_a_save_through_the_write_path_queues_the_fetch_on_commit(
    site,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    site.routes["/thumb.jpg"] = image_route(picture())
    summary = SummaryFactory()
    video = summary.video
    editor = EditorFactory()
    with django_capture_on_commit_callbacks() as callbacks:
        save.save_summary(summary=summary, parts={}, user=editor, video=video)
    assert queued_thumbnails(callbacks) == [(video.pk,)]  # new: the platform's thumbnail

    video.thumbnail_url = url(site, "/thumb.jpg")
    with django_capture_on_commit_callbacks() as callbacks:
        save.save_summary(summary=summary, parts={}, user=editor, video=video)
    assert queued_thumbnails(callbacks) == [(video.pk,)]

    tasks.fetch_thumbnail(video.pk)  # what the worker runs
    video.refresh_from_db()
    assert video.thumbnail is not None

    with django_capture_on_commit_callbacks() as callbacks:
        save.save_summary(summary=summary, parts={}, user=editor, video=video)
    assert queued_thumbnails(callbacks) == []  # stored, unchanged: nothing to fetch


def test_the_admin_video_form_queues_the_fetch(admin_client, django_capture_on_commit_callbacks):
    video = VideoFactory(thumbnail_url="")
    Video.objects.filter(pk=video.pk).update(thumbnail_source=thumbnails.wanted_source(video))
    response = admin_client.get(f"/admin/summaries/video/{video.pk}/change/")
    form = response.context["adminform"].form
    data = {name: form.initial.get(name) or "" for name in form.fields if name not in ("topics",)}
    data.update(
        {
            "channel": video.channel_id,
            "published_on": "2026-10-01",
            "thumbnail_url": "https://example.com/new.jpg",
            "appearances-TOTAL_FORMS": "0",
            "appearances-INITIAL_FORMS": "0",
        }
    )
    with django_capture_on_commit_callbacks() as callbacks:
        response = admin_client.post(f"/admin/summaries/video/{video.pk}/change/", data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert queued_thumbnails(callbacks) == [(video.pk,)]


def test_the_command_fetches_missing_thumbnails_and_all_again_with_all(site):  # noqa: F811
    one = video_with_thumbnail(site, "/a.jpg")
    two = video_with_thumbnail(site, "/b.jpg")
    out = io.StringIO()
    call_command("fetch_thumbnails", stdout=out, stderr=io.StringIO())
    assert "stored 2" in out.getvalue()
    call_command("fetch_thumbnails", stdout=(out := io.StringIO()))
    assert "nothing to fetch" in out.getvalue()
    call_command("fetch_thumbnails", "--all", stdout=(out := io.StringIO()))
    assert "stored 2" in out.getvalue()  # fetched again
    assert site.hits["/a.jpg"] == site.hits["/b.jpg"] == 2
    assert Video.objects.get(pk=one.pk).thumbnail and Video.objects.get(pk=two.pk).thumbnail


# --- Pages ------------------------------------------------------------------------------


@pytest.fixture
def stored(site):  # noqa: F811
    """A live summary of a YouTube video with a stored thumbnail, and one without."""
    site.routes["/thumb.jpg"] = image_route(picture())
    with_thumb = SummaryFactory(
        live=True,
        video__source_url="https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        video__thumbnail_url=url(site, "/thumb.jpg"),
    )
    without = SummaryFactory(live=True, video__channel=with_thumb.video.channel)
    thumbnails.fetch_thumbnail(video=with_thumb.video, **FAST)
    return with_thumb, without


def test_cards_show_the_stored_image_with_srcset_and_size_or_a_placeholder(client, stored):
    with_thumb, without = stored
    found = cards(client.get("/").content.decode())
    card = found[with_thumb.video.title]
    [img] = elements(card, "img", "video-thumb")
    files = Video.objects.get(pk=with_thumb.video.pk).thumbnail_files
    assert img["src"] == "/media/" + files[-1][0]
    assert img["srcset"] == f"/media/{files[0][0]} 320w, /media/{files[1][0]} 640w"
    assert (img["width"], img["height"]) == ("640", "360")
    assert img["alt"] == "" and img["loading"] == "lazy" and img["decoding"] == "async"
    assert img["sizes"]
    other = found[without.video.title]
    assert elements(other, "img") == []
    assert elements(other, "span", "video-thumb--placeholder")
    # Durations read as durations.
    assert '<span class="visually-hidden">Duration </span>10:00</span>' in card


def test_the_summary_page_shows_the_stored_image_not_lazy(client, stored):
    with_thumb, without = stored
    html = client.get(with_thumb.get_absolute_url()).content.decode()
    stage = html[
        html.index('<div class="player-stage">') : html.index('<div class="player-poster">')
    ]
    [img] = elements(stage, "img", "video-thumb")
    assert "loading" not in img and img["fetchpriority"] == "high"
    assert img["width"] == "640" and img["height"] == "360" and "320w" in img["srcset"]
    html = client.get(without.get_absolute_url()).content.decode()
    stage = html[
        html.index('<div class="player-stage">') : html.index('<div class="player-poster">')
    ]
    assert elements(stage, "img") == []  # the stage's own neutral background


def test_og_image_and_json_ld_name_the_stored_absolute_url(client, stored):
    with_thumb, _ = stored
    html = client.get(with_thumb.get_absolute_url()).content.decode()
    name = Video.objects.get(pk=with_thumb.video.pk).thumbnail_files[-1][0]
    src = "http://testserver/media/" + name
    meta = meta_tags(html)
    assert meta["og:image"] == meta["twitter:image"] == src
    assert (meta["og:image:width"], meta["og:image:height"]) == ("640", "360")
    assert meta["twitter:card"] == "summary_large_image"
    assert json_ld(html)["thumbnailUrl"] == src


def test_without_a_stored_thumbnail_og_image_is_the_site_icon(client, stored):
    _, without = stored
    html = client.get(without.get_absolute_url()).content.decode()
    og = meta_tags(html)["og:image"]
    assert og.startswith("http://testserver/static/") and og.endswith("icon-512.png")
    assert "thumbnailUrl" not in json_ld(html)


def test_no_page_names_a_platform_image_host(client, stored):
    with_thumb, without = stored
    for path in (
        "/",
        with_thumb.get_absolute_url(),
        without.get_absolute_url(),
        with_thumb.video.channel.get_absolute_url(),
    ):
        html = client.get(path).content.decode()
        assert "ytimg.com" not in html and "127.0.0.2" not in html, path


def test_pages_change_when_a_thumbnail_lands(client, site):  # noqa: F811
    site.routes["/thumb.jpg"] = image_route(picture())
    summary = SummaryFactory(live=True, video__thumbnail_url=url(site, "/thumb.jpg"))
    first = client.get(summary.get_absolute_url()).content
    assert client.get(summary.get_absolute_url()).content == first  # cached
    assert b"video-thumb--placeholder" in client.get("/").content
    tasks.fetch_thumbnail(summary.video.pk)
    assert b"/media/thumbnails/" in client.get(summary.get_absolute_url()).content
    assert b"/media/thumbnails/" in client.get("/").content


def test_stored_files_are_served_with_a_long_lifetime(client, stored):
    with_thumb, _ = stored
    name = Video.objects.get(pk=with_thumb.video.pk).thumbnail_files[0][0]
    response = client.get("/media/" + name)
    assert response.status_code == 200
    assert response["Content-Type"] == "image/webp"
    assert response["Cache-Control"] == "public, max-age=31536000, immutable"
    assert b"".join(response.streaming_content) == stored_bytes(name)
    assert client.get("/media/thumbnails/nothing.webp").status_code == 404
    assert client.get("/media/thumbnails/..%2f..%2fsettings.py").status_code == 404


def test_images_may_come_only_from_this_site(client, stored):
    with_thumb, _ = stored
    csp = client.get(with_thumb.get_absolute_url())["Content-Security-Policy"]
    img_src = next(part for part in csp.split(";") if part.strip().startswith("img-src"))
    assert sorted(img_src.split()[1:]) == ["'self'", "data:"]


# --- The demo ---------------------------------------------------------------------------


def test_the_demo_has_drawn_thumbnails_and_leaves_the_worker_nothing_to_fetch():
    call_command("load_demo", stdout=(out := io.StringIO()))
    assert "Thumbnail 7" in out.getvalue()
    videos = list(Video.objects.all())
    assert len(videos) == 7
    for video in videos:
        assert video.thumbnail is not None and (video.thumbnail.width, video.thumbnail.height) == (
            640,
            360,
        )
        assert video.thumbnail_source.startswith("https://i.ytimg.com/vi/DEMO")
        assert not thumbnails.needs_fetch(video)
        assert tasks.fetch_thumbnail(video.pk) is None  # nothing fetched (no network here)

    # A demo loaded before thumbnails existed gets them from --if-missing.
    Video.objects.update(thumbnail_source="", thumbnail_files=[])
    call_command("load_demo", "--if-missing", stdout=(out := io.StringIO()))
    assert "thumbnails of 7 demo videos" in out.getvalue()
    assert all(video.thumbnail for video in Video.objects.all())


@pytest.mark.parametrize(
    ("backend", "base_url"),
    [
        ("django.core.files.storage.FileSystemStorage", "/media/"),
        ("django.core.files.storage.InMemoryStorage", "https://media.example.com/x/"),
    ],
)
def test_pages_use_the_storages_own_urls(settings, backend, base_url):
    settings.STORAGES = {
        **settings.STORAGES,
        "thumbnails": {"BACKEND": backend, "OPTIONS": {"base_url": base_url}},
    }
    names = ["thumbnails/0123456789abcdef0123-320.webp", "thumbnails/a b-640.webp"]
    video = Video(thumbnail_files=[[names[0], 320, 180], [names[1], 640, 360]])
    storage = storages["thumbnails"]
    assert video.thumbnail.srcset == f"{storage.url(names[0])} 320w, {storage.url(names[1])} 640w"
    assert video.thumbnail.src == storage.url(names[1])


def test_the_admin_shows_the_stored_thumbnail_or_why_there_is_none(admin_client, site):  # noqa: F811
    video = video_with_thumbnail(site)
    change = f"/admin/summaries/video/{video.pk}/change/"
    assert "None yet" in admin_client.get(change).content.decode()
    thumbnails.fetch_thumbnail(video=video, **FAST)
    html = admin_client.get(change).content.decode()
    assert f'<img src="{video.thumbnail.src}" width="160" alt="">' in html
    failing = VideoFactory(thumbnail_url=url(site, "/missing.jpg"))
    thumbnails.fetch_thumbnail(video=failing, **FAST)
    html = admin_client.get(f"/admin/summaries/video/{failing.pk}/change/").content.decode()
    assert "None stored: HTTP 404" in html


def test_a_video_without_a_player_shows_its_thumbnail_or_a_placeholder_above_the_text(
    client,
    site,  # noqa: F811
):
    site.routes["/thumb.png"] = image_route(picture(fmt="PNG"), "image/png")
    summary = SummaryFactory(
        live=True,
        video__source_url="https://example.com/talk.mp4",
        video__thumbnail_url=url(site, "/thumb.png"),
    )
    html = client.get(summary.get_absolute_url()).content.decode()
    assert 'id="player"' not in html
    hero = html[html.index('<div class="video-hero">') :].split("</div>")[0]
    assert elements(hero, "span", "video-thumb--placeholder") and not elements(hero, "img")

    tasks.fetch_thumbnail(summary.video.pk)
    html = client.get(summary.get_absolute_url()).content.decode()
    hero = html[html.index('<div class="video-hero">') :].split("</div>")[0]
    [img] = elements(hero, "img", "video-thumb")
    assert img["width"] == "640" and "loading" not in img

    plain = SummaryFactory(live=True, video__source_url="https://example.com/b.mp4")
    assert 'class="video-hero"' not in client.get(plain.get_absolute_url()).content.decode()


def test_no_address_any_more_clears_the_stored_thumbnail(site):  # noqa: F811
    video = video_with_thumbnail(site, source_url="https://example.com/talk.mp4")
    thumbnails.fetch_thumbnail(video=video, **FAST)
    Video.objects.filter(pk=video.pk).update(thumbnail_url="")
    video.refresh_from_db()
    before = current_generation()

    assert thumbnails.fetch_thumbnail(video=video) == thumbnails.CLEARED

    video.refresh_from_db()
    assert video.thumbnail is None and video.thumbnail_source == ""
    assert current_generation() > before
    assert thumbnails.fetch_thumbnail(video=video) == thumbnails.UNCHANGED


def test_a_fetch_overtaken_by_an_edit_writes_nothing(site):  # noqa: F811
    video = video_with_thumbnail(site)
    # An editor changes the address while the fetch of the old one is in flight.
    Video.objects.filter(pk=video.pk).update(thumbnail_url=url(site, "/newer.jpg"))

    thumbnails.fetch_thumbnail(video=video, **FAST)

    stored = Video.objects.get(pk=video.pk)
    assert stored.thumbnail_files == [] and stored.thumbnail_source == ""
    assert thumbnails.needs_fetch(stored)  # the edit's own fetch stores the newer one


def test_the_fetcher_keeps_a_body_only_when_asked_and_only_of_a_success(site):  # noqa: F811
    data = picture()
    site.routes["/a.jpg"] = image_route(data)
    options = {"allowed_networks": ["127.0.0.2/31"], "deadline": 3.0, **FAST}
    kept = linkcheck.fetch(url(site, "/a.jpg"), need_body=True, keep_body=True, **options)
    assert kept.body == data and "body" not in kept.as_dict()
    assert linkcheck.fetch(url(site, "/a.jpg"), need_body=True, **options).body is None
    missing = linkcheck.fetch(url(site, "/nope"), need_body=True, keep_body=True, **options)
    assert missing.status == 404 and missing.body is None
    capped = linkcheck.fetch(
        url(site, "/a.jpg"), need_body=True, keep_body=True, max_body=100, **options
    )
    assert capped.error_class == linkcheck.ErrorClass.BODY_TOO_LARGE and capped.body is None
