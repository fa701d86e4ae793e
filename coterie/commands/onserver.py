"""``coterie runs``, ``tasks`` and ``inbox`` with ``--backend redis://…``: read from the server.

The same answers as on files, from what the server holds for every host
(docs/scale-out.md, "Inspecting runs on Redis"): the runs from its registry
(:mod:`coterie.runregistry`), a board folded from its log (the Redis board
opened and listed, which writes nothing), a mailbox's unacknowledged
messages read with ``XRANGE`` and ``XPENDING`` (nothing delivered, claimed
or acknowledged) and the message history from the run's event stream. Run
ids are taken by unique prefix, among the runs the server knows, whatever
host or workspace they ran in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

import trio

from coterie.commands.inspectview import InspectError
from coterie.errors import CoterieError
from coterie.eventstream import read_stream
from coterie.redisclient import connect, server_errors
from coterie.runregistry import RegisteredRun, find_registered, registered_runs, run_record
from coterie.runs import UnknownRun

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    import coredis

    from coterie.mailbox import PeekedMessage
    from coterie.redisclient import RedisTarget

T = TypeVar("T")

__all__ = [
    "list_on_server",
    "locate_on_server",
    "read_inbox_on_server",
    "read_tasks_on_server",
    "run_on_server",
    "unreachable",
]


def run_on_server(target: RedisTarget, fn: Callable[..., Awaitable[T]], *args: object) -> T:
    """``trio.run(fn, *args)``, with an :class:`InspectError` or a coterie error
    raised inside the client's task group raised bare (a server lost: an
    :class:`InspectError` with exit code 1)."""
    try:
        return trio.run(fn, *args)
    except* (InspectError, CoterieError) as group:
        raise _first(group) from None
    except* server_errors() as group:
        raise unreachable(target, _first(group)) from None


def _first(error: BaseException) -> BaseException:
    while isinstance(error, BaseExceptionGroup):
        error = error.exceptions[0]
    return error


def unreachable(target: RedisTarget, exc: BaseException) -> InspectError:
    """The error for a server that cannot be read (exit code 1)."""
    return InspectError(f"cannot read {target.url}: {exc}", 1)


async def list_on_server(target: RedisTarget) -> list[RegisteredRun]:
    """Every run the server *target* knows, oldest first."""
    try:
        async with connect(target) as client:
            return [
                await run_record(client, target, r) for r in await registered_runs(client, target)
            ]
    except server_errors() as exc:
        raise unreachable(target, exc) from None


async def locate_on_server(
    client: coredis.Redis[bytes], target: RedisTarget, run_id: str | None
) -> RegisteredRun:
    """Run *run_id* (a unique prefix will do), or the latest run the server knows."""
    if run_id is None:
        known = await registered_runs(client, target)
        if not known:
            raise InspectError(f"no runs on {target.url}")
        return await run_record(client, target, known[-1])
    try:
        found = await find_registered(client, target, run_id)
    except UnknownRun as exc:
        raise InspectError(str(exc)) from None
    return await run_record(client, target, found)


async def read_tasks_on_server(
    target: RedisTarget, run_id: str | None
) -> tuple[RegisteredRun, list[dict[str, Any]]]:
    """The run and the tasks on its board, as ``Task.to_json()`` dicts in id order."""
    from coterie.board import BoardError, open_redis_board

    try:
        async with connect(target) as client:
            record = await locate_on_server(client, target, run_id)
            if record.command != "team":
                raise InspectError(f"run {record.run_id} has no task board (not a team run?)")
        async with open_redis_board(target, record.run_id) as board:
            return record, [task.to_json() for task in await board.list()]
    except server_errors() as exc:
        raise unreachable(target, exc) from None
    except BoardError as exc:
        raise InspectError(f"cannot read the task board of run {run_id}: {exc}", 1) from None


async def read_inbox_on_server(
    target: RedisTarget, first: str, second: str | None
) -> tuple[RegisteredRun, str, list[PeekedMessage], list[dict[str, Any]]]:
    """``inbox [RUN_ID] ACTOR`` on the server: the run, the actor, its unacknowledged
    messages and its ``team.message`` history (as ``read_inbox`` gives them)."""
    from coterie.mailbox import peek_redis_mailbox, redis_mailbox_names

    try:
        async with connect(target) as client:
            if second is None:
                try:
                    named = await find_registered(client, target, first)
                except UnknownRun:
                    named = None
                if named is not None and named == first:
                    names = ", ".join(await redis_mailbox_names(client, target, named)) or "none"
                    raise InspectError(
                        f"{first} is a run: name an actor too, as in "
                        f"'coterie inbox {first} ACTOR' (actors with a mailbox: {names})"
                    )
                record, actor = await locate_on_server(client, target, None), first
            else:
                record, actor = await locate_on_server(client, target, first), second
            actors = await redis_mailbox_names(client, target, record.run_id)
            if actor not in actors:
                raise InspectError(
                    f"no actor {actor!r} in run {record.run_id}; actors with a mailbox: "
                    f"{', '.join(actors) or 'none'}"
                )
            pending = await peek_redis_mailbox(client, target, record.run_id, actor)
            history = await _history(client, target, record.run_id, actor)
    except server_errors() as exc:
        raise unreachable(target, exc) from None
    return record, actor, pending, history


async def _history(
    client: coredis.Redis[bytes], target: RedisTarget, run_id: str, actor: str
) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    seen: set[tuple[str, int]] = set()  # a batch copied twice (at least once) counts once
    after = "0-0"
    while batch := await read_stream(client, target, run_id, after=after):
        after = batch[-1].id
        for item in batch:
            event, key = item.event, (item.origin, item.event.seq)
            if key in seen:
                continue
            seen.add(key)
            d = event.data
            if event.type != "team.message" or actor not in (d.get("sender"), d.get("recipient")):
                continue
            history.append(
                {
                    "ts": event.ts,
                    "direction": "sent" if d.get("sender") == actor else "received",
                    "sender": d.get("sender"),
                    "recipient": d.get("recipient"),
                    "kind": d.get("kind"),
                    "text": str(d.get("text", "")),
                }
            )
        await trio.lowlevel.checkpoint()
    return history
