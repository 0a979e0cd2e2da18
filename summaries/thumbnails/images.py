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
MAX_PIXELS = 25_000_000
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


def _open(data: bytes) -> Image.Image:
    """The image, opened (header read, no pixels yet) and checked; NotAnImage otherwise."""
    try:
        image = Image.open(io.BytesIO(data), formats=sorted(FORMATS))
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError) as error:
        raise NotAnImage(f"not a JPEG, PNG, WebP or GIF image ({error})") from None
    width, height = image.size
    if width < 1 or height < 1 or width * height > MAX_PIXELS:
        raise NotAnImage(f"{width}x{height} pixels is more than a thumbnail ({MAX_PIXELS} max)")
    return image


def variant_sizes(width: int, height: int) -> list[tuple[int, int]]:
    """(width, height) of each variant, smallest first, keeping the aspect ratio."""
    widths = sorted({min(target, width) for target in WIDTHS})
    return [(w, max(1, round(height * w / width))) for w in widths]


def make_variants(data: bytes) -> list[Variant]:
    """WebP variants of the image in `data`, smallest first. Raises NotAnImage.

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
        buffer = io.BytesIO()
        resized.save(buffer, format="WEBP", quality=QUALITY, method=4)
        variants.append(Variant(width=width, height=height, data=buffer.getvalue()))
    return variants
