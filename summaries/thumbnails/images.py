"""Fetched image bytes into WebP variants with Pillow. No Django, no network.

Nothing fetched is ever served as it came: the bytes are decoded (only JPEG, PNG, WebP and
GIF, whatever the response said), checked for size before any pixel is decoded, and
encoded again as WebP, so that metadata, trailing payloads and polyglot files stay behind.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass

from PIL import Image, ImageOps, UnidentifiedImageError

# Pillow's names of the formats accepted, and the media types a response may declare.
FORMATS = frozenset({"JPEG", "PNG", "WEBP", "GIF"})
MEDIA_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})
# A platform thumbnail is about 1280x720 (0.9 megapixels). Anything far larger is refused
# from its header alone, before decoding: a small file can declare a huge canvas
# (a decompression bomb), and decoding it would take gigabytes.
# WebP holds at most this many pixels on a side (libwebp's WEBP_MAX_DIMENSION).
WEBP_MAX_SIDE = 16_383
# Decoding and converting take a copy each of width x height x BYTES_PER_PIXEL (Pillow
# keeps RGB and RGBA, and no decoded mode takes more): a 12-megapixel photo fits, a
# worker's peak stays within about three times this.
BYTES_PER_PIXEL = 4
MAX_DECODED_BYTES = 64 * 1024 * 1024
WIDTHS = (320, 640)  # the variants' widths (narrower sources are not enlarged)
QUALITY = 80


class NotAnImage(ValueError):
    """The bytes are not an image we accept (wrong format, corrupt, too many pixels)."""


@dataclass(frozen=True)
class Variant:
    width: int
    height: int
    data: bytes  # WebP


def digest(data: bytes) -> str:
    """A short content hash for file names: the same picture gets the same names."""
    return hashlib.sha256(data).hexdigest()[:20]


def size_problem(width: int, height: int) -> str | None:
    """Why an image of width x height pixels is not decoded, or None when it may be."""
    if width < 1 or height < 1:
        return f"{width}x{height} pixels is no picture"
    if max(width, height) > WEBP_MAX_SIDE:
        return f"{width}x{height} pixels: WebP holds at most {WEBP_MAX_SIDE} on a side"
    decoded = width * height * BYTES_PER_PIXEL
    if decoded > MAX_DECODED_BYTES:
        return (
            f"{width}x{height} pixels is more than a thumbnail "
            f"({decoded >> 20} MB decoded, {MAX_DECODED_BYTES >> 20} MB at most)"
        )
    return None


def _open(data: bytes) -> Image.Image:
    """The image, opened (header read, no pixels yet) and checked; NotAnImage otherwise."""
    try:
        image = Image.open(io.BytesIO(data), formats=sorted(FORMATS))
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError) as error:
        # ValueError: Pillow's refusal of a text chunk that unpacks to too much, among others.
        raise NotAnImage(f"not a JPEG, PNG, WebP or GIF image ({error})") from None
    problem = size_problem(*image.size)
    if problem:
        raise NotAnImage(problem)
    return image


def _webp(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    try:
        image.save(buffer, format="WEBP", quality=QUALITY, method=4)
    except (OSError, ValueError) as error:
        # The same bytes would fail again: a refusal, not a failure worth retrying.
        raise NotAnImage(f"the image cannot be encoded as WebP ({error})") from None
    return buffer.getvalue()


def variant_sizes(width: int, height: int) -> list[tuple[int, int]]:
    """(width, height) of each variant, smallest first, keeping the aspect ratio."""
    widths = sorted({min(target, width) for target in WIDTHS})
    return [(w, max(1, round(height * w / width))) for w in widths]


def make_variants(data: bytes) -> list[Variant]:
    """WebP variants of the image in `data`, smallest first. Raises NotAnImage, from the
    header alone (size_problem) for images too large to decode.

    The first frame of an animation is used; EXIF orientation is applied (and every
    other piece of metadata dropped); transparency is kept.
    """
    with warnings.catch_warnings():
        # Pillow only warns between MAX_IMAGE_PIXELS and twice that: make it a refusal.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        image = _open(data)
        try:
            image.verify()  # checks the file's structure (e.g. PNG checksums) cheaply
            image = _open(data)  # verify() leaves the image unusable: open it again
            image.seek(0)
            image.load()
            image = ImageOps.exif_transpose(image)
        except NotAnImage:
            raise
        except Exception as error:  # noqa: BLE001 - any decoder failure means "not an image"
            raise NotAnImage(f"the image cannot be decoded ({error})") from None
    has_alpha = image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info
    image = image.convert("RGBA" if has_alpha else "RGB")
    variants = []
    for width, height in variant_sizes(*image.size):
        resized = (
            image
            if (width, height) == image.size
            else image.resize((width, height), Image.Resampling.LANCZOS)
        )
        variants.append(Variant(width=width, height=height, data=_webp(resized)))
    return variants
