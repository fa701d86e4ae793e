"""The conformance suite every backend passes: a backend is done when it does.

Each check is an async function of a :class:`Subject` (a backend and a
workspace) that drives the backend through its protocols only
(:mod:`coterie.backends.protocol`) and raises :class:`NonConformance`
saying what the backend did instead:

- **delivery**: a message sent by one process of the run reaches the
  mailbox's receiver in another, in order, each once;
- **acknowledgement**: an acknowledged message is never delivered again, even
  after the receiver closes and the mailbox is opened anew;
- **redelivery**: a message received and not acknowledged when its consumer
  died (its process gone) is delivered again, marked ``redelivered``;
- **board claims and leases**: two processes claiming the same tasks at once
  get each task exactly once; an expired lease returns its task;
- **catalogue**: a run held is listed, found by a unique prefix, and a name
  that is no run's is refused with one line;
- **replica order** (backends with a replica): appends reach the backend's
  copy of the run directory whole and in order;
- **event order**: the events a run emits reach a follower in order, each once;
- **holder killed**: a run held by a process killed with SIGKILL is seen not
  live at once, and another process can hold it.

``tests/backends/test_conformance.py`` runs every check on files, Redis and
Valkey; a new backend adds itself there (and to
:data:`coterie.backends.choice.PROVIDERS`). The kill -9 check runs a holder in
a child process: ``python -m coterie.backends.testing hold URL RUN_DIR``.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.backends.choice import Backend
from coterie.backends.protocol import ReadError
from coterie.backends.stores import open_stores
from coterie.events import EventLog
from coterie.messages import Message
from coterie.runs import UnknownRun, create_run

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from coterie.backends.protocol import RunStores
    from coterie.mailbox import Delivery

__all__ = ["CHECKS", "NonConformance", "Subject"]

#: Seconds a check waits for what a backend does in the background (a server's copy).
PATIENCE = 20.0


class NonConformance(AssertionError):
    """What a backend did that the protocol does not allow."""


def expect(condition: bool, said: str) -> None:
    """Raise :class:`NonConformance` saying *said* unless *condition* holds."""
    if not condition:
        raise NonConformance(said)


@attrs.frozen
class Subject:
    """The backend under test, and a workspace whose runs it keeps."""

    backend: Backend
    workdir: Path

    def new_run(self, command: str = "team") -> tuple[str, Path]:
        """A new run of the workspace (its signed config written), not started."""
        return create_run(self.workdir, {"command": command, "backend": self.backend.recorded})

    def stores(
        self, run_id: str, run_dir: Path, *, team: bool = True, holds_run: bool = True
    ) -> contextlib.AbstractAsyncContextManager[RunStores]:
        """The run's stores as a process of it opens them (the holder by default)."""
        return open_stores(
            self.backend, run_id, run_dir, EventLog(), team=team, holds_run=holds_run
        )


async def _eventually(
    what: Callable[[], Awaitable[bool]], said: str, patience: float = PATIENCE
) -> None:
    with trio.move_on_after(patience):
        while not await what():  # noqa: ASYNC110 - a backend's copy has no change event
            await trio.sleep(0.05)
        return
    raise NonConformance(said)


def _say(i: int) -> Message:
    return Message.new("lead", "alice", "text", {"text": f"m{i}"})


async def check_delivery(subject: Subject) -> None:
    """Messages sent from another process reach the receiver in order, each once."""
    run_id, run_dir = subject.new_run()
    async with subject.stores(run_id, run_dir) as mine:
        box = mine.post.open("alice")
        await box.sync()
        async with subject.stores(run_id, run_dir, holds_run=False) as theirs:
            expect("alice" in theirs.post, "another process does not know a mailbox just opened")
            for i in range(5):
                await theirs.post.send(_say(i))
        got: list[str] = []
        with trio.move_on_after(PATIENCE):
            while len(got) < 5:
                delivery = await box.receive()
                got.append(delivery.message.body["text"])
                await box.ack(delivery)
        expect(got == [f"m{i}" for i in range(5)], f"delivered {got}, not m0..m4 in order")
        await box.sync()
        with contextlib.suppress(trio.WouldBlock):
            extra = box.receive_nowait()
            raise NonConformance(f"delivered {extra.message.body} twice")


async def check_acknowledgement(subject: Subject) -> None:
    """An acknowledged message is not delivered again when the mailbox is reopened."""
    run_id, run_dir = subject.new_run()
    async with subject.stores(run_id, run_dir) as stores:
        box = stores.post.open("alice")
        await stores.post.send(_say(1))
        await stores.post.send(_say(2))
        first = await box.receive()
        await box.ack(first)
    async with subject.stores(run_id, run_dir) as stores:
        box = stores.post.open("alice")
        with trio.move_on_after(PATIENCE):
            again = await box.receive()
        expect(again.message.body == {"text": "m2"}, f"after a reopen got {again.message.body}")
        await box.ack(again)
        await box.sync()
        with contextlib.suppress(trio.WouldBlock):
            extra = box.receive_nowait()
            raise NonConformance(f"an acknowledged message came back: {extra.message.body}")


async def check_redelivery(subject: Subject) -> None:
    """Messages their consumer held unacknowledged when it died are delivered again,
    in order, marked ``redelivered``; one it acknowledged (out of order) is not."""
    run_id, run_dir = subject.new_run()
    async with subject.stores(run_id, run_dir) as stores:
        box = stores.post.open("alice")
        for i in range(4):
            await stores.post.send(_say(i))
        held = await box.receive()
        expect(not held.redelivered, "a first delivery is marked redelivered")
        await box.ack(await box.receive())  # m1, before m0: out of order
        # The consumer dies here: the stores close with m0 unacknowledged.
    async with subject.stores(run_id, run_dir) as stores:
        box = stores.post.open("alice")
        got: list[Delivery] = []
        with trio.move_on_after(PATIENCE):
            while len(got) < 3:
                got.append(await box.receive())
        texts = [d.message.body["text"] for d in got]
        expect(texts == ["m0", "m2", "m3"], f"after the consumer died: {texts}")
        expect(got[0].message.id == held.message.id, "another message came instead of m0")
        expect(got[0].redelivered, "a redelivery is not marked redelivered")


async def check_board_claims_and_leases(subject: Subject) -> None:
    """Two processes claiming at once get each task once; an expired lease returns it."""
    run_id, run_dir = subject.new_run()
    async with (
        subject.stores(run_id, run_dir) as one,
        subject.stores(run_id, run_dir, holds_run=False) as two,
    ):
        expect(one.board is not None and two.board is not None, "a team run has no board")
        assert one.board is not None
        assert two.board is not None
        for i in range(6):
            await one.board.create(f"task {i}", "")
        won: dict[str, list[str]] = {"one": [], "two": []}

        async def claim(name: str, board: Any) -> None:
            while (task := await board.claim(name, lease_seconds=60)) is not None:
                won[name].append(task.id)
                await trio.lowlevel.checkpoint()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(claim, "one", one.board)
            nursery.start_soon(claim, "two", two.board)
        claimed = sorted(won["one"] + won["two"])
        expect(len(claimed) == 6 and len(set(claimed)) == 6, f"claims: {won}")
        task = await one.board.create("leased", "")
        now = time.time()
        taken = await two.board.claim("two", lease_seconds=5, now=now)
        expect(taken is not None and taken.id == task.id, "the new task was not claimable")
        expect(await one.board.claim("one", lease_seconds=5, now=now + 1) is None,
               "a task under a live lease was claimed again")  # fmt: skip
        again = await one.board.claim("one", lease_seconds=5, now=now + 10)
        expect(again is not None and again.id == task.id, "an expired lease kept its task")


async def check_catalogue(subject: Subject) -> None:
    """A run held is listed and found by a unique prefix; a stranger's name is refused."""
    run_id, run_dir = subject.new_run()
    async with subject.backend.hold(run_id, run_dir):
        reader = subject.backend.reader(subject.workdir)
        listed = await trio.to_thread.run_sync(reader.runs)
        expect(run_id in [r.run_id for r in listed], f"{run_id} is not in {listed}")
        found = await trio.to_thread.run_sync(reader.find, run_id[:-4])
        expect(found.run_id == run_id, f"the prefix found {found.run_id}")
        expect(await trio.to_thread.run_sync(reader.is_run, run_id), "is_run says no")
        try:
            await trio.to_thread.run_sync(reader.find, "no-such-run")
        except (ReadError, UnknownRun) as exc:
            expect("\n" not in str(exc), "the refusal is more than one line")
        else:
            raise NonConformance("a name that is no run's was found")


async def check_replica_order(subject: Subject) -> None:
    """Appends to a log reach the backend's copy of the run directory whole, in order."""
    run_id, run_dir = subject.new_run()
    rel = "transcripts/alice.jsonl"
    async with subject.stores(run_id, run_dir) as stores:
        expect(stores.mirror is not None, "a backend with a replica opened none")
        assert stores.mirror is not None
        replica = stores.mirror.replica(rel)
        for i in range(50):
            replica.append(f'{{"n": {i}}}\n'.encode())
        await replica.flush()
    copy = await subject.backend.copy_of_run(run_id, run_dir, read=(rel,), bring=lambda _: False)
    want = "".join(f'{{"n": {i}}}\n' for i in range(50)).encode()
    expect(copy[rel] == want, f"the replica holds {copy[rel]!r:.80}")


async def check_event_order(subject: Subject) -> None:
    """The events a run emits reach a follower of it in order, each once."""
    run_id, run_dir = subject.new_run()
    events = EventLog(run_dir / "events.jsonl")
    async with open_stores(subject.backend, run_id, run_dir, events, team=False):
        for i in range(30):
            events.emit("team.message", sender="lead", recipient="alice", kind="text", text=f"{i}")
        async with subject.backend.open_source(subject.workdir, run_id) as source:
            seen: list[str] = []

            async def all_there() -> bool:
                seen.extend(str(e.data["text"]) for e in await source.events())
                return len(seen) >= 30

            await _eventually(all_there, f"the follower saw {len(seen)} of 30 events")
            expect(seen == [str(i) for i in range(30)], f"events in the order {seen}")


async def check_holder_killed(subject: Subject) -> None:
    """A holder killed with SIGKILL: the run is not live at once, and can be held again."""
    run_id, run_dir = subject.new_run()
    argv = [sys.executable, "-m", "coterie.backends.testing", "hold", subject.backend.name,
            str(run_dir)]  # fmt: skip
    child = await trio.lowlevel.open_process(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE)
    try:
        assert child.stdout is not None
        said = b""
        with trio.move_on_after(PATIENCE):
            while not said.endswith(b"\n"):
                chunk = await child.stdout.receive_some()
                if not chunk:
                    break
                said += chunk
        expect(said.strip() == b"held", f"the holder said {said!r}")
        address = await subject.backend.address(subject.workdir, run_id)
        expect(await address.live(), "a held run is not live")
        child.send_signal(signal.SIGKILL)
        await child.wait()

        async def let_go() -> bool:
            return not await address.live()

        await _eventually(let_go, "a run whose holder was killed stays live", patience=5.0)
        async with subject.backend.hold(run_id, run_dir):
            pass
    finally:
        with trio.CancelScope(shield=True):
            if child.returncode is None:
                child.kill()
                await child.wait()
            if child.stdout is not None:
                await child.stdout.aclose()


#: Every check, by name, with the capability it needs (None: every backend's).
CHECKS: dict[str, tuple[Callable[[Subject], Awaitable[None]], str | None]] = {
    "delivery": (check_delivery, None),
    "acknowledgement": (check_acknowledgement, None),
    "redelivery": (check_redelivery, None),
    "board claims and leases": (check_board_claims_and_leases, None),
    "catalogue": (check_catalogue, None),
    "replica order": (check_replica_order, "replica"),
    "event order": (check_event_order, None),
    "holder killed": (check_holder_killed, None),
}


async def _hold(url: str, run_dir: Path) -> None:
    backend = Backend.of_run(url)  # a password from $COTERIE_BACKEND, never argv
    async with backend.hold(run_dir.name, run_dir):
        print("held", flush=True)
        await trio.sleep_forever()


def main(argv: list[str]) -> int:
    """``python -m coterie.backends.testing hold URL RUN_DIR``: hold a run until killed."""
    from pathlib import Path

    if len(argv) != 3 or argv[0] != "hold":
        print("usage: python -m coterie.backends.testing hold URL RUN_DIR", file=sys.stderr)
        return 2
    trio.run(_hold, argv[1], Path(argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
