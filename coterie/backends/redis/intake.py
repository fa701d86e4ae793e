"""The one blocking read of a post office: every mailbox it receives, in one ``XREADGROUP``.

Theory of operation
-------------------
A post office's mailboxes are read by one task, the *intake*, which blocks in
one ``XREADGROUP ... STREAMS k1 k2 ... > > ...`` over the streams of every
mailbox opened here, and hands each entry to its mailbox's buffer. It blocks
on a connection of its own (:mod:`coterie.backends.redis.reading`), made
again after it is lost.

Why not a reader per mailbox: a blocking command holds a connection of the
client's pool for as long as it blocks, and the pool has 64; a worker
hosting more teammates than that had none left for anything else. And
coredis (6.9) drops the connection of a blocking command that is cancelled
and never gives its pool slot back: every mailbox closed while its reader
blocked (a teammate retired) lost the client one connection for good. The
intake's read is never cancelled while its client lives on.

A mailbox opened while the read blocks is taken in at once: the intake is
woken with ``CLIENT UNBLOCK`` on its connection's id (sent from the post
office's other client), and its next read includes the new stream; the
waker tries again until the read in flight includes it (the read may not
have reached the server yet), for at most the read's own ``block``. Where
the server refuses ``CLIENT`` commands (some managed services), the new
mailbox waits for the read in flight to
end (at most the policy's ``block``). A mailbox closed is left out of the
next read; an entry the read in flight brings for it stays pending with this
consumer on the server, as a closed mailbox's messages do, for the next
opening to take over.

After a connection error the intake reloads every mailbox's own pending
entries (an answer lost on the way is there) and reads again; a consumer
group gone from the server (it lost the run's data) is the run's end, a
:class:`~coterie.errors.BackendLost` naming the mailboxes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import trio

from coterie.backends.redis.link import GROUP
from coterie.backends.redis.reading import ReadConnection

if TYPE_CHECKING:
    import coredis

    from coterie.backends.redis.link import RedisLink

#: Entries one read brings at most, per stream.
BATCH = 256
#: Pause after a connection error before the intake reads again (s).
RETRY_PAUSE = 0.2
#: Pause between two wake-ups of a read that had not reached the server yet (s).
WAKE_AGAIN = 0.005


def connection_errors() -> tuple[type[BaseException], ...]:
    """What a read raises when the server cannot be reached (coredis imported late)."""
    from coredis.exceptions import ConnectionError as RedisConnectionError

    return (RedisConnectionError, TimeoutError, OSError)


class Fed(Protocol):
    """What the intake feeds (a :class:`~coterie.backends.redis.mailbox.RedisMailbox`)."""

    name: str

    def took(self, entries: Any) -> None:
        """Entries the read brought from this mailbox's stream."""

    async def reload(self) -> None:
        """Buffer again what the server holds in flight for this consumer."""


class Intake:
    """The one reader of a post office's mailboxes (see the module docstring)."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._boxes: dict[str, Fed] = {}  # stream key -> mailbox
        self._changed = trio.Event()  # set when a mailbox comes or goes
        self._generation = 0  # counts the changes of the set of mailboxes
        self._reading = -1  # the generation of the read in flight, -1 between reads
        self._client_id: int | None = None  # of the read's connection, None: unknown
        self._can_unblock = True

    async def add(self, box: Fed, key: str) -> None:
        """Read *box*'s stream (at *key*) from now on; returns once the read in
        flight, if any, was woken to take it in (as far as the server allows)."""
        self._boxes[key] = box
        await self._wake_the_read()

    def remove(self, box: Fed, key: str) -> None:
        """Leave *box*'s stream out of the next read."""
        if self._boxes.get(key) is box:
            del self._boxes[key]  # the read in flight goes on: nothing waits for it

    async def _wake_the_read(self) -> None:
        from coredis.exceptions import ResponseError

        self._generation += 1
        self._changed.set()
        wanted = self._generation
        # Between reads (or while its connection is made again) the next read
        # takes the new mailbox in; a read in flight without it is woken. Not
        # past the read's own end: a read that never reached the server (a
        # connection lost without a word) is not woken by trying forever.
        give_up = trio.current_time() + self._link.policy.block
        while self._client_id is not None and 0 <= self._reading < wanted:
            if trio.current_time() > give_up:
                return
            try:
                if await self._link.client.client_unblock(self._client_id):
                    return
            except connection_errors():
                return  # the read fails too, and is made again with every mailbox
            except ResponseError:  # CLIENT refused here: wait out the read (module docs)
                self._can_unblock, self._client_id = False, None
                return
            await trio.sleep(WAKE_AGAIN)  # not blocked on the server yet: soon

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Read every mailbox's stream, for as long as the post office is open
        (started once its connection is made)."""
        async with ReadConnection(self._link.target) as reading:
            self._client_id = await self._learn_client_id(reading.client)
            task_status.started()
            await self._read_forever(reading)

    async def _read_forever(self, reading: ReadConnection) -> None:
        from coredis.exceptions import StreamConsumerGroupError, UnblockedError

        block_ms = max(1, int(self._link.policy.block * 1000))
        lost = reload = False
        while True:
            if lost:  # a new connection; what the old one read and lost is in flight here
                try:
                    await reading.renew()
                    self._client_id = await self._learn_client_id(reading.client)
                except connection_errors():
                    await trio.sleep(RETRY_PAUSE)
                    continue
                lost, reload = False, True
            if not self._boxes:
                await self._changed.wait()
                self._changed = trio.Event()
                continue
            self._changed = trio.Event()
            # From the moment the set is taken, a mailbox added later wakes the read.
            self._reading = self._generation
            boxes = dict(self._boxes)
            try:
                if reload:
                    for box in boxes.values():
                        await box.reload()
                    reload = False
                reply = await reading.client.xreadgroup(
                    GROUP,
                    self._link.consumer,
                    dict.fromkeys(boxes, ">"),
                    count=BATCH,
                    block=block_ms,
                )
            except connection_errors():
                lost, self._client_id, reply = True, None, None
            except (StreamConsumerGroupError, UnblockedError):  # gone, or deleted under the read
                names = sorted(repr(box.name) for box in boxes.values())
                what = "mailbox" if len(names) == 1 else "mailboxes"
                raise self._link.lost(f"{what} {', '.join(names)}") from None
            finally:
                self._reading = -1
            for key, entries in (reply or {}).items():
                reader = boxes.get(key.decode() if isinstance(key, bytes) else key)
                if reader is not None:
                    reader.took(entries)
            if lost:
                await trio.sleep(RETRY_PAUSE)

    async def _learn_client_id(self, client: coredis.Redis[bytes]) -> int | None:
        from coredis.exceptions import ResponseError

        if not self._can_unblock:
            return None
        try:
            return int(await client.client_id())
        except ResponseError:  # CLIENT refused here: new mailboxes wait out the read
            self._can_unblock = False
            return None
