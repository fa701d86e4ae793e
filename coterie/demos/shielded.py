"""A shielded clean-up: the run is cancelled while actors work, and their clean-ups,
shielded from the cancellation, run to their end; the shutdown timeout decides
whether the supervisor waits for one.

Two actors write a document in steps. Mid-way, the run is cancelled (as
Ctrl-C cancels a run: the cancel scope around the supervision tree). Trio
delivers ``Cancelled`` at each actor's next checkpoint; its ``finally`` block
runs its clean-up inside ``trio.CancelScope(shield=True)``, so the awaits of
the clean-up (flushing and closing) are not cancelled in turn. The supervisor
stops its children one by one in reverse start order, waiting for each up to
its ``shutdown_timeout``:

- ``hasty``'s timeout is shorter than its clean-up: it is reported
  ``actor.abandoned`` when the timeout passes, and its clean-up finishes
  later, in the background (a task cannot be killed; it can be left);
- ``saver``'s timeout is longer than its clean-up: the clean-up finishes,
  then the saver is reported stopped.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import trio

from coterie.actors import Actor, ActorContext, actor_spec
from coterie.demos.lab import DEFAULT_PACE, Lab, open_lab
from coterie.messages import Message
from coterie.supervisors import ChildSpec, Supervisor

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

INTRO = """\
root (one_for_one) ─┬─ saver  shutdown_timeout longer than its clean-up
                    └─ hasty  shutdown_timeout shorter than its clean-up
the run is cancelled while both write; their clean-ups are shielded.
"""
CLEANUP_STEPS = 3
WORK_BEFORE_CANCEL = 2  # steps of work before the run is cancelled
HASTY_STEP = 0.1  # hasty's clean-up steps take at least this long, even at pace 0


class Writer(Actor):
    """Writes a document step by step; on any exit, flushes and closes it, shielded.
    Each clean-up step takes *step* seconds; *cleaned* is set at the end."""

    def __init__(self, lab: Lab, step: float, working: trio.Event, cleaned: trio.Event) -> None:
        self.lab, self.step, self.working, self.cleaned = lab, step, working, cleaned

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        part = 0
        try:
            self.working.set()
            while True:
                part += 1
                ctx.emit("demo.note", step="writing", text=f"writing part {part}", job=part)
                await trio.sleep(self.lab.pace or math.inf)
        finally:
            with trio.CancelScope(shield=True):
                await self._clean_up(ctx, part)

    async def _clean_up(self, ctx: ActorContext, parts: int) -> None:
        ctx.emit("demo.note", step="cleanup_started", text="cancelled: clean-up starts (shielded)")
        for n in range(1, CLEANUP_STEPS + 1):
            await trio.sleep(self.step)
            what = f"clean-up {n}/{CLEANUP_STEPS}: flushing part {min(n, parts)}"
            ctx.emit("demo.note", step="cleanup_step", text=what)
        ctx.emit("demo.note", step="cleanup_finished", text="clean-up finished: file closed")
        self.cleaned.set()


async def _main(console: Console, workdir: Path, pace: float) -> int:
    async with open_lab(console, workdir, "shielded", pace, INTRO) as lab:
        hasty_step = max(pace, HASTY_STEP)
        steps = {"saver": pace, "hasty": hasty_step}
        timeouts = {"saver": CLEANUP_STEPS * pace * 2 + 5.0, "hasty": round(hasty_step * 1.5, 3)}
        working = {name: trio.Event() for name in steps}
        cleaned = {name: trio.Event() for name in steps}

        def spec(name: str) -> ChildSpec:
            return actor_spec(
                name,
                lambda _: Writer(lab, steps[name], working[name], cleaned[name]),
                lab.post,
                events=lab.events,
                shutdown_timeout=timeouts[name],
            )

        root = Supervisor("root", [spec("saver"), spec("hasty")], events=lab.events)
        async with trio.open_nursery() as nursery:
            await nursery.start(root.run)
            for name in steps:
                await lab.post.send(Message.new("user", name, "save", {"document": f"{name}.md"}))
                await working[name].wait()
            await lab.step(WORK_BEFORE_CANCEL)
            lab.note("user", "cancel", "the run is cancelled (as Ctrl-C would)")
            nursery.cancel_scope.cancel()
        with trio.move_on_after(30):  # hasty's clean-up goes on, in the background
            await cleaned["hasty"].wait()
        saver_ok = _in_order(lab, "cleanup_finished", "actor.stopped", "saver")
        hasty_ok = _in_order(lab, "actor.abandoned", "cleanup_finished", "hasty")
        console.print()
        console.print(
            f"saver: clean-up finished, then stopped: {'yes' if saver_ok else 'no'} · "
            f"hasty: abandoned after {timeouts['hasty']:g}s, its clean-up finished in the "
            f"background: {'yes' if hasty_ok else 'no'}",
            style="bold",
            soft_wrap=True,
        )
        return lab.ended(0 if saver_ok and hasty_ok else 1)


def _in_order(lab: Lab, first: str, then: str, actor: str) -> bool:
    """Whether *actor* had an event (or demo step) *first* before one *then*."""
    seen = [
        e.data.get("step") if e.type == "demo.note" else e.type
        for e in lab.events.history
        if e.data.get("actor") == actor
    ]
    return first in seen and then in seen and seen.index(first) < seen.index(then)


def run(console: Console, workdir: Path, pace: float | None = None) -> int:
    """Run the demo in *workdir* at *pace* seconds a step; returns the exit code."""
    return trio.run(_main, console, workdir, DEFAULT_PACE if pace is None else pace)
