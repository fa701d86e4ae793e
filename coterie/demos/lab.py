"""What the lab demos (``storm``, ``strategies``, ``shielded``, ``kill9``; docs/lab.md)
share: a run directory held as a live run, its event log and post office, a
narrator that prints each significant event as it happens, and the pace.

A lab demo is a real run: :func:`hold_lab_run` makes its run directory and
holds its lock for the whole demo (so ``coterie watch RUN_ID`` follows it
live and ``coterie runs`` lists it), printing the run id and workdir first,
and records it completed or failed as the demo ends (:mod:`coterie.demos.record`);
:func:`open_lab` adds the event log, the durable mailboxes and the narration.
Everything printed comes from the run's events.
"""

from __future__ import annotations

import contextlib
import shlex
import time
from collections import Counter
from typing import TYPE_CHECKING, Any

import attrs
import trio
from rich.markup import escape

from coterie.demos.record import DemoRun, demo_run
from coterie.errors import SupervisorGaveUp
from coterie.events import Event, EventLog
from coterie.mailbox import Durability, PostOffice
from coterie.ui.live import describe

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator
    from pathlib import Path

    from rich.console import Console

    from coterie.supervisors import Supervisor

#: The pace of a lab demo when ``--pace`` is not given: slow enough to follow.
DEFAULT_PACE = 1.0

_STYLES = {
    "actor.crashed": "bold red",
    "supervisor.gave_up": "bold red",
    "supervisor.escalated": "bold red",
    "actor.restarted": "yellow",
    "actor.abandoned": "red",
    "actor.started": "green",
    "demo.note": "cyan",
}


def narration(event: Event) -> str | None:
    """The line a lab demo prints for *event* (None for an event not worth a line)."""
    d = event.data
    who = d.get("actor")
    match event.type:
        case "actor.started" if d.get("attempt", 0) == 0:
            return f"▶ {who} started (under {d.get('supervisor')})"
        case "actor.started":
            return f"▶ {who} running again (incarnation {d.get('attempt', 0) + 1})"
        case "actor.stopped" if not d.get("reason"):
            return f"■ {who} stopped"
        case "actor.exited":
            return f"■ {who} exited{': ' + d['reason'] if d.get('reason') else ''}"
        case "supervisor.stopped":
            return f"■ supervisor {d.get('supervisor')} stopped: {d.get('reason')}"
    return describe(event)


@attrs.frozen
class Lab:
    """One lab run: where it lives, its event log and mailboxes, and its pace."""

    run: DemoRun
    workdir: Path
    events: EventLog
    post: PostOffice
    pace: float

    async def step(self, paces: float = 1.0) -> None:
        """Wait *paces* steps of the demo's pace (at pace 0, just a checkpoint)."""
        await trio.sleep(self.pace * paces)

    def ended(self, code: int) -> int:
        """The demo ends with exit code *code*: its run is recorded completed for 0, else
        failed (see :meth:`DemoRun.ended`); returns *code*."""
        return self.run.ended(code)

    def note(self, actor: str, step: str, text: str, job: int | None = None) -> None:
        """Record what the demo itself did (an event of the log, narrated like any)."""
        self.events.emit("demo.note", actor=actor, step=step, text=text, job=job)

    def count(self, type: str, **where: Any) -> int:
        """How many events of *type* (with the fields *where*) the run has had."""
        return sum(
            1
            for e in self.events.history
            if e.type == type and all(e.data.get(k) == v for k, v in where.items())
        )

    async def supervise(
        self, root: Supervisor, main: Callable[[], Awaitable[None]]
    ) -> SupervisorGaveUp | None:
        """Run the tree *root* while *main* runs, then stop it; the root's give-up
        if it gave up first (which ends *main*)."""
        gave_up: list[SupervisorGaveUp] = []
        async with trio.open_nursery() as nursery:

            async def tree(
                *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
            ) -> None:
                try:
                    await root.run(task_status=task_status)
                except SupervisorGaveUp as exc:
                    gave_up.append(exc)
                    nursery.cancel_scope.cancel()

            await nursery.start(tree)
            await main()
            await root.stop()
        return gave_up[0] if gave_up else None


@contextlib.contextmanager
def hold_lab_run(
    console: Console, workdir: Path, demo: str, pace: float, intro: str
) -> Iterator[DemoRun]:
    """Make the demo's run and hold it live while the block runs (see
    :func:`~coterie.demos.record.demo_run`: recorded completed if the block ends
    with ``run.ended(0)``, else failed), printing its id and workdir first."""
    with demo_run(workdir, demo, pace=pace) as run:
        # Whole lines, never wrapped: a path and a command are copied from them.
        console.print(f"[bold]coterie demo {demo}[/] — run [cyan]{run.run_id}[/]", soft_wrap=True)
        console.print(f"workdir: {escape(str(workdir))}", soft_wrap=True)
        console.print(
            f"[dim]watch it from another terminal: coterie watch {run.run_id}"
            f" --workdir {escape(shlex.quote(str(workdir)))}[/]",
            soft_wrap=True,
        )
        console.print(intro)
        yield run


def print_event(console: Console, event: Event, start: float) -> None:
    """Print *event*'s narration line (if any), stamped with the seconds since *start*."""
    line = narration(event)
    if line is not None:
        stamp = f"{time.monotonic() - start:6.2f}s  "
        console.print(
            stamp + line, style=_STYLES.get(event.type, ""), markup=False, highlight=False
        )


@contextlib.asynccontextmanager
async def open_lab(
    console: Console, workdir: Path, demo: str, pace: float, intro: str
) -> AsyncIterator[Lab]:
    """A lab run (see :func:`hold_lab_run`) with its event log, durable mailboxes and
    narration, closed when the block ends."""
    with hold_lab_run(console, workdir, demo, pace, intro) as run:
        events = EventLog(run.run_dir / "events.jsonl")
        post = PostOffice(run.run_dir / "mailboxes", durability=Durability.BATCH, events=events)
        lab = Lab(run, workdir, events, post, pace)
        start = time.monotonic()
        try:
            with events.listen(lambda event: print_event(console, event, start)):
                yield lab
        finally:
            with trio.CancelScope(shield=True):
                await post.aclose()
            events.close()
        console.print(f"event log: {run.run_dir / 'events.jsonl'}")


def tally(events: Iterable[Event]) -> Counter[str]:
    """How many events of each type."""
    return Counter(e.type for e in events)
