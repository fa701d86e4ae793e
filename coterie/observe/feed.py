"""One reader per run, shared by every page open on it (the Trio layer over :mod:`.fold`).

A :class:`RunFeed` follows the run through its backend's
:class:`~coterie.backends.RunSource` (on files the run's ``events.jsonl``,
read on from where it last read; on a server the run's event stream), folds
the new events into its :class:`~coterie.observe.fold.RunView`, reads the
board when a ``board.changed`` came and the mailbox counts at most once a
second, and sends the same server-sent-events frame to every subscribed
page. It reads only while some page is subscribed. A page that cannot keep up
(its buffer full) is dropped: its browser reconnects and starts again from a
snapshot, so a stuck page costs memory bounded by its buffer, never the
run's pace.

Everything it reads it reads as ``coterie watch`` does: nothing is locked,
delivered or written; a live run's mailbox counts, split into pending and in
flight, come from its control channel (:func:`coterie.control.live_mailboxes`,
through the run's :class:`~coterie.backends.RunAddress`).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.control import live_mailboxes
from coterie.errors import CoterieError
from coterie.observe.fold import RunView
from coterie.ui.follow import board_at

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

    from coterie.backends import RunAddress, RunSource

#: Seconds between two reads of the log while pages are open: live enough for a
#: person, and each read's changes coalesce into one frame for every page.
INTERVAL = 0.5
#: Seconds between two reads of the mailbox counts and the run's liveness.
SLOW_INTERVAL = 1.0
#: Frames a page may be behind before it is dropped.
BUFFER = 256


def sse_frame(event: str, data: str) -> bytes:
    """One server-sent event: its name and *data* (one ``data:`` line per line)."""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"event: {event}\n{lines}\n".encode()


@attrs.define
class RunFeed:
    """The shared reader of one run (see the module docstring)."""

    source: RunSource
    view: RunView
    interval: float = INTERVAL
    #: How to reach the run while it is live (for its mailbox counts), if it can be.
    address: Callable[[], Awaitable[RunAddress]] | None = None
    #: What the backend raises while it cannot be read: that round is skipped.
    errors: tuple[type[BaseException], ...] = ()
    _pages: list[trio.MemorySendChannel[bytes]] = attrs.field(factory=list)
    _wanted: trio.Event = attrs.field(factory=trio.Event)
    _lock: trio.Lock = attrs.field(factory=trio.Lock)
    _slow_at: float = float("-inf")
    _first: bool = True
    #: The snapshot frame of the view as it stands, made once for every page that
    #: joins before the next read (None: not made since the view last changed).
    _snapshot: bytes | None = None

    @classmethod
    def following(
        cls,
        source: RunSource,
        interval: float = INTERVAL,
        address: Callable[[], Awaitable[RunAddress]] | None = None,
        errors: tuple[type[BaseException], ...] = (),
    ) -> RunFeed:
        """The feed of the run *source* reads (its model from the run's config)."""
        view = RunView(model=str(source.config.get("model") or ""))
        return cls(source, view, interval, address, errors)

    @property
    def pages(self) -> int:
        """How many pages are subscribed."""
        return len(self._pages)

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[trio.MemoryReceiveChannel[bytes]]:
        """Frames for one page: a ``snapshot`` first, then ``delta`` frames.

        While other pages are open the snapshot is the view as of the last delta
        they got (at most one interval old; what came since is the next delta,
        for every page alike), so a page that joins costs the others no frame;
        else the log is read first, the view being as old as the last page."""
        send, receive = trio.open_memory_channel[bytes](BUFFER)
        async with self._lock:
            if not self._pages:
                await self._catch_up()
            if self._snapshot is None:  # snapshot() spends the delta of a read nobody got
                self._snapshot = sse_frame("snapshot", _dumps(self.view.snapshot()))
            send.send_nowait(self._snapshot)
            self._pages.append(send)
            self._wanted.set()
        try:
            yield receive
        finally:
            if send in self._pages:
                self._pages.remove(send)
            send.close()

    async def run(self) -> None:
        """Follow the run while pages are open (until cancelled)."""
        while True:
            if not self._pages:
                self._wanted = trio.Event()
                await self._wanted.wait()
            async with self._lock:
                with contextlib.suppress(*self.errors):  # the backend away: read again later
                    await self._catch_up()
                self._broadcast()
            await trio.sleep(self.interval)

    def _broadcast(self) -> None:
        delta = self.view.take_delta()
        if delta is None:
            return
        frame = sse_frame("delta", _dumps(delta))
        for page in list(self._pages):
            try:
                page.send_nowait(frame)
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                self._pages.remove(page)  # too slow, or gone: it reconnects
                page.close()

    async def _catch_up(self) -> None:
        self._snapshot = None
        for event in await self.source.events():
            self.view.apply(event.record())
        if self._first or self.view.team.board_changed:
            with contextlib.suppress(CoterieError, OSError):  # unreadable now: kept as it was
                entries = await self.source.board()
                self.view.set_tasks(board_at(entries) if entries is not None else [])
        now = trio.current_time()
        if now - self._slow_at >= SLOW_INTERVAL:
            self._slow_at = now
            live = await self.source.live() is not None
            with contextlib.suppress(CoterieError, OSError):
                state, _ = await self.source.outcome()
                self.view.set_live(live, state)
            self.view.set_mailboxes(await self._mailboxes(live))
        self._first = False

    async def _mailboxes(self, live: bool) -> dict[str, dict[str, int]]:
        """Each mailbox's counts: a live run's from its control channel (which of
        the messages wait and which are in flight is known only there), else the
        unacknowledged messages the backend holds, all pending (nothing is in
        flight while no process runs the run)."""
        if live and self.address is not None:
            with contextlib.suppress(CoterieError, OSError):  # gone meanwhile, or busy
                return await live_mailboxes(await self.address(), timeout=2.0)
        unacked = await self.source.mail_counts()
        if live:  # the channel did not answer: the total only
            return {name: {"pending": n} for name, n in unacked.items()}
        return {name: {"pending": n, "in_flight": 0} for name, n in unacked.items()}


def _dumps(data: object) -> str:
    return json.dumps(data, separators=(",", ":"), default=repr)
