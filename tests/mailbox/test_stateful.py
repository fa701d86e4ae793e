"""The file and Redis mailboxes under random sends, receives, acks, crashes and damage.

Invariants checked after every reopen and drain:

* no acknowledged message comes back;
* every message whose ``send`` returned, not acknowledged and not destroyed
  by the simulated damage, is delivered again;
* nothing is delivered that was never sent;
* messages from one sender arrive in the order they were sent.

The file machine damages its files (torn tails, flipped bytes, stray seals);
the Redis machine, which has no files, kills its receiving consumer instead
(a new one takes over its in-flight messages) and restarts the server (AOF
``always``: what was acknowledged stays acknowledged).
"""

from __future__ import annotations

import gc
import queue
import shutil
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest
import trio
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from coterie.backends.redis import RedisMailbox, open_redis_post_office
from coterie.backends.redis.client import parse_backend
from coterie.journal import SEAL, Record, is_seal, scan
from coterie.mailbox import Delivery, Durability, FileMailbox, PostOffice, open_file_mailbox
from coterie.mailbox._segments import list_segments, segment_path
from coterie.messages import Message
from tests.redis_server import LOSES_SERVER, RedisServer, redis_server

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterator

T = TypeVar("T")

SENDERS = ["a", "b", "c"]


class MailboxMachine(RuleBasedStateMachine):
    durability = Durability.NONE

    def __init__(self) -> None:
        super().__init__()
        self.tmp = Path(tempfile.mkdtemp(prefix="coterie-stateful-"))
        self.dir = self.tmp / "alice"
        self.sent: dict[str, tuple[str, int]] = {}  # id -> (sender, n) for returned sends
        self.counter = {s: 0 for s in SENDERS}
        self.serial = 0
        self.acked: set[str] = set()
        self.destroyed: set[str] = set()  # damaged by a flip, or torn while being written
        self.in_flight: list[Delivery] = []
        self.last_n: dict[str, int] = {}
        self.box: FileMailbox = self._open()

    def _open(self) -> FileMailbox:
        self.last_n = {}
        self.in_flight = []
        return open_file_mailbox(self.dir, durability=self.durability, segment_bytes=600)

    def teardown(self) -> None:
        self.box.close()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def _check_delivery(self, delivery: Delivery) -> None:
        m = delivery.message
        assert m.id in self.sent, "delivered a message that was never sent"
        assert m.id not in self.acked, "an acknowledged message came back"
        sender, n = self.sent[m.id]
        assert n > self.last_n.get(sender, -1), "order per sender broken"
        self.last_n[sender] = n

    @rule(sender=st.sampled_from(SENDERS))
    def send(self, sender: str) -> None:
        n = self.counter[sender]
        self.counter[sender] += 1
        # Fixed-size records (no clock, no random id) keep the segment layout,
        # and so Hypothesis's replays, deterministic.
        self.serial += 1
        message = Message(
            id=f"{self.serial:08d}-0000-7000-8000-000000000000",
            sender=sender,
            recipient="alice",
            kind="n",
            body={"n": n},
            sent_at=1.5,
        )
        trio.run(self.box.send, message)
        self.sent[message.id] = (sender, n)

    @rule()
    def receive(self) -> None:
        try:
            delivery = self.box.receive_nowait()
        except trio.WouldBlock:
            return
        self._check_delivery(delivery)
        self.in_flight.append(delivery)

    @precondition(lambda self: self.in_flight)
    @rule(data=st.data())
    def ack(self, data: st.DataObject) -> None:
        delivery = self.in_flight.pop(data.draw(st.integers(0, len(self.in_flight) - 1)))
        trio.run(self.box.ack, delivery)
        self.acked.add(delivery.message.id)

    @rule()
    def crash_and_reopen(self) -> None:
        """Process state dropped: nothing more is written, everything in memory is lost."""
        self.box.close()
        self.box = self._open()

    @rule(data=st.data())
    def crash_with_torn_tail(self, data: st.DataObject) -> None:
        """A crash in the middle of writing the newest record."""
        self.box.close()
        segments = list_segments(self.dir)
        if segments:
            path = segment_path(self.dir, segments[-1])
            raw = path.read_bytes()
            records = [r for r in scan(raw) if isinstance(r, Record) and not is_seal(r)]
            if records:
                last = records[-1]
                victim = Message.from_json_bytes(last.payload).id
                if victim not in self.acked:
                    cut = data.draw(st.integers(last.start + 1, last.end - 1))
                    with open(path, "r+b") as f:
                        f.truncate(cut)
                    # Its send never returned, as far as the invariants go.
                    self.destroyed.add(victim)
        self.box = self._open()

    @rule()
    def crash_after_sealing(self) -> None:
        """A writer killed between sealing the newest segment and creating the next."""
        self.box.close()
        segments = list_segments(self.dir)
        if segments:
            path = segment_path(self.dir, segments[-1])
            if not path.read_bytes().endswith(SEAL):
                with open(path, "ab") as f:
                    f.write(SEAL)
        self.box = self._open()

    @rule(data=st.data())
    def crash_with_flipped_byte(self, data: st.DataObject) -> None:
        """A byte of an old record goes bad while the process is down."""
        self.box.close()
        candidates = []
        for number in list_segments(self.dir):
            path = segment_path(self.dir, number)
            for r in scan(path.read_bytes()):
                if isinstance(r, Record):
                    candidates.append((path, r))
        if candidates:
            path, record = data.draw(st.sampled_from(candidates))
            raw = bytearray(path.read_bytes())
            at = data.draw(st.integers(record.start, record.end - 1))
            raw[at] ^= data.draw(st.integers(1, 255))
            path.write_bytes(bytes(raw))
            if not is_seal(record):  # a damaged seal loses no message
                self.destroyed.add(Message.from_json_bytes(record.payload).id)
        self.box = self._open()

    @rule()
    def drain_and_check(self) -> None:
        """Everything that must come back does; nothing that must not, does."""
        got = set()
        while True:
            try:
                delivery = self.box.receive_nowait()
            except trio.WouldBlock:
                break
            self._check_delivery(delivery)
            self.in_flight.append(delivery)
            got.add(delivery.message.id)
        held = {d.message.id for d in self.in_flight}
        must = set(self.sent) - self.acked - self.destroyed
        assert must <= held, f"lost {len(must - held)} unacknowledged messages"

    @invariant()
    def in_flight_are_unacknowledged(self) -> None:
        assert not ({d.message.id for d in self.in_flight} & self.acked)


MailboxMachine.TestCase.settings = settings(max_examples=150, stateful_step_count=40, deadline=None)
TestFileMailboxNone = MailboxMachine.TestCase


class AlwaysMachine(MailboxMachine):
    durability = Durability.ALWAYS


AlwaysMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=30, deadline=None)
TestFileMailboxAlways = AlwaysMachine.TestCase


class BatchMachine(MailboxMachine):
    durability = Durability.BATCH


BatchMachine.TestCase.settings = settings(max_examples=30, stateful_step_count=30, deadline=None)
TestFileMailboxBatch = BatchMachine.TestCase


# -- the same invariants on Redis ------------------------------------------------

_REDIS: list[RedisServer] = []


@pytest.fixture(scope="class")
def stateful_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A Redis server with AOF ``always`` for the Redis machine (restarted by a rule)."""
    with redis_server(tmp_path_factory.mktemp("redis-stateful"), appendonly=True) as server:
        _REDIS.append(server)
        yield
        _REDIS.remove(server)


class _Office:
    """A Redis post office held open by a task of the machine's Trio thread."""

    def __init__(self, post: PostOffice, done: trio.Event) -> None:
        self.post = post
        self.done = done


class RedisMailboxMachine(RuleBasedStateMachine):
    """The file machine's invariants, on a Redis mailbox driven from a Trio thread."""

    def __init__(self) -> None:
        super().__init__()
        self.server = _REDIS[-1]
        self.server.command("FLUSHALL")
        self.target = parse_backend(self.server.url)
        self.sent: dict[str, tuple[str, int]] = {}
        self.counter = {s: 0 for s in SENDERS}
        self.serial = 0
        self.acked: set[str] = set()
        self.in_flight: list[Delivery] = []
        self.last_n: dict[str, int] = {}
        self._token: queue.Queue[trio.lowlevel.TrioToken] = queue.Queue()
        self._stop: trio.Event | None = None
        self.crashed: list[BaseException] = []
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        self.token = self._token.get(timeout=10)
        self.office = self._run(self._open)
        self.box = self._open_box()

    def _loop(self) -> None:
        try:
            trio.run(self._serve)
        except BaseException as exc:  # shown by the rule that finds the loop gone
            self.crashed.append(exc)
            raise

    async def _serve(self) -> None:
        self._stop = trio.Event()
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            self._token.put(trio.lowlevel.current_trio_token())
            await self._stop.wait()
            nursery.cancel_scope.cancel()

    def _run(self, afn: Callable[..., Awaitable[T]], *args: object) -> T:
        try:
            return trio.from_thread.run(afn, *args, trio_token=self.token)
        except trio.RunFinishedError:
            self._thread.join(timeout=10)
            if self.crashed:
                raise self.crashed[0] from None
            raise

    async def _open(self) -> _Office:
        async def hold(task_status: trio.TaskStatus[_Office]) -> None:
            done = trio.Event()
            # Dead letters are test_redis_mailbox.py's: here nothing may leave.
            async with open_redis_post_office(
                self.target, "stateful", block=0.5, max_deliveries=1_000_000
            ) as post:
                task_status.started(_Office(post, done))
                await done.wait()

        office: _Office = await self.nursery.start(hold)
        return office

    def _open_box(self) -> RedisMailbox:
        box = trio.from_thread.run_sync(self.office.post.open, "alice", trio_token=self.token)
        assert isinstance(box, RedisMailbox)
        self._run(box.sync)
        return box

    async def _close(self) -> None:
        self.office.done.set()
        await trio.sleep(0)

    def teardown(self) -> None:
        self._run(self._close)
        assert self._stop is not None
        trio.from_thread.run_sync(self._stop.set, trio_token=self.token)
        self._thread.join(timeout=30)
        gc.collect()  # coredis's leak (LOSES_SERVER) is reported here, not later

    def _check_delivery(self, delivery: Delivery) -> None:
        m = delivery.message
        assert m.id in self.sent, "delivered a message that was never sent"
        assert m.id not in self.acked, "an acknowledged message came back"
        sender, n = self.sent[m.id]
        assert n > self.last_n.get(sender, -1), "order per sender broken"
        self.last_n[sender] = n

    @rule(sender=st.sampled_from(SENDERS))
    def send(self, sender: str) -> None:
        n = self.counter[sender]
        self.counter[sender] += 1
        message = Message.new(sender, "alice", "n", {"n": n})
        self._run(self.office.post.send, message)
        self.sent[message.id] = (sender, n)

    @rule()
    def receive(self) -> None:
        try:
            delivery = trio.from_thread.run_sync(self.box.receive_nowait, trio_token=self.token)
        except trio.WouldBlock:
            return
        self._check_delivery(delivery)
        self.in_flight.append(delivery)

    @precondition(lambda self: self.in_flight)
    @rule(data=st.data())
    def ack(self, data: st.DataObject) -> None:
        delivery = self.in_flight.pop(data.draw(st.integers(0, len(self.in_flight) - 1)))
        self._run(self.box.ack, delivery)
        self.acked.add(delivery.message.id)

    @rule()
    def requeue(self) -> None:
        """The actor restarted: what it held comes back, flagged as redelivered."""
        trio.from_thread.run_sync(self.box.requeue_in_flight, trio_token=self.token)
        self.in_flight = []
        self.last_n = {}

    @rule()
    def crash_and_reopen(self) -> None:
        """The receiving process dies; a new consumer opens the mailbox and takes over."""
        self._run(self._close)
        self.in_flight = []
        self.last_n = {}
        self.office = self._run(self._open)
        self.box = self._open_box()

    @rule()
    def restart_server(self) -> None:
        """kill -9 of the server and a restart from its AOF (``appendfsync always``)."""
        self.server.restart()
        self.last_n = {}
        self._run(self.box.sync)

    @rule()
    def drain_and_check(self) -> None:
        """Everything that must come back does; nothing that must not, does."""
        self._run(self.box.sync)
        while True:
            try:
                delivery = trio.from_thread.run_sync(self.box.receive_nowait, trio_token=self.token)
            except trio.WouldBlock:
                break
            self._check_delivery(delivery)
            self.in_flight.append(delivery)
        held = {d.message.id for d in self.in_flight}
        must = set(self.sent) - self.acked
        assert must <= held, f"lost {len(must - held)} unacknowledged messages"

    @invariant()
    def in_flight_are_unacknowledged(self) -> None:
        assert not ({d.message.id for d in self.in_flight} & self.acked)


RedisMailboxMachine.TestCase.settings = settings(
    max_examples=25, stateful_step_count=25, deadline=None
)
TestRedisMailbox = pytest.mark.usefixtures("stateful_redis")(
    LOSES_SERVER(RedisMailboxMachine.TestCase)
)
