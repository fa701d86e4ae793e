"""Child process for the kill -9 test: send forever, print each id once send returned."""

from __future__ import annotations

import sys
from pathlib import Path

import trio

from coterie.mailbox import Durability, open_file_mailbox
from coterie.messages import Message


async def main(directory: Path, durability: Durability, senders: int) -> None:
    box = open_file_mailbox(directory, durability=durability, segment_bytes=4096)
    out = sys.stdout

    async def sender(k: int) -> None:
        n = 0
        while True:
            message = Message.new(f"s{k}", directory.name, "n", {"n": n, "pad": "x" * 50})
            await box.send(message)
            out.write(message.id + "\n")
            out.flush()
            n += 1

    print("ready", flush=True)
    async with trio.open_nursery() as nursery:
        for k in range(senders):
            nursery.start_soon(sender, k)


if __name__ == "__main__":
    trio.run(main, Path(sys.argv[1]), Durability(sys.argv[2]), int(sys.argv[3]))
