"""``coterie watch RUN_ID --backend redis://…``: the live view of a run on Redis, from any host.

The same view as :mod:`coterie.commands.watch` (:class:`coterie.ui.live.TeamView`),
fed from what the server holds: the run's event stream (``read_stream``,
waiting on the server with ``block`` while the run is live; an event copied
twice, which the forwarder's at-least-once copies allow, is shown once, by
its ``origin`` and ``seq``), the board folded from its log
(:func:`coterie.board.read_redis_log`, :func:`coterie.ui.follow.board_at`)
and each mailbox's unacknowledged messages (the length of its stream). A
run is live while its live key is held (:mod:`coterie.runregistry`); once it
is not, the stream is read until it has been quiet for :data:`DRAIN` seconds
(the run's last events may still be on their way), then the final state is
shown. A run that has ended is replayed at ``--speed``. Read-only: nothing
is delivered, claimed, acknowledged or written.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import trio

from coterie.board import read_redis_log
from coterie.eventstream import read_stream
from coterie.mailbox import redis_mail_counts
from coterie.redisclient import connect
from coterie.runmirror import RunMirror
from coterie.runregistry import dead_here, find_registered, live_holder, run_record
from coterie.ui.follow import ReplaySchedule, board_at
from coterie.ui.live import TeamView, show_end

if TYPE_CHECKING:
    import coredis
    from rich.console import Console

    from coterie.events import Event
    from coterie.redisclient import RedisTarget

__all__ = ["StreamTail", "watch_on_server"]

#: Seconds one read of a live run's stream waits on the server for an event.
BLOCK = 0.5
#: Seconds of quiet after the run stopped before its stream is taken as read.
DRAIN = 1.0
MAIL_EVERY = 1.0  # seconds between two counts of its mailboxes


class StreamTail:
    """A run's event stream, read on from where the last read stopped, repeats dropped."""

    def __init__(self, client: coredis.Redis[bytes], target: RedisTarget, run_id: str) -> None:
        self._client, self._target, self._run_id = client, target, run_id
        self._after = "0-0"
        self._seen: set[tuple[str, int]] = set()

    async def read(self, block: float | None = None) -> list[Event]:
        """The events added since the last read (waiting up to *block* s for one)."""
        batch = await read_stream(
            self._client, self._target, self._run_id, after=self._after, block=block
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

    async def read_all(self) -> list[Event]:
        """Every event not read yet."""
        events: list[Event] = []
        while batch := await self.read():
            events.extend(batch)
        return events


async def watch_on_server(target: RedisTarget, run_id: str, console: Console, speed: float) -> int:
    """Show run *run_id* (a unique prefix) of *target* to its end (see the module docs)."""
    async with connect(target) as client:
        run_id = await find_registered(client, target, run_id)
        raw = await RunMirror(client, target, run_id).read("config.json")
        try:
            config = json.loads(raw) if raw else {}
        except ValueError:
            config = {}
        record = await run_record(client, target, run_id)
        shown_until: list[float | None] = [None]

        async def read_board() -> list[dict[str, Any]]:
            return board_at(await read_redis_log(target, run_id), shown_until[0])

        view = TeamView(console, read_board if record.command == "team" else None)
        title = f"coterie watch · {config.get('command', record.command)}"
        if config.get("demo"):
            title += f" {config['demo']}"
        live = record.holder is not None
        if live:
            title += f" · live on {record.holder}"
        else:
            title += f" · replay at {speed:g}x" if speed else " · replay at once"
        view.start({"run_id": run_id, "title": title, "goal": config.get("goal")})
        tail = StreamTail(client, target, run_id)
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(view.run)
                if live:
                    await _follow(view, tail, client, target, run_id)
                else:
                    schedule = ReplaySchedule(speed)
                    for event in await tail.read_all():
                        await trio.sleep(schedule.delay(event.ts))
                        shown_until[0] = event.ts
                        view.event(event)
                nursery.cancel_scope.cancel()
            shown_until[0] = None
            await _final(view, client, target, run_id, console)
        finally:
            view.stop()
    return 0


async def _follow(
    view: TeamView, tail: StreamTail, client: coredis.Redis[bytes], target: RedisTarget, run_id: str
) -> None:
    """Feed *view* the run's events as they arrive, until the run is not live and its
    stream has been quiet for :data:`DRAIN` seconds."""
    last_count = -MAIL_EVERY
    while True:
        holder = await live_holder(client, target, run_id)
        live = holder is not None and not dead_here(holder)
        for event in await tail.read(block=BLOCK if live else DRAIN):
            view.event(event)
            live = True  # events still coming: read on before deciding it ended
        if trio.current_time() - last_count >= MAIL_EVERY:
            last_count = trio.current_time()
            if view.state.set_mailboxes(await redis_mail_counts(client, target, run_id)):
                view.refresh()
        if not live:
            return


async def _final(
    view: TeamView, client: coredis.Redis[bytes], target: RedisTarget, run_id: str, console: Console
) -> None:
    """Show the run's final state: the tree, board and mailboxes, then how it ended."""
    view.state.set_mailboxes(await redis_mail_counts(client, target, run_id))
    record = await run_record(client, target, run_id)
    if record.command == "team":
        view.state.set_tasks(board_at(await read_redis_log(target, run_id)))
    show_end(view, console, run_id, record.state, record.result)
