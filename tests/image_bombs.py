"""Small image files that declare, or unpack to, far more than a thumbnail: a corpus of
decompression bombs for the thumbnail tests and bench/run_thumbnail_bombs.py.

Each file is a few bytes to a few hundred kB and well formed as far as its header goes
(PNG chunks with valid checksums, a real JPEG with its frame header patched, GIF and WebP
headers). No Django: the bench imports it on its own.
"""

from __future__ import annotations

import io
import struct
import zlib

from PIL import Image

# Bytes of zeros compressed per call: bombs are built without holding what they unpack to.
_PIECE = 1 << 20


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def _zeros_compressed(size: int) -> bytes:
    """`size` zero bytes, deflated at the highest level."""
    packer = zlib.compressobj(9)
    parts = [packer.compress(bytes(min(_PIECE, size - done))) for done in range(0, size, _PIECE)]
    return b"".join(parts) + packer.flush()


def png(width: int, height: int, *, color_type: int = 0, extra: bytes = b"") -> bytes:
    """A PNG of `width` x `height` zero pixels (8 bits a sample; color type 0 grey, 6 RGBA),
    every row present, with the chunks `extra` before its data."""
    samples = {0: 1, 2: 3, 4: 2, 6: 4}[color_type]
    header = struct.pack(">IIBBBBB", width, height, 8, color_type, 0, 0, 0)
    rows = _zeros_compressed(height * (1 + width * samples))  # a filter byte per row
    return b"".join(
        [
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            extra,
            _chunk(b"IDAT", rows),
            _chunk(b"IEND", b""),
        ]
    )


def png_with_text(size: int) -> bytes:
    """A 1 x 1 PNG with a compressed text chunk (zTXt) that unpacks to `size` bytes."""
    text = _chunk(b"zTXt", b"Comment\x00\x00" + _zeros_compressed(size))
    return png(1, 1, extra=text)


def jpeg(width: int, height: int) -> bytes:
    """A real 8 x 8 JPEG whose frame header (SOF0) says `width` x `height`."""
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buffer, format="JPEG")
    data = bytearray(buffer.getvalue())
    frame = data.index(b"\xff\xc0")
    data[frame + 5 : frame + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def gif(width: int, height: int) -> bytes:
    """A GIF whose screen and only image are `width` x `height`, with one byte of data."""
    return b"".join(
        [
            b"GIF89a",
            struct.pack("<HHBBB", width, height, 0x80, 0, 0),  # a 2-colour global palette
            b"\x00\x00\x00\xff\xff\xff",
            b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0),
            b"\x02\x02\x44\x01\x00",  # LZW minimum code size 2, one tiny block
            b"\x3b",
        ]
    )


def webp(width: int, height: int) -> bytes:
    """A lossless WebP (VP8L) whose header says `width` x `height` (each at most 16384),
    with a few bytes of image data."""
    bits = (width - 1) | (height - 1) << 14  # alpha hint and version 0
    payload = b"\x2f" + struct.pack("<I", bits) + bytes(16)
    chunk = b"VP8L" + struct.pack("<I", len(payload)) + payload
    return b"RIFF" + struct.pack("<I", 4 + len(chunk)) + b"WEBP" + chunk


def corpus() -> dict[str, bytes]:
    """Each bomb by name: what it declares, and why a worker must not decode it."""
    return {
        # The tall strip: 25 megapixels in a line each; WebP cannot encode it.
        "png 1 x 25,000,000 grey": png(1, 25_000_000),
        "png 25,000,000 x 1 grey": png(25_000_000, 1),
        # Just past what WebP can hold on one side.
        "png 16,384 x 1 grey": png(16_384, 1),
        # 25 megapixels of RGBA: 100 MB decoded, 100 MB more converted.
        "png 5,000 x 5,000 rgba": png(5_000, 5_000, color_type=6),
        "png 1 x 1 with a 100 MB text chunk": png_with_text(100_000_000),
        "jpeg 65,500 x 65,500": jpeg(65_500, 65_500),
        "gif 65,535 x 65,535": gif(65_535, 65_535),
        "webp 16,383 x 16,383": webp(16_383, 16_383),
    }
