"""A web archive on loopback, written from the Internet Archive's public API documentation,
and cited sites whose pages a test changes.

`ArchiveStub` answers what `summaries.linkcheck.archive` asks:
- `POST /save` (form field `url`): `{"url", "job_id"}`, or 429 with Retry-After, or 5xx;
- `GET /save/status/<job_id>`: `{"status": "pending"}`, `{"status": "success",
  "timestamp", "original_url"}` or `{"status": "error", "status_ext"}`;
- `GET /cdx/search/cdx?url=&to=&filter=statuscode:200&limit=-N&output=json`: a header row
  (`fl` columns) and one row per capture taken at `to` or earlier, oldest first;
- `GET /web/<timestamp>id_/<url>`: the capture as it was taken (status, body, Location).

How it answers a capture of a URL is set per URL in `behaviour` ("ok", "fail",
"rate_limited", "server_error", "error_page", "redirect", "pending_forever"); an "ok"
capture copies the page as its `SiteServer` serves it at that moment. Every request is
recorded with its time (`requests`), so a test can check the pace the archive saw.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

SOFT_404 = "<html><head><title>Page not found</title></head><body>Sorry, 404 not found.</body>"


def soft_404(also: str = "") -> str:
    """An error page answered with 200, which may quote other pages (a "popular" list)."""
    return (
        "<html><head><title>Page not found</title></head><body><p>Sorry, 404 not found.</p>"
        f"<p>Popular: {also}</p></body></html>"
    )


@dataclass
class Capture:
    timestamp: str
    status: int
    body: str
    location: str = ""
    listed: int = 0  # the status the index lists (a capture served otherwise: an archive fault)

    def __post_init__(self) -> None:
        self.listed = self.listed or self.status


@dataclass
class Job:
    url: str
    outcome: str
    polls: int = 0
    timestamp: str = ""


@dataclass
class Seen:
    method: str
    path: str
    at: float  # time.monotonic()
    headers: dict[str, str] = field(default_factory=dict)
    body: str = ""


class _Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - silence the access log
        pass

    def send(self, status: int, body: str = "", content_type: str = "text/html", **headers):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type + "; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def start(self):
        threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    @property
    def base(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"


# --- A cited site -------------------------------------------------------------------------


class SiteServer(_Server):
    """Pages by path: (status, HTML, Location); anything else is a 404."""

    def __init__(self, host: str = "127.0.0.3") -> None:
        super().__init__((host, 0), _SiteHandler)
        self.pages: dict[str, tuple[int, str, str]] = {}

    def url(self, path: str) -> str:
        return self.base + path

    def set(self, path: str, text: str = "", *, status: int = 200, location: str = "") -> str:
        body = f"<html><head><title>{path}</title></head><body><p>{text}</p></body></html>"
        self.pages[path] = (status, body if status == 200 else "", location)
        return self.url(path)

    def serve(self, path: str) -> tuple[int, str, str]:
        return self.pages.get(path, (404, "<title>Not found</title>", ""))


class _SiteHandler(_Quiet):
    server: SiteServer

    def do_GET(self):
        status, body, location = self.server.serve(self.path.split("?")[0])
        self.send(status, body, **({"Location": location} if location else {}))


# --- The archive --------------------------------------------------------------------------


class ArchiveStub(_Server):
    def __init__(self, host: str = "127.0.0.2", *, sites: list[SiteServer] = ()) -> None:
        super().__init__((host, 0), _ArchiveHandler)
        self.sites = {site.base: site for site in sites}
        self.behaviour: dict[str, str] = {}
        self.captures: dict[str, list[Capture]] = {}
        self.jobs: dict[str, Job] = {}
        self.requests: list[Seen] = []
        self.polls_before_done = 1
        self.retry_after = "1"
        self.lock = threading.Lock()
        self._last = datetime.now(UTC).replace(microsecond=0) - timedelta(days=1)

    # What tests set up and read.

    def add_capture(
        self,
        url: str,
        when: datetime,
        *,
        status: int = 200,
        body: str = "",
        location: str = "",
        listed: int = 0,
    ) -> str:
        timestamp = when.astimezone(UTC).strftime("%Y%m%d%H%M%S")
        capture = Capture(timestamp, status, body, location, listed)
        with self.lock:
            self.captures.setdefault(url, []).append(capture)
            self.captures[url].sort(key=lambda c: c.timestamp)
        return timestamp

    def save_times(self) -> list[float]:
        return [seen.at for seen in self.requests if seen.method == "POST"]

    def most_in_window(self, seconds: float) -> int:
        """The most capture requests seen within any `seconds`-long window."""
        times = sorted(self.save_times())
        most, start = 0, 0
        for end, moment in enumerate(times):
            while moment - times[start] >= seconds:
                start += 1
            most = max(most, end - start + 1)
        return most

    def page_now(self, url: str) -> tuple[int, str, str]:
        parts = urlsplit(url)
        site = self.sites.get(f"{parts.scheme}://{parts.netloc}")
        return site.serve(parts.path) if site else (404, "", "")

    def _timestamp(self) -> str:
        # Captures taken now, a second apart, so each has its own timestamp.
        with self.lock:
            an_hour_ago = datetime.now(UTC) - timedelta(hours=1)
            self._last = max(self._last + timedelta(seconds=1), an_hour_ago)
            return self._last.strftime("%Y%m%d%H%M%S")

    # Answers.

    def save(self, url: str) -> tuple[int, dict, dict]:
        outcome = self.behaviour.get(url, "ok")
        if outcome == "rate_limited":
            return (
                429,
                {"status": "error", "message": "Too many requests"},
                {"Retry-After": self.retry_after},
            )
        if outcome == "server_error":
            return 502, {}, {}
        job_id = "spn2-" + uuid.uuid4().hex
        with self.lock:
            self.jobs[job_id] = Job(url, outcome)
        return 200, {"url": url, "job_id": job_id}, {}

    def status(self, job_id: str) -> dict:
        job = self.jobs.get(job_id)
        if job is None:
            return {"status": "error", "status_ext": "error:not-found"}
        job.polls += 1
        if job.outcome == "pending_forever" or job.polls <= self.polls_before_done:
            return {"status": "pending", "job_id": job_id}
        if job.outcome == "fail":
            return {"status": "error", "status_ext": "error:service-unavailable"}
        if not job.timestamp:
            job.timestamp = self._timestamp()
            when = datetime.strptime(job.timestamp, "%Y%m%d%H%M%S").replace(tzinfo=UTC)
            status, body, location = self.page_now(job.url)
            if job.outcome == "error_page":  # quoting the page's own words
                status, body, location = 200, soft_404(body), ""
            elif job.outcome == "redirect":  # to a copy of another page that quotes it
                elsewhere = job.url + "-elsewhere"
                self.add_capture(elsewhere, when, body=body)
                status, location = 302, f"{self.base}/web/{job.timestamp}id_/{elsewhere}"
                body = ""
            self.add_capture(job.url, when, status=status, body=body, location=location)
        return {"status": "success", "timestamp": job.timestamp, "original_url": job.url}

    def cdx(self, query: dict[str, list[str]]) -> list[list[str]]:
        url = query.get("url", [""])[0]
        to = query.get("to", ["99999999999999"])[0].ljust(14, "9")
        wanted = query.get("filter", [""])[0]
        rows = [
            [c.timestamp, url, str(c.listed)]
            for c in self.captures.get(url, [])
            if c.timestamp <= to and (wanted != "statuscode:200" or c.listed == 200)
        ]
        limit = int(query.get("limit", ["0"])[0] or 0)
        if limit < 0:
            rows = rows[limit:]
        elif limit > 0:
            rows = rows[:limit]
        return [["timestamp", "original", "statuscode"], *rows]

    def copy(self, timestamp: str, url: str) -> Capture | None:
        return next((c for c in self.captures.get(url, []) if c.timestamp == timestamp), None)


class _ArchiveHandler(_Quiet):
    server: ArchiveStub

    def _seen(self, body: str = "") -> None:
        with self.server.lock:
            self.server.requests.append(
                Seen(self.command, self.path, time.monotonic(), dict(self.headers), body)
            )

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode()
        self._seen(body)
        if urlsplit(self.path).path != "/save":
            return self.send(404)
        url = parse_qs(body).get("url", [""])[0]
        status, data, headers = self.server.save(url)
        return self.send(status, json.dumps(data), "application/json", **headers)

    def do_GET(self):
        self._seen()
        parts = urlsplit(self.path)
        if parts.path.startswith("/save/status/"):
            data = self.server.status(unquote(parts.path.removeprefix("/save/status/")))
            return self.send(200, json.dumps(data), "application/json")
        if parts.path == "/cdx/search/cdx":
            return self.send(200, json.dumps(self.server.cdx(parse_qs(parts.query))), "text/plain")
        if parts.path.startswith("/web/"):
            return self._copy(self.path.removeprefix("/web/"))
        return self.send(404)

    def _copy(self, rest: str):
        stamp, _, url = rest.partition("/")
        capture = self.server.copy(stamp.removesuffix("id_"), url)
        if capture is None:
            return self.send(
                404,
                "<title>Wayback Machine</title>Hrm. The Wayback Machine has not archived that URL.",
            )
        extra = {"Location": capture.location} if capture.location else {}
        return self.send(capture.status, capture.body, **extra)
