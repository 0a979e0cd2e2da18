"""A cited site on an "internet" machine of test_machines.py: `python page_server.py ADDRESS PORT`.

Answers GET and HEAD of any path with a small page after DELAY seconds, counting each
request per path and per client address, and the requests in flight (from the request
read to the answer sent): their peak, and each time the count went past LIMIT (with the
time). Everything counted is answered at GET /__stats as JSON, which itself is not
counted. No Django: it stands for a site on the internet.
"""

import json
import os
import sys
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STATS = "/__stats"
DELAY = float(os.environ.get("PAGE_DELAY", "0.01"))
LIMIT = int(os.environ.get("PAGE_LIMIT", "2"))


class Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.hits: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.over: list[tuple[float, int]] = []  # (time, in flight) past LIMIT

    def begin(self, path: str, client: str) -> None:
        with self.lock:
            self.hits[path][client] += 1
            self.requests += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            if self.in_flight > LIMIT:
                self.over.append((time.time(), self.in_flight))

    def end(self) -> None:
        with self.lock:
            self.in_flight -= 1

    def as_json(self) -> bytes:
        with self.lock:
            return json.dumps(
                {
                    "hits": self.hits,
                    "requests": self.requests,
                    "peak": self.peak,
                    "over": self.over,
                    "time": time.time(),
                }
            ).encode()


COUNTS = Counts()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def _answer(self, with_body: bool) -> None:
        if self.path == STATS:
            self._send(200, "application/json", COUNTS.as_json(), with_body)
            return
        COUNTS.begin(self.path, self.client_address[0])
        try:
            time.sleep(DELAY)
            body = f"<title>Page {self.path}</title><p>Cited page {self.path}.</p>".encode()
        finally:
            # Out of flight before the answer leaves: the client holds its host slot until
            # it has read the answer, so a new request can never overlap this one here.
            COUNTS.end()
        self._send(200, "text/html; charset=utf-8", body, with_body)

    def _send(self, status: int, content_type: str, body: bytes, with_body: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        if with_body:
            self.wfile.write(body)
        self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self._answer(True)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        self._answer(False)

    def log_message(self, format, *args) -> None:  # noqa: A002 - http.server's signature
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128


def main() -> None:
    address, port = sys.argv[1], int(sys.argv[2])
    server = Server((address, port), Handler)
    print(f"serving {address}:{port}", flush=True)
    server.serve_forever(0.05)


if __name__ == "__main__":
    main()
