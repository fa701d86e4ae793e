"""File vs Redis backends, measured in the same run (issue 16).

    python bench/backends.py [--mailbox] [--board] [--quick]

Sections (all when none is named):
  --mailbox  send->receive latency p50/p99 (one receiver parked in receive(),
             one message at a time) and messages/s with 16 concurrent senders
             and one receiver acknowledging in batches; the file mailbox
             (policies batch and always) against Redis Streams (a local
             redis-server started here, AOF everysec and always).
  --board    task board claims/s with 8 worker processes draining 1000 tasks
             in chains of five: the file board against Redis (AOF off and
             always); bench/backends_board.py, which also runs alone.

Everything runs in one process on this machine: Redis's figures include the
loopback round trips, the file mailbox's its fsyncs.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import trio
import trio.testing

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from coterie.mailbox import Durability, PostOffice, RedisMailbox, open_redis_post_office
from coterie.messages import Message
from coterie.redisclient import parse_backend
from tests.redis_server import redis_server

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

BODY = {"text": "x" * 200}
SENDERS = 16


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def latency(post: PostOffice, count: int) -> tuple[float, float]:
    """p50 and p99 (ms) from the start of a send to the parked receiver's wake-up."""
    box = post.open("sink")
    if isinstance(box, RedisMailbox):
        await box.sync()  # the mailbox exists on the server before the clock starts
    samples: list[float] = []
    sent_at: list[float] = []

    async def receiver() -> None:
        delivery = await box.receive()
        samples.append(time.perf_counter() - sent_at[-1])
        await box.ack(delivery)

    for n in range(count):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(receiver)
            await trio.testing.wait_all_tasks_blocked(0.001)
            sent_at.append(time.perf_counter())
            await post.send(Message.new("bench", "sink", "n", {"n": n, **BODY}))
    return pct(samples, 0.5) * 1000, pct(samples, 0.99) * 1000


async def throughput(post: PostOffice, per_sender: int) -> float:
    """Messages/s: SENDERS senders, one receiver acknowledging each."""
    box = post.open("sink")
    if isinstance(box, RedisMailbox):
        await box.sync()  # the mailbox exists on the server before the clock starts
    total = SENDERS * per_sender
    start = time.perf_counter()

    async def sender(k: int) -> None:
        for n in range(per_sender):
            await post.send(Message.new(f"s{k}", "sink", "n", {"n": n, **BODY}))

    async with trio.open_nursery() as nursery:
        for k in range(SENDERS):
            nursery.start_soon(sender, k)
        received = 0
        while received < total:  # acknowledged in batches, as bench/mailbox.py does
            batch = [await box.receive()]
            with contextlib.suppress(trio.WouldBlock):
                while len(batch) < 64:
                    batch.append(box.receive_nowait())
            await box.ack(*batch)
            received += len(batch)
    return total / (time.perf_counter() - start)


def file_office(
    directory: Path, durability: Durability
) -> Callable[[], AbstractAsyncContextManager[PostOffice]]:
    @asynccontextmanager
    async def opened() -> AsyncIterator[PostOffice]:
        post = PostOffice(directory / f"mb-{time.monotonic_ns()}", durability=durability)
        try:
            yield post
        finally:
            await post.aclose()

    return opened


def redis_office(url: str) -> Callable[[], AbstractAsyncContextManager[PostOffice]]:
    def opened() -> AbstractAsyncContextManager[PostOffice]:
        return open_redis_post_office(parse_backend(url), f"bench-{time.monotonic_ns()}")

    return opened


async def mailbox_section(quick: bool, directory: Path) -> None:
    count = 100 if quick else 2000
    per_sender = 10 if quick else 250
    print(f"## mailbox: latency over {count} sends; {SENDERS} senders x {per_sender} messages")
    print(f"{'backend':<28} {'p50 ms':>8} {'p99 ms':>8} {'msgs/s x16':>11}")
    for sub in ("everysec", "always", "files"):
        (directory / sub).mkdir()
    with contextlib.ExitStack() as stack:
        everysec = stack.enter_context(
            redis_server(directory / "everysec", appendonly=True, appendfsync="everysec")
        )
        always = stack.enter_context(
            redis_server(directory / "always", appendonly=True, appendfsync="always")
        )
        cases = [
            ("file, batch", file_office(directory / "files", Durability.BATCH)),
            ("file, always", file_office(directory / "files", Durability.ALWAYS)),
            ("redis, aof everysec", redis_office(everysec.url)),
            ("redis, aof always", redis_office(always.url)),
        ]
        for label, make in cases:
            async with make() as post:
                p50, p99 = await latency(post, count)
            async with make() as post:
                rate = await throughput(post, per_sender)
            print(f"{label:<28} {p50:>8.3f} {p99:>8.3f} {rate:>11.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mailbox", action="store_true", help="the mailbox section")
    parser.add_argument("--board", action="store_true", help="the task board section")
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    args = parser.parse_args()
    everything = not (args.mailbox or args.board)
    with tempfile.TemporaryDirectory(prefix="coterie-bench-") as tmp:
        if args.mailbox or everything:
            trio.run(mailbox_section, args.quick, Path(tmp))
    if args.board or everything:
        from backends_board import board_section

        board_section(args.quick)


if __name__ == "__main__":
    main()
