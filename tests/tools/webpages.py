"""A small web site on 127.0.0.1 for the WebFetch tests, served from a thread.

Paths: ``/page`` (an HTML page with navigation around its content),
``/moved`` (301 to ``/page``), ``/away`` (302 to another host),
``/big?bytes=N`` (N bytes of plain text), ``/text``, ``/image`` (PNG bytes),
``/missing`` (404) and ``/hang`` (answers nothing until the site stops).
``hits`` counts the requests each path got.
"""

from __future__ import annotations

import http.server
import threading
from collections import Counter
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

if TYPE_CHECKING:
    from collections.abc import Iterator

PAGE = b"""<!doctype html><html><head><title>Test page</title>
<script>var tracking = 1;</script><style>p {color: red}</style></head>
<body><nav><a href="/">Home</a> <a href="/about">About</a></nav>
<aside><h3>Related</h3><a href="/sidebar">Sidebar link</a></aside>
<main><h1>The test page</h1><p>Hello from the test page: the answer is 42.</p>
<ul><li>first item</li><li>second item</li></ul></main>
<footer>Copyright notice</footer></body></html>"""

AWAY = "https://example.org/elsewhere"


class Site:
    """The site; :meth:`url` names a path on it."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.stopping = threading.Event()
        site = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path = urlsplit(self.path).path
                site.hits[path] += 1
                query = parse_qs(urlsplit(self.path).query)
                if path == "/moved":
                    self._redirect(301, "/page")
                elif path == "/away":
                    self._redirect(302, AWAY)
                elif path == "/page":
                    self._send(200, "text/html; charset=utf-8", PAGE)
                elif path == "/text":
                    self._send(200, "text/plain", b"plain words\n")
                elif path == "/big":
                    size = int(query["bytes"][0])
                    self._send(200, "text/plain", b"x" * (size - 4) + b"TAIL")
                elif path == "/image":
                    self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
                elif path == "/hang":
                    site.stopping.wait(30)
                else:
                    self._send(404, "text/plain", b"no such page")

            def _redirect(self, status: int, location: str) -> None:
                self.send_response(status)
                self.send_header("location", location)
                self.send_header("content-length", "0")
                self.end_headers()

            def _send(self, status: int, kind: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def __enter__(self) -> Site:
        threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.server.shutdown()
        self.server.server_close()


def serve() -> Iterator[Site]:
    """The body of a fixture: the site, running, stopped afterwards."""
    with Site() as site:
        yield site
