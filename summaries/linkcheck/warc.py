"""A fetched response as a WARC record (ISO 28500), and reading it back; no Django.

The record holds what the checker received: the status line, the response headers and the
body. The fetcher decodes content codings (gzip, br, deflate) as it reads, so the payload
stored is the decoded body; the headers that describe the encoding on the wire are kept
under an `X-Archive-Orig-` prefix (as web archives do) and Content-Length states the
payload's length, so that any WARC reader (warcio, pywb, the Wayback Machine's tools) reads
the record as a plain response. The payload digest is sha256 (`WARC-Payload-Digest:
sha256:<base32>`); the same digest, in hex, names the record in the evidence store.
"""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

# Headers that describe how the body travelled, not what it is: the payload is stored
# decoded, so these are kept under another name.
WIRE_HEADERS = frozenset({"content-encoding", "transfer-encoding", "content-length"})
ORIGINAL_PREFIX = "X-Archive-Orig-"


class UnreadableRecord(Exception):
    """A stored record that is not a readable WARC response, or whose digest fails."""


@dataclass(frozen=True)
class StoredResponse:
    url: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes
    captured_at: str  # WARC-Date, ISO 8601


def payload_digest(body: bytes) -> str:
    """The sha256 of a payload, in hex: what a record is stored and deduplicated under."""
    return hashlib.sha256(body).hexdigest()


def _warc_digest(hex_digest: str) -> str:
    return "sha256:" + base64.b32encode(bytes.fromhex(hex_digest)).decode("ascii")


def _http_headers(status: int, headers: list[tuple[str, str]], length: int) -> StatusAndHeaders:
    kept: list[tuple[str, str]] = []
    for name, value in headers:
        if name.lower() in WIRE_HEADERS:
            kept.append((ORIGINAL_PREFIX + name, value))
        else:
            kept.append((name, value))
    kept.append(("Content-Length", str(length)))
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Unknown"
    return StatusAndHeaders(f"{status} {reason}", kept, protocol="HTTP/1.1")


def build_record(
    *,
    url: str,
    status: int,
    headers: list[tuple[str, str]],
    body: bytes,
    captured_at: datetime,
    address: str = "",
) -> bytes:
    """A gzipped WARC file holding one `response` record of this exchange."""
    buffer = io.BytesIO()
    writer = WARCWriter(buffer, gzip=True, warc_version="1.1")
    warc_headers = {
        "WARC-Date": captured_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "WARC-Payload-Digest": _warc_digest(payload_digest(body)),
    }
    if address:
        warc_headers["WARC-IP-Address"] = address
    record = writer.create_warc_record(
        url,
        "response",
        payload=io.BytesIO(body),
        length=None,
        warc_headers_dict=warc_headers,
        http_headers=_http_headers(status, headers, len(body)),
    )
    writer.write_record(record)
    return buffer.getvalue()


def read_record(data: bytes) -> StoredResponse:
    """The response stored in a WARC file, its block and payload digests verified.

    Raises UnreadableRecord for a file that is not a WARC response (truncated, corrupted,
    not gzip) or whose digests do not match its content.
    """
    try:
        for record in ArchiveIterator(io.BytesIO(data), check_digests="raise"):
            if record.rec_type != "response":
                continue
            body = record.content_stream().read()
            http = record.http_headers
            status = int(http.get_statuscode()) if http is not None else 0
            headers = list(http.headers) if http is not None else []
            return StoredResponse(
                url=record.rec_headers.get_header("WARC-Target-URI") or "",
                status=status,
                headers=headers,
                body=body,
                captured_at=record.rec_headers.get_header("WARC-Date") or "",
            )
    except (ArchiveLoadFailed, OSError, EOFError, ValueError) as error:
        raise UnreadableRecord(f"{type(error).__name__}: {error}") from error
    raise UnreadableRecord("no response record")


def verify_record(data: bytes, expected_digest: str) -> StoredResponse:
    """The stored response, if its payload's sha256 is `expected_digest` (hex); else
    UnreadableRecord."""
    response = read_record(data)
    actual = payload_digest(response.body)
    if actual != expected_digest:
        raise UnreadableRecord(f"payload digest {actual} is not {expected_digest}")
    return response


def response_content_type(response: StoredResponse) -> str | None:
    for name, value in response.headers:
        if name.lower() == "content-type":
            return value
    return None
