"""A webhook receiver on a loopback address, for tests: records every request it gets and
answers each one as the test says (a status, or holding the request open)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver(ThreadingHTTPServer):
    """Answers are taken from `answers` in order (the last one repeats): an int status, or
    "hang" to hold the request until `release` is set or the server stops."""

    daemon_threads = True

    def __init__(self, host: str = "127.0.0.2") -> None:
        super().__init__((host, 0), _Handler)
        self.answers: list[int | str] = [204]
        self.received: list[Received] = []
        self.release = threading.Event()
        self.lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/hooks"

    def start(self) -> Receiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()

    def next_answer(self, request: Received) -> int | str:
        with self.lock:
            self.received.append(request)
            index = min(len(self.received), len(self.answers)) - 1
            return self.answers[index]


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def log_message(self, format, *args):  # noqa: A002 - silence the access log
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        request = Received(
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=self.rfile.read(length),
        )
        answer = self.server.next_answer(request)
        if answer == "hang":
            self.server.release.wait(60)
            return
        self.send_response(int(answer))
        self.send_header("Content-Type", "text/plain")
        body = b"<script>alert(1)</script> thanks" if int(answer) < 300 else b"no"
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
