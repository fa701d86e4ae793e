"""kill -9 a sending or receiving process at random moments, on files and on
Redis, with the same invariants: every send that returned survives, nothing is
delivered twice to one reader, and an acknowledged message never comes back
(on Redis, a killed receiver's in-flight messages are taken over by the next)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.backends.redis import open_redis_post_office
from coterie.backends.redis.client import parse_backend
from coterie.mailbox import Mailbox, open_file_mailbox
from coterie.messages import Message
from tests.mailbox.kill9_sender import NO_DEAD_LETTERS

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

Opened = tuple[Mailbox, "Callable[[Message], Awaitable[None]]"]

# 12 rounds per case in the suite; COTERIE_KILL9_ROUNDS=200 for a long soak.
ROUNDS = int(os.environ.get("COTERIE_KILL9_ROUNDS", "12"))
#: Messages queued for the receiver each round: more than it acknowledges
#: before most kills, so that most kills find messages in flight.
PER_ROUND = 150


def run_and_kill(argv: list[str], rng: random.Random, *, at_most: float = 0.15) -> list[str]:
    """Start a child, kill -9 it after a random delay; return the ids it printed."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.mailbox.kill9_sender", *argv],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(rng.uniform(0.0, at_most))
    os.kill(child.pid, signal.SIGKILL)
    # read(), not communicate(): lines that came with "ready" sit in the
    # stream's buffer, where communicate() (reading the pipe itself) misses them.
    with child.stdout:
        out = child.stdout.read()
    assert child.wait(timeout=30) == -signal.SIGKILL
    # The last line may itself be torn by the kill; only complete lines count.
    return [line for line in out.split("\n")[:-1] if line]


class Sink:
    """Where the children send to and receive from: a file mailbox or Redis."""

    def __init__(self, kind: str, directory: Path, redis_url: str | None) -> None:
        self.kind = kind
        self.directory = directory
        self.redis_url = redis_url

    def sender_argv(self, durability: str, senders: int) -> list[str]:
        if self.kind == "redis":
            assert self.redis_url is not None
            return ["redis", self.redis_url, "kill9", str(senders)]
        return [str(self.directory), durability, str(senders)]

    def receiver_argv(self) -> list[str]:
        if self.kind == "redis":
            assert self.redis_url is not None
            return ["receive-redis", self.redis_url, "kill9"]
        return ["receive-file", str(self.directory)]

    def opened(
        self,
    ) -> AbstractAsyncContextManager[Opened]:
        @asynccontextmanager
        async def opened() -> AsyncIterator[Opened]:
            if self.kind == "redis":
                assert self.redis_url is not None
                target = parse_backend(self.redis_url)
                async with open_redis_post_office(
                    target, "kill9", max_deliveries=NO_DEAD_LETTERS
                ) as post:
                    box = post.open("sink")
                    await box.sync()  # type: ignore[attr-defined]
                    yield box, post.send
                return
            box = open_file_mailbox(self.directory)
            try:
                yield box, box.send
            finally:
                box.close()

        return opened()


@pytest.fixture(params=["file", "redis"])
def sink(request: pytest.FixtureRequest, tmp_path: Path) -> Sink:
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    directory = tmp_path / "sink"
    if request.param == "redis":

        async def create() -> None:
            async with Sink("redis", directory, url).opened():
                pass

        trio.run(create)  # the mailbox exists before anyone sends to it
    return Sink(str(request.param), directory, url)


async def drain(box: Mailbox) -> list[str]:
    seen: list[str] = []
    while True:
        try:
            delivery = box.receive_nowait()
        except trio.WouldBlock:
            return seen
        seen.append(delivery.message.id)
        await box.ack(delivery)


@pytest.mark.slow
@pytest.mark.parametrize(("durability", "senders"), [("always", 1), ("batch", 8)])
def test_every_returned_send_survives_kill_9(sink: Sink, durability: str, senders: int) -> None:
    rng = random.Random(f"{sink.kind}-{durability}-{os.getpid()}")
    acknowledged: set[str] = set()
    total = 0
    for _ in range(ROUNDS):
        printed = run_and_kill(sink.sender_argv(durability, senders), rng)
        total += len(printed)

        async def check(printed: list[str]) -> None:
            async with sink.opened() as (box, _send):
                seen = await drain(box)
            assert len(seen) == len(set(seen)), "a message was delivered twice"
            assert not (set(seen) & acknowledged), "an acknowledged message came back"
            missing = set(printed) - set(seen)
            assert not missing, f"{len(missing)} of {len(printed)} returned sends lost"
            acknowledged.update(seen)

        trio.run(check, printed)
    assert total > ROUNDS  # the test really sent something
    # On Redis the policy is the server's (the sender is killed, not the server).
    policy = durability if sink.kind == "file" else "server's"
    print(
        f"kill -9 {sink.kind} {policy} x{senders}: {ROUNDS} rounds, "
        f"{total} returned sends, none lost"
    )


@pytest.mark.slow
def test_a_killed_receivers_messages_come_back_and_acked_ones_do_not(sink: Sink) -> None:
    rng = random.Random(f"{sink.kind}-receiver-{os.getpid()}")
    sent: set[str] = set()
    acked: set[str] = set()  # its ack returned
    unsure: set[str] = set()  # killed while acknowledging: may come back or not
    later = 0  # acknowledged by a later receiver than the one first sent to
    for _ in range(ROUNDS):
        fresh: set[str] = set()

        async def refill(fresh: set[str]) -> None:
            async with sink.opened() as (_box, send):
                for n in range(PER_ROUND):
                    message = Message.new("tester", "sink", "n", {"n": n})
                    await send(message)
                    sent.add(message.id)
                    fresh.add(message.id)

        trio.run(refill, fresh)
        printed = run_and_kill(sink.receiver_argv(), rng, at_most=0.4)
        taking = {line.split()[1] for line in printed if line.startswith("taking ")}
        done = {line.split()[1] for line in printed if line.startswith("acked ")}
        assert not (taking & acked), "an acknowledged message was delivered again"
        acked.update(done)
        later += len(done - fresh)
        unsure = (unsure | taking) - done
    remaining: list[str] = []

    async def collect() -> None:
        async with sink.opened() as (box, _send):
            remaining.extend(await drain(box))

    trio.run(collect)
    assert not (set(remaining) & acked), "an acknowledged message came back"
    assert set(remaining) <= sent - acked
    lost = sent - acked - unsure - set(remaining)
    assert not lost, f"{len(lost)} unacknowledged messages lost"
    print(
        f"kill -9 receiver {sink.kind}: {ROUNDS} rounds, {len(sent)} sent, {len(acked)} acked "
        f"({later} after a kill), {len(remaining)} left, none lost"
    )
