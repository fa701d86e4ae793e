"""Child process for the kill -9 tests: send forever (printing each id once its
send returned), or receive forever (printing each id once its ack returned).

``python -m tests.mailbox.kill9_sender DIR DURABILITY SENDERS`` sends to the
file mailbox DIR; ``... redis URL RUN SENDERS`` sends to actor ``sink`` on
Redis; ``... receive-file DIR`` and ``... receive-redis URL RUN`` receive
(printing ``taking ID`` before each ack and ``acked ID`` once it returned).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import trio

from coterie.backends.redis import open_redis_post_office
from coterie.backends.redis.client import parse_backend
from coterie.mailbox import Durability, open_file_mailbox
from coterie.messages import Message

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.mailbox import Mailbox


async def send_forever(send: Callable[[Message], Awaitable[None]], to: str, senders: int) -> None:
    out = sys.stdout

    async def sender(k: int) -> None:
        n = 0
        while True:
            message = Message.new(f"s{k}", to, "n", {"n": n, "pad": "x" * 50})
            await send(message)
            out.write(message.id + "\n")
            out.flush()
            n += 1

    print("ready", flush=True)
    async with trio.open_nursery() as nursery:
        for k in range(senders):
            nursery.start_soon(sender, k)


async def receive_forever(box: Mailbox) -> None:
    print("ready", flush=True)
    while True:
        delivery = await box.receive()
        sys.stdout.write(f"taking {delivery.message.id}\n")
        sys.stdout.flush()
        await box.ack(delivery)
        sys.stdout.write(f"acked {delivery.message.id}\n")
        sys.stdout.flush()


#: Every opening counts as a delivery of what it takes over; these tests check
#: that nothing is lost, so nothing may go to the dead letters.
NO_DEAD_LETTERS = 1_000_000


async def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "redis":
        async with open_redis_post_office(parse_backend(argv[1]), argv[2]) as post:
            await send_forever(post.send, "sink", int(argv[3]))
    elif mode == "receive-redis":
        target = parse_backend(argv[1])
        async with open_redis_post_office(target, argv[2], max_deliveries=NO_DEAD_LETTERS) as post:
            await receive_forever(post.open("sink"))
    elif mode == "receive-file":
        await receive_forever(open_file_mailbox(Path(argv[1])))
    else:
        directory = Path(mode)
        box = open_file_mailbox(directory, durability=Durability(argv[1]), segment_bytes=4096)
        await send_forever(box.send, directory.name, int(argv[2]))


if __name__ == "__main__":
    trio.run(main, sys.argv[1:])
