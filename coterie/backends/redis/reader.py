"""The runs a Redis server knows, read from any host without changing anything.

The same answers as on files (docs/scale-out.md, "Inspecting runs on
Redis"): the runs from the server's registry (:mod:`.registry`), a board
folded from its log (the Redis board opened and listed, which writes
nothing), a mailbox's unacknowledged messages read with ``XRANGE`` and
``XPENDING`` (nothing delivered, claimed or acknowledged), the events from
the run's event stream. Run ids are taken by unique prefix among the runs
the server knows, whatever host or workspace they ran in. Each question is
one connection under ``trio.run``: the commands that ask are not async.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import trio

from coterie.backends.protocol import ReadError
from coterie.backends.redis.client import connect, server_errors
from coterie.backends.redis.eventstream import read_stream
from coterie.backends.redis.registry import find_registered, registered_runs, run_record
from coterie.errors import CoterieError
from coterie.runs import UnknownRun

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import coredis

    from coterie.backends.protocol import Pending, RunSummary
    from coterie.backends.redis.client import RedisTarget
    from coterie.backends.redis.registry import RegisteredRun
    from coterie.events import Event

T = TypeVar("T")

__all__ = ["ServerReader", "first_error", "run_on_server", "unreachable"]


def run_on_server(target: RedisTarget, fn: Callable[..., Awaitable[T]], *args: object) -> T:
    """``trio.run(fn, *args)``, with a coterie error raised inside the client's task
    group raised bare, and a server lost a :class:`ReadError` with exit code 1."""
    try:
        return trio.run(fn, *args)
    except* CoterieError as group:
        raise first_error(group) from None
    except* server_errors() as group:
        raise unreachable(target, first_error(group)) from None


def first_error(error: BaseException) -> BaseException:
    """The first error of a (nested) group, or *error* itself."""
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def unreachable(target: RedisTarget, exc: BaseException) -> ReadError:
    """The error for a server that cannot be read (exit code 1)."""
    return ReadError(f"cannot read {target.url}: {exc}", 1)


class ServerReader:
    """The runs of the server *target* (see the module docstring)."""

    spans_workspaces = True

    def __init__(self, target: RedisTarget) -> None:
        self.target = target
        self.place = target.url

    def _ask(self, fn: Callable[[coredis.Redis[bytes]], Awaitable[T]]) -> T:
        async def asked() -> T:
            try:
                async with connect(self.target) as client:
                    return await fn(client)
            except server_errors() as exc:
                raise unreachable(self.target, exc) from None

        return run_on_server(self.target, asked)

    def runs(self) -> list[RunSummary]:
        async def ask(client: coredis.Redis[bytes]) -> list[RunSummary]:
            known = await registered_runs(client, self.target)
            return [await run_record(client, self.target, r) for r in known]

        return self._ask(ask)

    def find(self, run_id: str | None) -> RunSummary:
        async def ask(client: coredis.Redis[bytes]) -> RegisteredRun:
            if run_id is None:
                known = await registered_runs(client, self.target)
                if not known:
                    raise ReadError(f"no runs on {self.target.url}")
                return await run_record(client, self.target, known[-1])
            try:
                found = await find_registered(client, self.target, run_id)
            except UnknownRun as exc:
                raise ReadError(str(exc)) from None
            return await run_record(client, self.target, found)

        return self._ask(ask)

    def is_run(self, name: str) -> bool:
        async def ask(client: coredis.Redis[bytes]) -> bool:
            return name in await registered_runs(client, self.target)

        return self._ask(ask)

    def board(self, run: RunSummary) -> list[dict[str, Any]] | None:
        from coterie.backends.redis.board import open_redis_board
        from coterie.board import BoardError

        if run.command != "team":
            return None

        async def ask() -> list[dict[str, Any]]:
            try:
                async with open_redis_board(self.target, run.run_id) as board:
                    return [task.to_json() for task in await board.list()]
            except server_errors() as exc:
                raise unreachable(self.target, exc) from None
            except BoardError as exc:
                raise ReadError(
                    f"cannot read the task board of run {run.run_id}: {exc}", 1
                ) from None

        return run_on_server(self.target, ask)

    def actors(self, run: RunSummary) -> list[str]:
        from coterie.backends.redis.peek import redis_mailbox_names

        return self._ask(lambda client: redis_mailbox_names(client, self.target, run.run_id))

    def pending(self, run: RunSummary, actor: str) -> list[Pending]:
        from coterie.backends.redis.peek import peek_redis_mailbox

        return self._ask(lambda client: peek_redis_mailbox(client, self.target, run.run_id, actor))

    def events(self, run: RunSummary) -> list[Event]:
        async def ask(client: coredis.Redis[bytes]) -> list[Event]:
            events: list[Event] = []
            seen: set[tuple[str, int]] = set()  # a batch copied twice counts once
            after = "0-0"
            while batch := await read_stream(client, self.target, run.run_id, after=after):
                after = batch[-1].id
                for item in batch:
                    key = (item.origin, item.event.seq)
                    if key not in seen:
                        seen.add(key)
                        events.append(item.event)
                await trio.lowlevel.checkpoint()
            return events

        return self._ask(ask)

    def resume_hint(self, run_id: str) -> str:
        return f"coterie resume {run_id} --backend {self.target.url}"
