"""Which URL WebFetch asks for, and which redirects it follows: pure decisions, no I/O.

Theory of operation. :func:`plan_url` turns the model's ``url`` into the URL
fetched, or a refusal the model can read: only ``http`` and ``https``, no
user name or password in it (a page needing credentials is not WebFetch's),
at most :data:`MAX_URL_CHARS` characters, and a host with a dot in it (an
intranet name is refused, as Claude Code refuses it) unless it is a loopback
address. ``http`` is upgraded to ``https``, as Claude Code does, except for a
loopback host (``localhost``, ``127.0.0.0/8``, ``::1``), which is fetched as
written: coterie deliberately differs from Claude Code there (which refuses
local hosts), so that a local server can be read (and tested against); the
permission gate asks for it like for any other host.

:func:`follow_redirect` decides one redirect: followed when it stays on the
same origin (scheme, host and port, a leading ``www.`` on either side
ignored), else reported to the model with the new URL, never followed: the
permission the call was given names a host, and another host has to be asked
for again by a new call.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urljoin, urlsplit, urlunsplit

import attrs

__all__ = [
    "MAX_URL_CHARS",
    "Follow",
    "Refused",
    "Report",
    "follow_redirect",
    "is_loopback",
    "plan_url",
]

#: The longest URL WebFetch takes (Claude Code's limit too).
MAX_URL_CHARS = 2000


@attrs.frozen
class Refused:
    """The URL cannot be fetched; ``reason`` is written for the model."""

    reason: str


@attrs.frozen
class Follow:
    """Fetch this URL next (the first, or a same-origin redirect's target)."""

    url: str


@attrs.frozen
class Report:
    """A redirect to another origin: tell the model, do not fetch it."""

    url: str


def is_loopback(host: str) -> bool:
    """Whether *host* (as ``urlsplit`` gives it: lowercase, no brackets) is this machine."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def plan_url(url: str) -> Follow | Refused:
    """The URL to fetch for the model's *url* (upgraded to https), or why not."""
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        return Refused(f"The URL is {len(url)} characters long; WebFetch takes at most"
                       f" {MAX_URL_CHARS}.")  # fmt: skip
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018  (a port that is not a number raises here)
    except ValueError as exc:
        return Refused(f"{url!r} is not a valid URL: {exc}.")
    if parts.scheme not in ("http", "https"):
        return Refused(
            f"{url!r} is not an http or https URL; WebFetch fetches web pages only"
            " (read local files with Read)."
        )
    if not host:
        return Refused(f"{url!r} names no host.")
    if parts.username is not None or parts.password is not None:
        return Refused(
            "The URL carries a user name or password; WebFetch does not fetch pages that need"
            " credentials."
        )
    loopback = is_loopback(host)
    if not loopback and "." not in host and ":" not in host:
        return Refused(
            f"{host!r} is not a public host name (it has no dot); WebFetch fetches public"
            " web pages."
        )
    scheme = parts.scheme if loopback else "https"
    return Follow(urlunsplit((scheme, parts.netloc, parts.path or "/", parts.query, "")))


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    host = (parts.hostname or "").removeprefix("www.")
    default = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, host, parts.port or default


def follow_redirect(current: str, location: str) -> Follow | Report | Refused:
    """What to do with a redirect from *current* to *location* (maybe relative)."""
    target = urljoin(current, location.strip())
    planned = plan_url(target)
    if isinstance(planned, Refused):
        return planned
    # plan_url would upgrade http to https: compare what the server named.
    if _origin(target) == _origin(current):
        return Follow(urlunsplit(urlsplit(target)._replace(fragment="")))
    return Report(target)
