"""Faults on demand: the round trip of one injected crash through the control channel.

    python bench/faults.py [--count N]

A root supervisor holds a permanent worker and the run's control actor, on
file mailboxes (durability ``batch``, the default) and a file event log, as
in a run. Each round trip is one ``crash`` request from a sender's own
mailbox to the control actor, which records ``fault.injected``, crashes the
worker through its supervisor, waits for that incarnation to end and
answers; measured from the send to the answer taken (time.perf_counter).
The CLI's ``coterie crash`` adds an interpreter start and imports on top.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import trio

from coterie.actors import ActorContext
from coterie.control import CONTROL, control_spec
from coterie.events import EventLog
from coterie.mailbox import PostOffice
from coterie.supervisors import ChildSpec, Supervisor


async def _forever() -> None:
    await trio.sleep_forever()


async def round_trips(count: int) -> list[float]:
    """Seconds of each of *count* crash round trips."""
    root_dir = Path(tempfile.mkdtemp(prefix="coterie-bench-faults-"))
    post = PostOffice(root_dir / "mailboxes")
    events = EventLog(root_dir / "events.jsonl")
    work = Supervisor(
        "work", [ChildSpec("worker", _forever)], max_restarts=count + 1, period=1e9, events=events
    )
    control = control_spec(lambda: root, post, cancel=lambda: None, events=events)
    root = Supervisor("root", [work.as_child(), control], events=events)
    user = ActorContext(name="bench", mailbox=post.open("bench"), post=post)
    body = {"fault": "crash", "actor": "worker", "by": "bench"}
    times: list[float] = []
    async with trio.open_nursery() as nursery:
        await nursery.start(root.run)
        for _ in range(count):
            start = time.perf_counter()
            reply = await user.call(CONTROL, "inject", body, timeout=10)
            times.append(time.perf_counter() - start)
            assert reply.body["ok"], reply.body
        await root.stop()
    await post.aclose()
    events.close()
    return times


def main() -> None:
    """Print the median and p95 of the round trips."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200)
    count = parser.parse_args().count
    times = sorted(trio.run(round_trips, count))
    p95 = times[min(len(times) - 1, int(len(times) * 0.95))]
    print(
        f"crash round trip over the control channel, {count} faults:"
        f" median {statistics.median(times) * 1e3:.2f} ms, p95 {p95 * 1e3:.2f} ms"
    )


if __name__ == "__main__":
    main()
