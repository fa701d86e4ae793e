"""One run on a Redis server, followed from any host (``watch``, ``observe``).

Fed from what the server holds: the run's event stream (``read_stream``,
waiting on the server with ``block``; an event copied twice, which the
forwarder's at-least-once copies allow, is given once, by its ``origin`` and
``seq``), the board's log, each mailbox's unacknowledged messages (the
length of its stream), the run's record in the registry, and its config
from the run's mirror. A run is live while its live key is held by a
process that is not known dead. Read-only: nothing is delivered, claimed,
acknowledged or written.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from coterie.backends.redis.boardlog import read_redis_log
from coterie.backends.redis.client import connect
from coterie.backends.redis.eventstream import read_stream
from coterie.backends.redis.mirror import RunMirror
from coterie.backends.redis.peek import redis_mail_counts
from coterie.backends.redis.registry import dead_here, find_registered, live_holder, run_record

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    import coredis

    from coterie.backends.redis.client import RedisTarget
    from coterie.board import LogEntry
    from coterie.events import Event

__all__ = ["ServerSource", "open_source"]


class ServerSource:
    """Run *run_id* of the server *target*, read through *client*."""

    def __init__(
        self,
        client: coredis.Redis[bytes],
        target: RedisTarget,
        run_id: str,
        command: str,
        config: dict[str, Any],
    ) -> None:
        self._client, self._target = client, target
        self.run_id, self.config, self._command = run_id, config, command
        self._after = "0-0"
        self._seen: set[tuple[str, int]] = set()

    async def live(self) -> str | None:
        holder = await live_holder(self._client, self._target, self.run_id)
        return None if holder is None or dead_here(holder) else holder

    async def _batch(self, block: float | None) -> list[Event]:
        batch = await read_stream(
            self._client, self._target, self.run_id, after=self._after, block=block
        )
        if batch:
            self._after = batch[-1].id
        fresh = []
        for item in batch:
            key = (item.origin, item.event.seq)
            if key not in self._seen:
                self._seen.add(key)
                fresh.append(item.event)
        return fresh

    async def events(self, wait: float = 0.0) -> list[Event]:
        events = await self._batch(wait or None)
        while batch := await self._batch(None):
            events.extend(batch)
        return events

    async def board(self) -> list[LogEntry] | None:
        if self._command != "team":
            return None
        return await read_redis_log(self._target, self.run_id)

    async def mail_counts(self) -> dict[str, int]:
        return await redis_mail_counts(self._client, self._target, self.run_id)

    async def outcome(self) -> tuple[str, str | None]:
        record = await run_record(self._client, self._target, self.run_id)
        return record.state, record.result


@contextlib.asynccontextmanager
async def open_source(target: RedisTarget, run_id: str) -> AsyncIterator[ServerSource]:
    """Run *run_id* (a unique prefix) of *target*, to follow; its connection open."""
    async with connect(target) as client:
        found = await find_registered(client, target, run_id)
        raw = await RunMirror(client, target, found).read("config.json")
        try:
            config = json.loads(raw) if raw else {}
        except ValueError:
            config = {}
        record = await run_record(client, target, found)
        yield ServerSource(client, target, found, record.command, config)
