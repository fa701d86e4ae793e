"""One reader per run, shared by every page open on it (the Trio layer over :mod:`.fold`).

A :class:`RunFeed` follows the run's ``events.jsonl`` from where it last
read (never the whole log again), folds the new lines into its
:class:`~coterie.observe.fold.RunView`, reads the board when a
``board.changed`` came and the mailbox counts at most once a second, and
sends the same server-sent-events frame to every subscribed page. It reads
only while some page is subscribed. A page that cannot keep up (its buffer
full) is dropped: its browser reconnects and starts again from a snapshot,
so a stuck page costs memory bounded by its buffer, never the run's pace.

Everything it reads it reads as ``coterie tasks`` and ``coterie inbox`` do:
the board through :class:`coterie.board.Board`, the mailboxes with
:func:`coterie.mailbox.peek_mailbox` (no lock taken, nothing written); a
live run's mailbox counts, split into pending and in flight, come from its
control channel (:func:`coterie.control.live_mailboxes`).
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.board import Board, BoardError
from coterie.control import live_mailboxes
from coterie.errors import CoterieError, MailboxError
from coterie.mailbox import peek_mailbox
from coterie.observe.fold import RunView
from coterie.runs import DamagedRun, is_live, read_config, read_state
from coterie.ui.follow import LineSplitter

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

#: Seconds between two reads of the log while pages are open: live enough for a
#: person, and each read's changes coalesce into one frame for every page.
INTERVAL = 0.5
#: Seconds between two reads of the mailbox counts and the run's liveness.
SLOW_INTERVAL = 1.0
#: Frames a page may be behind before it is dropped.
BUFFER = 256
#: Bytes of the log read at a time.
CHUNK = 1 << 20


def sse_frame(event: str, data: str) -> bytes:
    """One server-sent event: its name and *data* (one ``data:`` line per line)."""
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"event: {event}\n{lines}\n".encode()


@attrs.define
class RunFeed:
    """The shared reader of one run (see the module docstring)."""

    run_dir: Path
    view: RunView
    interval: float = INTERVAL
    _offset: int = 0
    _splitter: LineSplitter = attrs.field(factory=LineSplitter)
    _pages: list[trio.MemorySendChannel[bytes]] = attrs.field(factory=list)
    _wanted: trio.Event = attrs.field(factory=trio.Event)
    _lock: trio.Lock = attrs.field(factory=trio.Lock)
    _board: Board | None = None
    _mailbox_keys: dict[str, tuple[Any, int]] = attrs.field(factory=dict)
    _slow_at: float = float("-inf")
    _first: bool = True
    #: The snapshot frame of the view as it stands, made once for every page that
    #: joins before the next read (None: not made since the view last changed).
    _snapshot: bytes | None = None

    @classmethod
    def open(cls, run_dir: Path, interval: float = INTERVAL) -> RunFeed:
        """The feed of the run in *run_dir* (its model read from ``config.json``)."""
        try:
            model = str(read_config(run_dir).get("model") or "")
        except DamagedRun:  # a damaged config must not hide the run's events
            model = ""
        return cls(run_dir, RunView(model=model), interval)

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
        while True:  # a large log is read (and folded) a chunk at a time, to its end
            data = await trio.to_thread.run_sync(self._read_new)
            for event in self._splitter.feed(data):
                self.view.apply(event.record())
            if len(data) < CHUNK:
                break
        if self._first or self.view.team.board_changed:
            self.view.set_tasks(await trio.to_thread.run_sync(self._read_board))
        now = trio.current_time()
        if now - self._slow_at >= SLOW_INTERVAL:
            self._slow_at = now
            live = is_live(self.run_dir)
            self.view.set_live(live, await trio.to_thread.run_sync(self._read_state))
            self.view.set_mailboxes(await self._mailboxes(live))
        self._first = False

    def _read_state(self) -> str | None:
        """The state the run recorded last (None if it cannot be read: not yet written,
        or damaged, which the run list reports)."""
        try:
            state = read_state(self.run_dir).get("state")
        except DamagedRun:
            return None
        return state if isinstance(state, str) else None

    def _read_new(self) -> bytes:
        path = self.run_dir / "events.jsonl"
        try:
            with open(path, "rb") as log:
                size = os.fstat(log.fileno()).st_size
                if size < self._offset:  # cut back after a full disk: the rest is gone
                    self._offset, self._splitter = size, LineSplitter()
                log.seek(self._offset)
                data = log.read(CHUNK)
        except FileNotFoundError:
            return b""
        self._offset += len(data)
        return data

    def _read_board(self) -> list[dict[str, Any]]:
        directory = self.run_dir / "board"
        if not (directory / "board.log").is_file():
            return []
        try:
            if self._board is None:
                self._board = Board(directory, fsync=False)
            return [task.to_json() for task in self._board.list()]
        except (BoardError, OSError):
            return self.view.tasks

    async def _mailboxes(self, live: bool) -> dict[str, dict[str, int]]:
        """Each mailbox's counts: a live run's from its control channel (which of
        the messages wait and which are in flight is known only there), else the
        unacknowledged messages on disk, all pending (nothing is in flight while
        no process runs the run)."""
        if live:
            with contextlib.suppress(CoterieError, OSError):  # gone meanwhile, or busy
                return await live_mailboxes(self.run_dir, timeout=2.0)
        unacked = await trio.to_thread.run_sync(self._read_mailboxes)
        if live:  # the channel did not answer: the total only
            return {name: {"pending": n} for name, n in unacked.items()}
        return {name: {"pending": n, "in_flight": 0} for name, n in unacked.items()}

    def _read_mailboxes(self) -> dict[str, int]:
        root = self.run_dir / "mailboxes"
        counts: dict[str, int] = {}
        try:
            names = sorted(p.name for p in root.iterdir() if p.is_dir())
        except OSError:
            return counts
        for name in names:
            directory = root / name
            key = _fingerprint(directory)
            known = self._mailbox_keys.get(name)
            if known is not None and known[0] == key:
                counts[name] = known[1]
                continue
            try:
                count = len(peek_mailbox(directory))
            except (MailboxError, OSError):
                continue
            self._mailbox_keys[name] = (key, count)
            counts[name] = count
        return counts

    def close(self) -> None:
        """Close the board (the feed is not used again)."""
        if self._board is not None:
            self._board.close()


def _fingerprint(directory: Path) -> Any:
    """What changes whenever a mailbox's count may have (its files' sizes and times)."""
    try:
        return tuple(
            sorted((e.name, e.stat().st_size, e.stat().st_mtime_ns) for e in os.scandir(directory))
        )
    except OSError:
        return None


def _dumps(data: object) -> str:
    return json.dumps(data, separators=(",", ":"), default=repr)
