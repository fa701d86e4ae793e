"""A run on a Redis server, reached from any host: its liveness from the server's
registry, its post office on the server (:func:`open_redis_post_office`)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import trio

from coterie.backends.choice import BackendError
from coterie.backends.redis.client import connect, server_errors
from coterie.backends.redis.office import open_redis_post_office
from coterie.backends.redis.peek import remove_redis_mailbox
from coterie.backends.redis.reader import first_error
from coterie.backends.redis.registry import dead_here, find_registered, live_holder

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from coterie.backends.redis.client import RedisTarget
    from coterie.mailbox import PostOffice

__all__ = ["ServerAddress", "find_on_server"]


class ServerAddress:
    """Run *run_id* (its full id) on the server *target*."""

    def __init__(self, target: RedisTarget, run_id: str) -> None:
        self.target, self.run_id = target, run_id

    async def live(self) -> bool:
        async with connect(self.target) as client:
            holder = await live_holder(client, self.target, self.run_id)
        return holder is not None and not dead_here(holder)

    @contextlib.asynccontextmanager
    async def post_office(self, reply: str) -> AsyncIterator[PostOffice]:
        try:
            async with open_redis_post_office(self.target, self.run_id, block=0.5) as post:
                yield post
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(5.0):
                async with connect(self.target) as client:
                    await remove_redis_mailbox(client, self.target, self.run_id, reply)


async def find_on_server(target: RedisTarget, run_id: str) -> ServerAddress:
    """Run *run_id* (a unique prefix) of *target*; :class:`~coterie.runs.UnknownRun`,
    or a :class:`BackendError` if the server cannot be read."""
    try:
        async with connect(target) as client:
            return ServerAddress(target, await find_registered(client, target, run_id))
    except* server_errors() as group:
        raise BackendError(f"cannot read {target.url}: {first_error(group)}") from None
    except* Exception as group:  # raised inside the client's task group: bare again
        raise first_error(group) from None
