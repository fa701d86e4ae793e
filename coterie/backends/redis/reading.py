"""A connection of its own for one task's blocking reads, made again when it is lost.

A blocking command (``XREAD``/``XREADGROUP`` with ``BLOCK``, ``BLPOP``) holds
a connection of its client's pool for as long as it blocks. coredis (6.9)
never gives that pool slot back when the command ends badly: cancelled, its
connection is dropped; its connection lost (the server restarted), the
connection is gone. Either way the pool is one connection smaller for good,
and a pool of one has none left: the next command waits forever.

So each task that blocks on the server (a post office's intake, a board's
follower) does it on a :class:`ReadConnection`, a client of one connection
that nothing else uses; after a connection error the task calls
:meth:`ReadConnection.renew`, which closes that client and makes a new one,
and a blocking read is cancelled only when its connection closes with it.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from coterie.backends.redis.client import connect

if TYPE_CHECKING:
    from types import TracebackType

    import coredis

    from coterie.backends.redis.client import RedisTarget


class ReadConnection:
    """One task's client of one connection (see the module docstring); use it
    as ``async with ReadConnection(target) as reading: reading.client...``."""

    def __init__(self, target: RedisTarget) -> None:
        self._target = target
        self._stack = contextlib.AsyncExitStack()
        self._client: coredis.Redis[bytes] | None = None

    @property
    def client(self) -> coredis.Redis[bytes]:
        """The client (of one connection) to block on."""
        if self._client is None:
            raise RuntimeError("the read connection is not open")
        return self._client

    async def __aenter__(self) -> ReadConnection:
        await self.renew()
        return self

    async def renew(self) -> None:
        """Close the client (its connection lost or cut) and open a new one; the
        server's errors, if it cannot be reached, are the caller's to retry."""
        await self._close()
        # Connected once entered (its first PING answered), not in a later read.
        client = connect(self._target, max_connections=1)
        self._client = await self._stack.enter_async_context(client)

    async def _close(self) -> None:
        self._client = None
        stack, self._stack = self._stack, contextlib.AsyncExitStack()
        with contextlib.suppress(Exception):  # a client whose connection was lost
            await stack.aclose()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._close()
