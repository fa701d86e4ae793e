"""The I/O half of WebFetch: GET a URL with httpx2 under Trio, capped in size and time.

:func:`fetch` follows the redirects :func:`~coterie.tools.web.urls.follow_redirect`
says to follow (at most :data:`MAX_REDIRECTS`) and stops at the first it says
to report. The body is read as a stream and cut at ``max_bytes``; the whole
fetch, redirects included, is bounded by ``timeout`` seconds. It runs on
Trio (httpx2 goes through AnyIO), so cancelling the call's scope cancels the
request at once. httpx2 (the anthropic SDK's HTTP library) is imported on the
first fetch only.

:class:`PageCache` keeps fetched pages a short while (15 minutes, as Claude
Code does), by URL, so that asking a second question about a page does not
fetch it again.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import attrs
import trio

from coterie.tools.web.urls import Follow, Refused, Report, follow_redirect

if TYPE_CHECKING:
    from collections.abc import Callable

    import httpx2

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

_HEADERS = {
    "user-agent": "coterie-webfetch",
    "accept": "text/markdown, text/html;q=0.9, text/plain;q=0.8, */*;q=0.5",
}


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
    import httpx2  # the anthropic SDK's HTTP library: loaded on the first fetch only

    try:
        with trio.fail_after(time_limit):
            async with httpx2.AsyncClient(
                follow_redirects=False, timeout=time_limit, headers=_HEADERS
            ) as client:
                return await _follow(client, url, max_bytes)
    except trio.TooSlowError:
        return Failed(f"Fetching {url} took longer than {time_limit:g} seconds; it was given up.")
    except (httpx2.HTTPError, httpx2.InvalidURL) as exc:
        return Failed(f"Fetching {url} failed: {type(exc).__name__}: {exc or 'no detail'}.")


async def _follow(
    client: httpx2.AsyncClient, url: str, max_bytes: int
) -> Fetched | Redirected | Failed:
    import httpx2

    for _ in range(MAX_REDIRECTS + 1):
        # The gate judged the host urlsplit reads; fetch nothing httpx2 reads otherwise.
        if httpx2.URL(url).host != (urlsplit(url).hostname or ""):
            return Failed(f"{url} names its host ambiguously; WebFetch does not fetch it.")
        async with client.stream("GET", url) as response:
            location = response.headers.get("location")
            if response.is_redirect and location:
                step = follow_redirect(url, location)
                if isinstance(step, Refused):
                    return Failed(f"{url} redirects to {location}, which WebFetch refuses: "
                                  f"{step.reason}")  # fmt: skip
                if isinstance(step, Report):
                    return Redirected(url, step.url, response.status_code)
                assert isinstance(step, Follow)
                url = step.url
                continue
            if response.status_code >= 400:
                return Failed(
                    f"{url} answered HTTP {response.status_code} {response.reason_phrase}."
                )
            body, cut = bytearray(), False
            async with contextlib.aclosing(response.aiter_bytes()) as chunks:
                async for chunk in chunks:
                    body += chunk
                    if len(body) > max_bytes:
                        del body[max_bytes:]
                        cut = True
                        break
            content_type = response.headers.get("content-type", "")
            return Fetched(str(response.url), response.status_code, content_type, bytes(body), cut)
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
