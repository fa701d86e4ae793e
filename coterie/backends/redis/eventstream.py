"""The run's event log on a Redis stream, for runs spread over processes and hosts.

On the Redis backend every process of a run (the lead's, each worker's)
emits into an :class:`~coterie.events.EventLog` of its own, as on files;
:func:`forward_events` copies each stored event (numbered, as the file keeps
it: large tool inputs referred to) to the run's stream ``run:<id>:events``,
in order, in batches, without ever blocking the emitter: a slow or lost
server only delays the copies (they wait in memory, counted in
:attr:`Forwarder.backlog`); a run's stores closing :meth:`~Forwarder.drain`
it, and a cancelled forwarder (a stop) copies what it holds, shielded, for a
few seconds, on a connection of its own (the stop ends the client's tasks,
and their connection, at once). A batch gathers what is emitted for
:data:`GATHER` seconds after its first event, or until it is full: a busy
worker's teammates emit an event every few milliseconds, and copied one by
one they made a fifth of the worker's round trips (each about 0.2 ms of the
client's CPU); a reader sees an event at most that much later. Each batch is
one MULTI/EXEC: all of it is in the stream or none; a connection lost after
the server applied it but before its answer came makes the batch be copied
again (at least once: readers that must not count an event twice drop
repeats by ``origin`` and ``seq``). The stream's own ids give one order to the
events of every process; each entry names the process it came from
(``origin``), since the numbers (``seq``) are each process's own.
:func:`read_stream` reads it back (from the start, or after an id, waiting
for more with ``block``), for ``coterie watch`` and the observer.
"""

from __future__ import annotations

import contextlib
from collections import deque
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.backends.redis.client import accepted, connect, refused, server_errors
from coterie.events import Event, stored

if TYPE_CHECKING:
    import coredis

    from coterie.backends.redis.client import RedisTarget
    from coterie.events import EventLog

__all__ = ["Forwarder", "StreamEvent", "forward_events", "read_stream", "stream_key"]

#: Seconds a stopping forwarder may take to copy what it still holds.
FLUSH_GRACE = 5.0
#: Events copied in one round trip at most.
BATCH = 500
#: Seconds a batch gathers events after its first one (module docstring).
GATHER = 0.1
#: Seconds between tries while the server is away (doubling up to the last).
RETRY_FIRST, RETRY_LAST = 0.1, 2.0


def stream_key(target: RedisTarget, run_id: str) -> str:
    """The key of run *run_id*'s event stream."""
    return target.key("run", run_id, "events")


@attrs.define
class Forwarder:
    """What a running :func:`forward_events` holds: the events not copied yet."""

    pending: deque[Event] = attrs.field(factory=deque)
    wake: trio.Event = attrs.field(factory=trio.Event)
    #: Set once a whole batch waits: it goes without gathering more.
    full: trio.Event = attrs.field(factory=trio.Event)
    #: Set (and replaced) after each batch copied.
    moved: trio.Event = attrs.field(factory=trio.Event)
    copied: int = 0
    #: Round trips that copied events.
    batches: int = 0
    #: Copies that failed (the server away) and were tried again.
    failures: int = 0

    @property
    def backlog(self) -> int:
        return len(self.pending)

    async def drain(self) -> None:
        """Return once every event added so far is on the server, the batch being
        gathered sent at once (a run's stores closing flush their events, as they
        flush the mirror, before anything is cancelled). While the server is away
        it waits: its caller bounds the wait."""
        upto = self.copied + self.backlog
        self.full.set()
        while self.copied < upto:
            await self.moved.wait()

    def add(self, event: Event) -> None:
        if event.seq:  # published-only events (text deltas) are not part of the log
            self.pending.append(event)
            self.wake.set()
            if len(self.pending) >= BATCH:
                self.full.set()


async def forward_events(
    log: EventLog,
    client: coredis.Redis[bytes],
    target: RedisTarget,
    run_id: str,
    *,
    origin: str,
    task_status: trio.TaskStatus[Forwarder] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Copy every event *log* stores, from now on, to run *run_id*'s stream; run
    until cancelled (see the module docstring)."""
    forwarder = Forwarder()
    key = stream_key(target, run_id)
    with log.listen(forwarder.add):
        task_status.started(forwarder)
        try:
            while True:
                await forwarder.wake.wait()
                with trio.move_on_after(GATHER):
                    await forwarder.full.wait()
                forwarder.wake, forwarder.full = trio.Event(), trio.Event()
                await _copy(client, key, origin, forwarder)
        finally:
            with (
                trio.CancelScope(shield=True),
                trio.move_on_after(FLUSH_GRACE),
                contextlib.suppress(*server_errors()),  # the server away: they stay local
            ):
                if forwarder.pending:
                    # On a connection of its own, opened under the shield: a stop's
                    # cancellation ends the client's own tasks too (coredis's
                    # readers), and its connection with them.
                    async with connect(target) as fresh:
                        await _copy(fresh, key, origin, forwarder)


async def _copy(client: coredis.Redis[bytes], key: str, origin: str, fwd: Forwarder) -> None:
    delay = RETRY_FIRST
    while fwd.pending:
        batch = [fwd.pending[i] for i in range(min(BATCH, len(fwd.pending)))]
        try:
            async with client.pipeline(transaction=True) as pipe:
                for event in batch:
                    pipe.xadd(key, {"e": stored(event).to_json(), "o": origin})
        except server_errors() as exc:
            fwd.failures += 1
            refused(exc)  # a server out of memory is said once
            await trio.sleep(delay)  # the server is away: keep them, try again
            delay = min(delay * 2, RETRY_LAST)
            continue
        if delay != RETRY_FIRST:
            accepted()
        delay = RETRY_FIRST
        for _ in batch:  # dropped only once the server has them
            fwd.pending.popleft()
        fwd.copied += len(batch)
        fwd.batches += 1
        moved, fwd.moved = fwd.moved, trio.Event()
        moved.set()


@attrs.frozen
class StreamEvent:
    """An event read back from a run's stream: its id there and its process."""

    id: str
    origin: str
    event: Event


async def read_stream(
    client: coredis.Redis[bytes],
    target: RedisTarget,
    run_id: str,
    *,
    after: str = "0-0",
    count: int = BATCH,
    block: float | None = None,
) -> list[StreamEvent]:
    """The events of run *run_id*'s stream after id *after* (at most *count*);
    with *block* seconds, wait that long for one if there is none yet."""
    key = stream_key(target, run_id)
    found = await client.xread(
        {key: after}, count=count, block=None if block is None else max(1, round(block * 1000))
    )
    if not found:
        return []
    out = []
    for entry in found.get(key.encode(), ()):
        fields = entry.field_values
        try:
            event = Event.from_json(_text(fields[b"e"]))
        except (KeyError, ValueError):
            continue  # not written by coterie: skipped, as a garbled line of the file is
        out.append(StreamEvent(_text(entry.identifier), _text(fields.get(b"o", b"")), event))
    return out


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value
