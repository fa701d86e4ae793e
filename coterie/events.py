"""The run's event log: append-only JSON lines, plus live subscribers.

Supervision events (started, crashed, restarted, gave up, escalated,
stopped), mailbox corruption reports and agent activity are appended here.
Emitting never blocks and never fails the emitter: a slow live subscriber
loses events (counted in ``dropped``), the file does not. If the file cannot
be written (a full disk, a file system turned read-only), the line being
written is cut back (no torn line is left), the file is no longer written,
:attr:`EventLog.failure` holds the error and every :meth:`EventLog.on_failure`
callback is told, so that whoever drives the run can stop it with a clear
error; the emitter (a supervisor reporting a crash, an agent reporting a
tool call) never sees the error, and live subscribers still get the event.

The file does not copy large tool inputs (a Write's content, an Edit's
strings): the agent's transcript holds them already, durably, and a second
copy would double what a run writes. In the file, a string of a tool input
longer than :data:`LARGE_INPUT` characters is replaced by a reference
``{"elided": "see the transcript", "chars": N, "sha256": HEX}`` (the hash
lets a reader check it against the transcript). Live subscribers and
:attr:`EventLog.history` get the event whole.

Event types form a closed vocabulary, :data:`EventType` (declared in
:mod:`coterie.eventtypes`, re-exported here). It is checked statically, not at
run time: mypy checks every ``emit``/``publish`` call against the ``Literal``
and a test checks the source (every literal type emitted is catalogued,
every catalogued type is emitted). A run-time refusal would break the promise
above: a misspelt type in a rare path (a crash report) would turn into a
crash of the supervisor reporting it, and the check would cost a lookup on
the hottest path (every streamed text delta) to catch what CI already
catches. Events read back from a file keep whatever type they were written
with (:attr:`Event.type` is a ``str``), so logs of older versions still load.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.eventtypes import EVENT_TYPES, EventType

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

__all__ = ["EVENT_TYPES", "Event", "EventLog", "EventType", "read_events", "stored"]

#: Longer strings in a tool's input are referred to in the file, not copied.
LARGE_INPUT = 2048


@attrs.frozen
class Event:
    """One entry of the event log. ``type`` is dotted, e.g. ``actor.crashed``.

    ``type`` is a ``str``, not an :data:`EventType`: an event read back from a
    file may come from another version of coterie.
    """

    seq: int
    ts: float
    type: str
    data: dict[str, Any] = attrs.field(factory=dict)

    def record(self) -> dict[str, Any]:
        """The event as a line of the log holds it: ``seq``, ``ts``, ``type`` and its fields."""
        return {"seq": self.seq, "ts": self.ts, "type": self.type, **self.data}

    def to_json(self) -> str:
        """One JSON line (without the newline)."""
        return json.dumps(self.record(), separators=(",", ":"), default=repr)

    @classmethod
    def from_json(cls, line: str) -> Event:
        """Parse a line written by :meth:`to_json`."""
        raw = json.loads(line)
        return cls(seq=raw.pop("seq"), ts=raw.pop("ts"), type=raw.pop("type"), data=raw)


@attrs.define
class EventLog:
    """Appends events to ``path`` (if given) and fans them out to subscribers.

    The last ``keep`` events stay in memory in :attr:`history` for tests and
    displays.
    """

    path: Path | None = None
    keep: int = 10_000
    history: deque[Event] = attrs.field(init=False)
    dropped: int = attrs.field(init=False, default=0)
    _seq: int = attrs.field(init=False, default=0)
    _fd: int | None = attrs.field(init=False, default=None)
    _subscribers: list[trio.MemorySendChannel[Event]] = attrs.field(init=False, factory=list)
    _listeners: list[Callable[[Event], None]] = attrs.field(init=False, factory=list)
    #: Why the file stopped being written, or None while it is.
    failure: OSError | None = attrs.field(init=False, default=None)
    _failure_callbacks: list[Callable[[OSError], None]] = attrs.field(init=False, factory=list)

    def __attrs_post_init__(self) -> None:
        self.history = deque(maxlen=self.keep)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            self._seq = _last_seq(self.path)

    def emit(self, type: EventType, **data: Any) -> Event:
        """Record an event now and hand it to every live subscriber."""
        self._seq += 1
        event = Event(seq=self._seq, ts=time.time(), type=type, data=data)
        self.history.append(event)
        if self._fd is not None:
            self._append(self._fd, (stored(event).to_json() + "\n").encode())
        self._fan_out(event)
        return event

    def _append(self, fd: int, line: bytes) -> None:
        written = 0
        try:
            while written < len(line):  # a short write means the disk filled mid-line
                written += os.write(fd, line[written:])
        except OSError as exc:
            if written:
                # O_APPEND: the torn part is the file's end. Cutting it keeps the
                # log readable; if even that fails, readers skip a torn last line.
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, os.fstat(fd).st_size - written)
            self._fail(exc)

    def _fail(self, exc: OSError) -> None:
        if exc.filename is None and self.path is not None:
            exc.filename = str(self.path)  # the message must name the file
        self.failure = exc
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        for callback in list(self._failure_callbacks):
            callback(exc)

    def on_failure(self, callback: Callable[[OSError], None]) -> None:
        """Call *callback* (quick, never raising) once the file cannot be written
        any more; at once if that has happened already."""
        self._failure_callbacks.append(callback)
        if self.failure is not None:
            callback(self.failure)

    def publish(self, type: EventType, **data: Any) -> Event:
        """Hand an event to live subscribers only: not numbered, not stored.

        For what only a live display needs (streamed text deltas).
        """
        event = Event(seq=0, ts=time.time(), type=type, data=data)
        self._fan_out(event)
        return event

    def _fan_out(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)
        for channel in list(self._subscribers):
            try:
                channel.send_nowait(event)
            except trio.WouldBlock:
                self.dropped += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._subscribers.remove(channel)

    @contextlib.contextmanager
    def subscribe(self, buffer: int = 1000) -> Iterator[trio.MemoryReceiveChannel[Event]]:
        """Watch events live: ``with log.subscribe() as events: async for e in events: ...``."""
        send, receive = trio.open_memory_channel[Event](buffer)
        self._subscribers.append(send)
        try:
            yield receive
        finally:
            if send in self._subscribers:
                self._subscribers.remove(send)
            send.close()

    @contextlib.contextmanager
    def listen(self, callback: Callable[[Event], None]) -> Iterator[None]:
        """Call *callback* synchronously for every event while the block runs.

        For displays that must show events in order with other output (a
        permission prompt after the tool call it is about). The callback must
        be quick and must not raise.
        """
        self._listeners.append(callback)
        try:
            yield
        finally:
            self._listeners.remove(callback)

    def of_type(self, prefix: str) -> list[Event]:
        """Events in :attr:`history` whose type starts with *prefix*."""
        return [e for e in self.history if e.type.startswith(prefix)]

    def close(self) -> None:
        """Close the file and end every subscription."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        for channel in self._subscribers:
            channel.close()
        self._subscribers.clear()


def stored(event: Event) -> Event:
    """*event* as a log keeps it (the file, a Redis stream): large strings of tool
    inputs referred to."""
    data = event.data
    if event.type == "agent.tool_call" and isinstance(data.get("input"), dict):
        return attrs.evolve(event, data={**data, "input": _elide(data["input"])})
    if event.type == "agent.message" and isinstance(data.get("content"), list):
        content = [
            {**block, "input": _elide(block["input"])}
            if isinstance(block, dict)
            and block.get("type") == "tool_use"
            and isinstance(block.get("input"), dict)
            else block
            for block in data["content"]
        ]
        return attrs.evolve(event, data={**data, "content": content})
    return event


def _elide(value: Any) -> Any:
    if isinstance(value, str) and len(value) > LARGE_INPUT:
        digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
        return {"elided": "see the transcript", "chars": len(value), "sha256": digest}
    if isinstance(value, dict):
        return {key: _elide(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_elide(item) for item in value]
    return value


def read_events(path: Path) -> Iterator[Event]:
    """Yield the events stored in *path*, skipping a torn or garbled line."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.endswith("\n"):
                return  # torn last line after a crash
            try:
                yield Event.from_json(line)
            except (ValueError, KeyError):
                continue


def _last_seq(path: Path) -> int:
    last = 0
    if path.exists():
        for event in read_events(path):
            last = event.seq
    return last
