"""The Redis/Valkey backend's :class:`~coterie.backends.protocol.Provider`.

Light to import: each method imports what it opens, so that choosing this
backend (``Backend.parse``) costs no more than reading its URL.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import attrs

from coterie.backends.redis.client import RedisTarget, parse_backend, server_errors

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable
    from contextlib import AbstractAsyncContextManager
    from pathlib import Path

    from coterie.backends.protocol import RunAddress, RunReader, RunSource, RunStores
    from coterie.backends.redis.workers import WorkerRegistry
    from coterie.board import BoardCorruption
    from coterie.events import EventLog

__all__ = ["PROVIDER", "RedisProvider"]


def _target(location: Any) -> RedisTarget:
    assert isinstance(location, RedisTarget), location
    return location


class RedisProvider:
    """A run's state on a Redis or Valkey server (docs/scale-out.md)."""

    def parse(self, url: str) -> RedisTarget:
        return parse_backend(url)

    def of_run(self, recorded: str, given: str | None) -> RedisTarget:
        target = parse_backend(recorded)
        if given:
            with contextlib.suppress(ValueError):
                theirs = parse_backend(given)
                if attrs.evolve(theirs, password=None, username=None) == attrs.evolve(
                    target, username=None
                ):
                    return theirs
        return target

    def url(self, location: Any) -> str:
        assert isinstance(location, RedisTarget)
        return location.url

    def errors(self) -> tuple[type[BaseException], ...]:
        return server_errors()

    def client_errors(self) -> tuple[type[BaseException], ...]:
        from coredis.exceptions import RedisError

        return (RedisError,)

    def hold(self, location: Any, run_id: str, run_dir: Path) -> AbstractAsyncContextManager[None]:
        import os
        import socket

        from coterie.backends.redis.registry import held_live
        from coterie.runs import read_config

        origin = f"{socket.gethostname()}:{os.getpid()}"
        return held_live(_target(location), run_id, read_config(run_dir), origin)

    def open_stores(
        self,
        location: Any,
        run_id: str,
        run_dir: Path,
        events: EventLog,
        *,
        team: bool,
        on_change: Callable[[object], None] | None,
        on_corruption: Callable[[BoardCorruption], None] | None,
        holds_run: bool,
        bring: Callable[[str], bool] | None,
        hosted_by: str | None,
    ) -> AbstractAsyncContextManager[RunStores]:
        from coterie.backends.redis.stores import open_stores

        return open_stores(
            _target(location), run_id, run_dir, events, team=team, on_change=on_change,
            on_corruption=on_corruption, holds_run=holds_run, bring=bring, hosted_by=hosted_by,
        )  # fmt: skip

    def reader(self, location: Any, workdir: Path) -> RunReader:
        from coterie.backends.redis.reader import ServerReader

        return ServerReader(_target(location))

    def open_source(
        self, location: Any, workdir: Path, run_id: str
    ) -> AbstractAsyncContextManager[RunSource]:
        from coterie.backends.redis.source import open_source

        return open_source(_target(location), run_id)

    async def address(self, location: Any, workdir: Path, run_id: str) -> RunAddress:
        from coterie.backends.redis.address import find_on_server

        return await find_on_server(_target(location), run_id)

    async def fetch(self, location: Any, workdir: Path, run_id: str) -> Path | None:
        from coterie.backends.redis.fetch import fetch_run

        return await fetch_run(_target(location), workdir, run_id)

    async def copy_of_run(
        self,
        location: Any,
        run_id: str,
        run_dir: Path,
        *,
        read: tuple[str, ...],
        bring: Callable[[str], bool],
    ) -> dict[str, bytes | None]:
        from coterie.backends.redis.client import connect
        from coterie.backends.redis.mirror import RunMirror

        target = _target(location)
        async with connect(target) as client:
            mirror = RunMirror(client, target, run_id)
            files = await mirror.files()  # one listing for every read
            found = {rel: await mirror.read(rel, files) for rel in read}
            await mirror.materialize(run_dir, only=bring, files=files)
        return found

    @contextlib.asynccontextmanager
    async def open_workers(self, location: Any) -> AsyncIterator[WorkerRegistry]:
        from coterie.backends.redis.client import connect
        from coterie.backends.redis.workers import WorkerRegistry

        target = _target(location)
        async with connect(target) as client:
            yield WorkerRegistry(client, target)


PROVIDER = RedisProvider()
