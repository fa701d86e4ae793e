"""The crash storm: a poison message exceeds a supervisor's restart intensity, and
the failure climbs the tree until the root gives up.

::

    root     (one_for_one, at most 1 restart in 60 s)
    ├── workers  (one_for_one, at most 3 restarts in 60 s)
    │   └── parser   crashes on job 2, every time
    └── steady   a sibling with nothing to do, untouched until the root gives up

The user sends the parser three jobs; job 2 cannot be parsed. The parser
crashes on it; ``workers`` restarts it; the job was never acknowledged, so the
new incarnation takes it again and crashes again: a crash loop, with job 3
waiting behind it. The fourth crash within the period is one more than
``workers`` allows: it gives up, stopping its child, and exits with reason
``shutdown``; the root takes that as its child failing
(``supervisor.escalated``) and restarts ``workers``, whose parser crashes four
times more. That second give-up exceeds the root's own intensity: the root
gives up too, stopping ``steady``, and the run ends, as an OTP application
whose top supervisor dies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from coterie.actors import Actor, ActorContext, actor_spec
from coterie.demos.lab import DEFAULT_PACE, Lab, open_lab
from coterie.messages import Message
from coterie.supervisors import Strategy, Supervisor

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

#: The tree as docs/lab.md draws it (its lab test checks the two agree).
INTRO = """\
root     (one_for_one, at most 1 restart in 60 s)
├── workers  (one_for_one, at most 3 restarts in 60 s)
│   └── parser   crashes on job 2, every time
└── steady   a sibling with nothing to do
job 2 is poison: the parser crashes on it every time it is delivered.
"""
JOBS = [("1 + 1", False), ("2 + ∞ (unparsable)", True), ("3 + 3", False)]
WORKERS_RESTARTS, ROOT_RESTARTS, PERIOD = 3, 1, 60.0


class Parser(Actor):
    """Parses jobs; a poison job makes it raise, as a bug would."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        job, text = message.body["job"], message.body["text"]
        if ctx.redelivered:
            ctx.emit("demo.note", step="redelivered", text=f"job {job} delivered again", job=job)
        await self.lab.step()
        if message.body["poison"]:
            raise ValueError(f"cannot parse job {job}: {text!r}")
        ctx.emit("demo.note", step="parsed", text=f"job {job} parsed: {text}", job=job)


class Idle(Actor):
    """An actor with nothing to do: it shows who else a failure reaches."""


def build(lab: Lab) -> Supervisor:
    """The demo's supervision tree."""
    workers = Supervisor(
        "workers",
        [actor_spec("parser", lambda _: Parser(lab), lab.post, events=lab.events)],
        strategy=Strategy.ONE_FOR_ONE,
        max_restarts=WORKERS_RESTARTS,
        period=PERIOD,
        events=lab.events,
    )
    return Supervisor(
        "root",
        [workers.as_child(), actor_spec("steady", lambda _: Idle(), lab.post, events=lab.events)],
        strategy=Strategy.ONE_FOR_ONE,
        max_restarts=ROOT_RESTARTS,
        period=PERIOD,
        events=lab.events,
    )


async def _main(console: Console, workdir: Path, pace: float) -> int:
    async with open_lab(console, workdir, "storm", pace, INTRO) as lab:

        async def send_jobs() -> None:
            for job, (text, poison) in enumerate(JOBS, start=1):
                body = {"job": job, "text": text, "poison": poison}
                await lab.post.send(Message.new("user", "parser", "job", body))
            # The storm ends the run (the root gives up); this is a bound, not a plan.
            await trio.sleep(PERIOD)

        gave_up = await lab.supervise(build(lab), send_jobs)
        crashes, gave = lab.count("actor.crashed"), lab.count("supervisor.gave_up")
        escalated = lab.count("supervisor.escalated")
        console.print()
        console.print(
            f"{crashes} crashes · {lab.count('actor.restarted')} restarts · {gave} give-ups · "
            f"{escalated} escalations · root: {gave_up or 'still running'}",
            markup=False,
            soft_wrap=True,
        )
        return lab.ended(0 if gave_up is not None else 1)


def run(console: Console, workdir: Path, pace: float | None = None) -> int:
    """Run the demo in *workdir* at *pace* seconds a step; returns the exit code."""
    return trio.run(_main, console, workdir, DEFAULT_PACE if pace is None else pace)
