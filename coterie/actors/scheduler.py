"""The Scheduler (``--loop SPEC``): runs the Lead's prompt again and again.

Theory of operation. The user's ``loop`` request (body ``{"spec"}``) goes to
the scheduler, which answers it when the loop ends. Each tick sends the Lead
a ``prompt`` whose id is fixed by the request and the tick number
(``<request>.tick.<n>``), so that a tick sent again after a crash or a resume
is the same request to the Lead, which goes on with it from its transcript.
A fixed loop (an interval in the spec) waits the interval between ticks. A
dynamic loop runs again only if the Lead called ``ScheduleWakeup`` in the tick
(its delay clamped to 60..3600 s, its prompt the next tick's); a tick without
it ends the loop, converged. The tick cap and ``--max-turns`` (over all
ticks) bound every loop; a tick that fails ends it.

The schedule is durable: ``schedule.json`` in the run directory holds the
ticks done, the turns spent, the next prompt and when it is due (wall-clock
time), replaced atomically after each tick; a resumed run keeps its
schedule. ``COTERIE_TIME_SCALE`` (default 1) multiplies every wait, for
demonstrations and tests.
"""

from __future__ import annotations

import json
import math
import os
import time
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.actors._actor import Actor, actor_spec
from coterie.actors.lead import PROMPT, RESULT
from coterie.agent import RunResult
from coterie.autonomy import parse_loop_spec
from coterie.fsutil import atomic_write

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.actors._context import ActorContext
    from coterie.events import EventLog
    from coterie.mailbox import PostOffice
    from coterie.messages import Message
    from coterie.supervisors import ChildSpec

SCHEDULER = "scheduler"
LOOP = "loop"


@attrs.define
class Schedule:
    """Where a loop stands (``schedule.json``)."""

    request: str
    ticks: int = 0
    turns: int = 0
    #: What the run has cost so far (the Lead's running total after the last tick).
    cost: float = 0.0
    prompt: str = ""
    due: float = 0.0

    @classmethod
    def load(cls, path: Path, request: str, prompt: str) -> Schedule:
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return cls(request=request, prompt=prompt, due=time.time())
        if data.get("request") != request:
            return cls(request=request, prompt=prompt, due=time.time())
        return cls(**data)

    def save(self, path: Path) -> None:
        atomic_write(path, json.dumps(attrs.asdict(self)).encode(), sync=True)


class Scheduler(Actor):
    """Answers a ``loop`` request with the loop's outcome (see the module docstring)."""

    def __init__(
        self, run_dir: Path, *, max_ticks: int = 100, max_turns: int | None = None
    ) -> None:
        self.path = run_dir / "schedule.json"
        self.max_ticks = max_ticks
        self.max_turns = max_turns
        self.scale = float(os.environ.get("COTERIE_TIME_SCALE", "1") or 1)

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind != LOOP:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
            return
        spec = parse_loop_spec(str(message.body["spec"]))
        schedule = Schedule.load(self.path, message.id, spec.prompt)
        started = time.monotonic()
        result, why = await self._run(ctx, spec.interval, schedule)
        duration_ms = int((time.monotonic() - started) * 1000)
        ctx.emit("loop.ended", ticks=schedule.ticks, reason=why)
        text = f"{result.result}\n\nLoop ended after {schedule.ticks} tick(s): {why}.".strip()
        final = attrs.evolve(
            result,
            result=text,
            num_turns=schedule.turns,
            total_cost_usd=schedule.cost,
            duration_ms=duration_ms,  # the whole loop in this process, waits included
        )
        await ctx.reply(message, RESULT, final.to_dict())

    async def _run(
        self, ctx: ActorContext, interval: int | None, schedule: Schedule
    ) -> tuple[RunResult, str]:
        result: RunResult | None = None
        while True:
            if schedule.ticks >= self.max_ticks:
                return _last(result), f"the tick cap ({self.max_ticks}) was reached"
            wait = max(0.0, schedule.due - time.time())
            if wait:
                ctx.emit("loop.waiting", seconds=round(wait, 3), tick=schedule.ticks + 1)
                await trio.sleep(wait * self.scale)
            tick = schedule.ticks + 1
            ctx.emit("loop.tick", tick=tick, prompt=schedule.prompt)
            body = await self._tick(ctx, f"{schedule.request}.tick.{tick}", schedule.prompt)
            result = RunResult.from_dict(body)
            schedule.ticks, schedule.turns = tick, schedule.turns + result.num_turns
            schedule.cost = result.total_cost_usd  # the Lead's running total: all ticks
            if result.is_error:
                schedule.save(self.path)
                return result, f"tick {tick} failed ({result.subtype})"
            if self.max_turns is not None and schedule.turns >= self.max_turns:
                schedule.save(self.path)
                return result, f"the limit of {self.max_turns} turns was reached"
            wakeup = body.get("wakeup")
            if interval is not None:
                schedule.due = time.time() + interval
            elif wakeup is None:
                schedule.save(self.path)
                return result, "converged (no wake-up was scheduled)"
            else:
                schedule.due = time.time() + float(wakeup["delaySeconds"])
                schedule.prompt = wakeup.get("prompt") or schedule.prompt
            schedule.save(self.path)

    async def _tick(self, ctx: ActorContext, tick_id: str, prompt: str) -> dict[str, Any]:
        reply = await ctx.call("lead", PROMPT, {"text": prompt}, id=tick_id, timeout=math.inf)
        body: dict[str, Any] = reply.body
        return body


def _last(result: RunResult | None) -> RunResult:
    if result is not None:
        return result
    from coterie.models import Usage

    return RunResult("", False, "success", 0, Usage(), 0.0, 0)


def scheduler_spec(
    post: PostOffice,
    run_dir: Path,
    *,
    max_ticks: int = 100,
    max_turns: int | None = None,
    events: EventLog | None = None,
) -> ChildSpec:
    """The ``services`` child that runs the :class:`Scheduler`."""
    return actor_spec(
        SCHEDULER,
        lambda _: Scheduler(run_dir, max_ticks=max_ticks, max_turns=max_turns),
        post,
        events=events,
    )


__all__ = ["LOOP", "SCHEDULER", "Schedule", "Scheduler", "scheduler_spec"]
