"""Where a Redis/Valkey backend lives, and a client for it (docs/scale-out.md).

``--backend redis://HOST:PORT/DB`` (or ``COTERIE_BACKEND``) names a Redis or
Valkey server; :func:`parse_backend` checks the URL once, for every command
that takes it, and :func:`connect` makes a ``coredis`` client (AnyIO-based, so
it runs under Trio). Every key coterie writes starts with the
backend's ``prefix`` (``coterie:`` unless the URL says ``?prefix=...``), so
one server can hold the runs of several workspaces or test sessions.
"""

from __future__ import annotations

import contextlib
import re
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

import attrs

from coterie.backends.choice import BACKEND_ENV, BackendError

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import coredis

__all__ = [
    "BACKEND_ENV",
    "BackendError",
    "RedisTarget",
    "accepted",
    "connect",
    "parse_backend",
    "refused",
    "server_errors",
]

_PREFIX_RE = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


@attrs.frozen
class RedisTarget:
    """A Redis/Valkey server and the part of its keyspace coterie uses."""

    host: str
    port: int = 6379
    db: int = 0
    password: str | None = attrs.field(default=None, repr=False)
    username: str | None = None
    prefix: str = "coterie:"

    @property
    def url(self) -> str:
        """The URL again, without the password."""
        auth = f"{self.username}@" if self.username else ""
        query = "" if self.prefix == "coterie:" else f"?prefix={self.prefix}"
        return f"redis://{auth}{self.host}:{self.port}/{self.db}{query}"

    def key(self, *parts: str) -> str:
        """A key of coterie's keyspace: the prefix, then *parts* joined by ``:``."""
        return self.prefix + ":".join(parts)


def parse_backend(url: str) -> RedisTarget:
    """``redis://[user[:password]@]host[:port][/db][?prefix=P]``, checked; a
    :class:`BackendError` saying what is wrong otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "valkey"):
        raise BackendError(
            f"backend {url!r}: expected redis://HOST[:PORT][/DB] (files are the default backend)"
        )
    if not parts.hostname:
        raise BackendError(f"backend {url!r}: no host")
    try:
        port = parts.port or 6379
    except ValueError:
        raise BackendError(f"backend {url!r}: the port is not a number from 1 to 65535") from None
    path = parts.path.strip("/")
    if path and not path.isdigit():
        raise BackendError(f"backend {url!r}: the database must be a number, not {path!r}")
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"prefix"})
    if unknown:
        raise BackendError(f"backend {url!r}: unknown option {unknown[0]!r} (known: prefix)")
    prefix = query.get("prefix", ["coterie"])[-1]
    if not _PREFIX_RE.fullmatch(prefix):
        raise BackendError(
            f"backend {url!r}: prefix {prefix!r} must be 1-64 letters, digits or _.:-"
        )
    return RedisTarget(
        host=parts.hostname,
        port=port,
        db=int(path or 0),
        password=parts.password,
        username=parts.username,
        prefix=prefix if prefix.endswith(":") else prefix + ":",
    )


@contextlib.asynccontextmanager
async def connect(
    target: RedisTarget,
    *,
    connect_timeout: float | None = 5.0,
    max_connections: int | None = None,
) -> AsyncIterator[coredis.Redis[bytes]]:
    """A ``coredis`` client for *target*, open for the ``async with`` block.

    The server must answer a first ``PING`` within :data:`FIRST_ANSWER` seconds
    (:func:`answering`): one that takes the connection and says nothing (hung,
    or not Redis) is a client error naming it, for every command alike (a run's
    start, ``coterie runs``, a worker), never a wait forever.

    A command the server refuses for a while
    (:func:`coterie.backends.redis.refusals.refusal`: out of memory, loading its
    data, a busy script, a replica that cannot take writes) is sent again with a
    growing pause, for as long as it takes, and said once on stderr for the
    whole process: the run waits for the server instead of crashing its actors.
    *max_connections*: the pool's size (coredis's default, 64, when None).
    """
    import coredis  # imported here: a run on files never pays for it

    from coterie.backends.redis.refusals import WaitOutRefusals

    client: coredis.Redis[bytes] = coredis.Redis(
        host=target.host,
        port=target.port,
        db=target.db,
        username=target.username,
        password=target.password,
        connect_timeout=connect_timeout,
        max_connections=max_connections,
        retry_policy=WaitOutRefusals(),
    )
    stack = contextlib.AsyncExitStack()
    await stack.enter_async_context(client)
    try:
        await answering(client, target)
    except BaseException:
        # Out of coredis's block without the error, so that it is raised as it is
        # (through the block, the client's task group would wrap it in a group).
        await stack.aclose()
        raise
    async with stack:
        yield client


#: How long a connection's first command waits for the server to answer (s): a server
#: that takes the connection and says nothing (hung, or not Redis) must hold nothing.
FIRST_ANSWER = 10.0


async def answering(client: coredis.Redis[bytes], target: RedisTarget) -> None:
    """Return once the server answers a ``PING``; a client error naming the server if
    it says nothing for :data:`FIRST_ANSWER` seconds (the CLI says it in one line)."""
    import trio
    from coredis.exceptions import ConnectionError as ClientConnectionError

    with trio.move_on_after(FIRST_ANSWER) as waited:
        try:
            await client.ping()
            return
        except ClientConnectionError:
            if not waited.cancel_called:
                raise  # refused, reset: the client's own words say it
            # (coredis turns the cancelled handshake into an error of its own)
    raise ClientConnectionError(
        f"{target.url} took the connection but did not answer in {FIRST_ANSWER:.0f} s"
        " (a hung server, or not a Redis server)"
    )


def server_errors() -> tuple[type[Exception], ...]:
    """What a call to the server raises when it cannot be served (coredis's errors,
    the socket's, and a connection coredis closed under the call: a cancelled
    request takes its connection with it), for ``except server_errors():``. A
    function, so that a run on files never imports coredis (a third of a second
    at every start)."""
    import anyio
    from coredis.exceptions import RedisError

    return (RedisError, OSError, anyio.ClosedResourceError, anyio.BrokenResourceError)


def refused(exc: BaseException) -> bool:
    """Whether *exc*, a failure its caller retries itself (a pipeline), is the
    server refusing for a while (out of memory, loading...); said once per episode
    (:mod:`coterie.backends.redis.refusals`)."""
    from coterie.backends.redis.refusals import REFUSALS

    return REFUSALS.refused(exc)


def accepted() -> None:
    """A write retried by its caller went through: a refusal episode is over."""
    from coterie.backends.redis.refusals import REFUSALS

    REFUSALS.accepted()
