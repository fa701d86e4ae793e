"""The I/O half of WebFetch: GET a URL under Trio, capped in size and time.

:func:`fetch` follows the redirects :func:`~coterie.tools.web.urls.follow_redirect`
says to follow (at most :data:`MAX_REDIRECTS`) and stops at the first it says
to report. The body is read as a stream and cut at ``max_bytes``; the whole
fetch, redirects included, is bounded by ``timeout`` seconds. It speaks HTTP
through :mod:`coterie.httpconn` (h11 on Trio, TLS, the proxy variables), so
cancelling the call's scope cancels the request at once, and a body cut at the
cap closes its connection there and then.

:class:`PageCache` keeps fetched pages a short while (15 minutes, as Claude
Code does), by URL, so that asking a second question about a page does not
fetch it again.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.httpconn import Connections, TransportFailure
from coterie.tools.web.urls import Follow, Refused, Report, follow_redirect

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "CACHE_SECONDS",
    "MAX_BYTES",
    "MAX_REDIRECTS",
    "TIMEOUT",
    "Fetched",
    "Failed",
    "PageCache",
    "Redirected",
    "fetch",
]

#: The most bytes of a response body read (Claude Code's cap too); the rest is cut.
MAX_BYTES = 10 * 1024 * 1024
#: Seconds a whole fetch may take, redirects included.
TIMEOUT = 60.0
#: Same-origin redirects followed in one fetch.
MAX_REDIRECTS = 10
#: How long a fetched page is kept (Claude Code keeps them 15 minutes).
CACHE_SECONDS = 15 * 60
#: The most characters the cache holds in all.
CACHE_CHARS = 50_000_000

_HEADERS = [
    ("user-agent", "coterie-webfetch"),
    ("accept", "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5"),
    ("accept-encoding", "identity"),
]


@attrs.frozen
class Fetched:
    """A response body (cut at the cap if ``cut``), from ``url`` after any redirects."""

    url: str
    status: int
    content_type: str
    body: bytes
    cut: bool = False


@attrs.frozen
class Redirected:
    """The server redirected to another origin (``to``); nothing was fetched from it."""

    url: str
    to: str
    status: int


@attrs.frozen
class Failed:
    """The fetch failed; ``reason`` is written for the model."""

    reason: str


async def fetch(
    url: str, *, max_bytes: int = MAX_BYTES, time_limit: float = TIMEOUT
) -> Fetched | Redirected | Failed:
    """GET *url* (already planned by :func:`~coterie.tools.web.urls.plan_url`)."""
    connections = Connections()
    try:
        with trio.fail_after(time_limit):
            return await _follow(connections, url, max_bytes)
    except trio.TooSlowError:
        return Failed(f"Fetching {url} took longer than {time_limit:g} seconds; it was given up.")
    except (TransportFailure, ValueError) as exc:
        return Failed(f"Fetching {url} failed: {exc or type(exc).__name__}.")
    finally:
        with trio.CancelScope(shield=True):
            await connections.aclose()


async def _follow(
    connections: Connections, url: str, max_bytes: int
) -> Fetched | Redirected | Failed:
    for _ in range(MAX_REDIRECTS + 1):
        response = await connections.request("GET", url, _HEADERS, b"")
        try:
            location = response.headers.get("location")
            if 300 <= response.status < 400 and location:
                step = follow_redirect(url, location)
                if isinstance(step, Refused):
                    return Failed(f"{url} redirects to {location}, which WebFetch refuses: "
                                  f"{step.reason}")  # fmt: skip
                if isinstance(step, Report):
                    return Redirected(url, step.url, response.status)
                assert isinstance(step, Follow)
                url = step.url
                continue
            if response.status >= 400:
                return Failed(f"{url} answered HTTP {response.status}.")
            body, cut = bytearray(), False
            while (chunk := await response.receive()) is not None:
                body += chunk
                if len(body) > max_bytes:
                    del body[max_bytes:]
                    cut = True
                    break
            content_type = response.headers.get("content-type", "")
            return Fetched(url, response.status, content_type, bytes(body), cut)
        finally:
            await response.aclose()  # a body left unread closes its connection
    return Failed(f"{url} redirected more than {MAX_REDIRECTS} times; WebFetch gave up.")


@attrs.frozen
class _Entry:
    at: float
    page: Fetched | Redirected


def _now() -> float:
    return trio.current_time()


@attrs.define
class PageCache:
    """Fetched pages (and cross-origin redirects) by URL, each kept :data:`CACHE_SECONDS`."""

    ttl: float = CACHE_SECONDS
    max_chars: int = CACHE_CHARS
    clock: Callable[[], float] = _now
    _entries: OrderedDict[str, _Entry] = attrs.field(init=False, factory=OrderedDict)

    def get(self, url: str) -> Fetched | Redirected | None:
        """The page fetched from *url* less than :attr:`ttl` seconds ago, if any."""
        entry = self._entries.get(url)
        if entry is None:
            return None
        if self.clock() - entry.at >= self.ttl:
            del self._entries[url]
            return None
        return entry.page

    def put(self, url: str, page: Fetched | Redirected) -> None:
        """Keep *page* for *url*; the oldest pages go when the cache is over its size."""
        self._entries.pop(url, None)
        self._entries[url] = _Entry(self.clock(), page)
        while self._size() > self.max_chars and len(self._entries) > 1:
            self._entries.popitem(last=False)

    def _size(self) -> int:
        return sum(len(e.page.body) for e in self._entries.values() if isinstance(e.page, Fetched))
