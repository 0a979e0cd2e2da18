"""Thumbnails for the demo's videos, drawn here instead of fetched.

The demo's YouTube ids are made up ("DEMO…"), so YouTube has no picture for them, and
loading the demo must never reach the internet. Each video gets a picture drawn with
Pillow (its title on a colour of its own), stored through the same service as a fetched
one (summaries.thumbnails.store_image) and recorded under the address the worker would
fetch, so the worker finds it stored and fetches nothing.
"""

import hashlib
import io
import textwrap

from PIL import Image, ImageDraw, ImageFont

from summaries import thumbnails
from summaries.models import Video

SIZE = (640, 360)  # the largest variant stored
# Dark, saturated backgrounds: white text on each has a contrast of 7:1 or more.
COLOURS = [(31, 58, 95), (74, 35, 90), (22, 78, 68), (110, 38, 38), (45, 45, 110), (88, 60, 20)]


def draw(video: Video) -> bytes:
    """A PNG with the video's title and channel on a colour chosen by its slug."""
    index = hashlib.sha256(video.slug.encode()).digest()[0] % len(COLOURS)
    image = Image.new("RGB", SIZE, COLOURS[index])
    pen = ImageDraw.Draw(image)
    title_font = ImageFont.load_default(size=36)
    small_font = ImageFont.load_default(size=20)
    y = 60
    for line in textwrap.wrap(video.title, width=28)[:4]:
        pen.text((45, y), line, fill=(255, 255, 255), font=title_font)
        y += 48
    pen.text((45, SIZE[1] - 65), video.channel.name, fill=(230, 230, 236), font=small_font)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def store_demo_thumbnails(videos) -> int:
    """Store a drawn thumbnail for each video without a thumbnail URL of its own that
    has none stored yet.

    Idempotent: a video whose thumbnail is stored (or was fetched by the worker) is left
    alone. Returns how many were stored.
    """
    stored = 0
    for video in videos:
        if video.thumbnail_url:  # an editor's own address: the worker fetches that one
            continue
        source = thumbnails.wanted_source(video)
        if source and thumbnails.needs_fetch(video):
            thumbnails.store_image(video=video, data=draw(video), source=source)
            stored += 1
    return stored
