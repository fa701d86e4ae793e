"""A shielded clean-up: the run is cancelled while an actor works, and the actor's
clean-up, shielded from the cancellation, finishes before the actor stops.

The saver writes a document in steps. Mid-way, the run is cancelled (as
Ctrl-C cancels a run: the cancel scope around the supervision tree). Trio
delivers ``Cancelled`` at the saver's next checkpoint; its ``finally`` block
runs its clean-up inside ``trio.CancelScope(shield=True)``, so the awaits of
the clean-up (flushing and closing) are not cancelled in turn. Its supervisor
waits for it up to the child's ``shutdown_timeout`` (longer than the
clean-up here); the clean-up finishes, then the actor is reported stopped. A
clean-up that outlived the timeout would be reported ``abandoned`` instead
(docs/lab.md).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import trio

from coterie.actors import Actor, ActorContext, actor_spec
from coterie.demos.lab import DEFAULT_PACE, Lab, open_lab
from coterie.messages import Message
from coterie.supervisors import Supervisor

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

INTRO = """\
root (one_for_one) ── saver (shutdown_timeout: longer than its clean-up)
the run is cancelled while the saver writes; its clean-up is shielded.
"""
CLEANUP_STEPS = 3
WORK_BEFORE_CANCEL = 2  # steps of work the saver does before the run is cancelled


class Saver(Actor):
    """Writes a document step by step; on any exit, flushes and closes it, shielded."""

    def __init__(self, lab: Lab, working: trio.Event) -> None:
        self.lab, self.working = lab, working

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
            await self.lab.step()
            what = f"clean-up {n}/{CLEANUP_STEPS}: flushing part {min(n, parts)}"
            ctx.emit("demo.note", step="cleanup_step", text=what)
        ctx.emit("demo.note", step="cleanup_finished", text="clean-up finished: file closed")


async def _main(console: Console, workdir: Path, pace: float) -> int:
    async with open_lab(console, workdir, "shielded", pace, INTRO) as lab:
        working = trio.Event()
        timeout = CLEANUP_STEPS * pace * 2 + 5.0
        saver = actor_spec(
            "saver", lambda _: Saver(lab, working), lab.post, events=lab.events,
            shutdown_timeout=timeout,
        )  # fmt: skip
        root = Supervisor("root", [saver], events=lab.events)
        async with trio.open_nursery() as nursery:
            await nursery.start(root.run)
            await lab.post.send(Message.new("user", "saver", "save", {"document": "notes.md"}))
            await working.wait()
            await lab.step(WORK_BEFORE_CANCEL)
            lab.note("user", "cancel", "the run is cancelled (as Ctrl-C would)")
            nursery.cancel_scope.cancel()
        finished = lab.count("demo.note", step="cleanup_finished")
        stopped = lab.count("actor.stopped", actor="saver")
        console.print()
        console.print(
            f"clean-up finished: {'yes' if finished else 'no'} · saver stopped after it: "
            f"{'yes' if stopped and _in_order(lab) else 'no'}",
            style="bold",
            soft_wrap=True,
        )
    return 0 if finished and stopped else 1


def _in_order(lab: Lab) -> bool:
    """Whether the saver was reported stopped after its clean-up finished."""
    history = list(lab.events.history)
    finished = [i for i, e in enumerate(history) if e.data.get("step") == "cleanup_finished"]
    stopped = [
        i
        for i, e in enumerate(history)
        if e.type == "actor.stopped" and e.data.get("actor") == "saver"
    ]
    return bool(finished and stopped) and finished[0] < stopped[0]


def run(console: Console, workdir: Path, pace: float | None = None) -> int:
    """Run the demo in *workdir* at *pace* seconds a step; returns the exit code."""
    return trio.run(_main, console, workdir, DEFAULT_PACE if pace is None else pace)
