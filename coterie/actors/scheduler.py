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

An ``interrupt`` naming the loop request (the user's Ctrl-C in a
conversation's ``/loop``) stops the loop: the running tick's turn is
interrupted (the scheduler sends the Lead an ``interrupt`` for that tick, so
the history records it as any interrupted turn), a wait is cut short, and
no tick follows; the loop's result is ``error_interrupted``.

Cron jobs. Beside its loop the scheduler fires the run's cron jobs (the
table in ``cron.json``, :mod:`coterie.tools.cronbook`, kept by the Cron*
tools): a due job is a ``prompt`` to the Lead whose id is fixed by the job
and the fire (``cron.<job>.<n>``, so a fire sent again after a crash or a
resume is the same request), sent only once the previous fire was answered
(so fires never pile up while the Lead is busy: they wait for it, as Claude
Code's wait for the session to be idle); then the table is updated (a
one-shot job deleted, a recurring one due at its next time). The table is
read again every :data:`CRON_POLL` seconds, which is how a job just created
is seen. Cron times are wall-clock; ``COTERIE_TIME_SCALE`` runs the
scheduler's cron clock that much faster from the moment it starts.
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
from coterie.actors.lead import INTERRUPT, PROMPT, RESULT
from coterie.agent import RunResult
from coterie.autonomy import (
    Schedule,
    Stop,
    TickMachine,
    TickOutcome,
    Wait,
    parse_loop_spec,
)
from coterie.fsutil import atomic_write
from coterie.tools.cronbook import load_book, save_book

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from coterie.actors._context import ActorContext
    from coterie.events import EventLog
    from coterie.mailbox import PostOffice
    from coterie.messages import Message
    from coterie.supervisors import ChildSpec

SCHEDULER = "scheduler"
LOOP = "loop"
#: Seconds (of the cron clock) between two reads of the cron table.
CRON_POLL = 5.0


def load_schedule(path: Path, request: str, prompt: str) -> Schedule:
    """The loop's place from ``schedule.json``, or a fresh one due now."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return Schedule(request=request, prompt=prompt, due=time.time())
    if data.get("request") != request:
        return Schedule(request=request, prompt=prompt, due=time.time())
    return Schedule(**data)


def save_schedule(path: Path, schedule: Schedule) -> None:
    atomic_write(path, json.dumps(attrs.asdict(schedule)).encode(), sync=True)


class Scheduler(Actor):
    """Answers a ``loop`` request with the loop's outcome (see the module docstring)."""

    def __init__(
        self,
        run_dir: Path,
        *,
        max_ticks: int = 100,
        max_turns: int | None = None,
        cron_clock: Callable[[], float] | None = None,
    ) -> None:
        self.run_dir = run_dir
        self.path = run_dir / "schedule.json"
        self.max_ticks = max_ticks
        self.max_turns = max_turns
        self.scale = float(os.environ.get("COTERIE_TIME_SCALE", "1") or 1)
        # A scale of 0 (a loop's waits skipped) would stop the cron clock's arithmetic
        # and spin its polling: cron jobs keep real time then.
        self.cron_scale = self.scale if self.scale > 0 else 1.0
        #: The cron jobs' clock (a POSIX time); default a :class:`CronClock`.
        self.cron_now = cron_clock or CronClock(self.cron_scale).now
        # Cron fires waiting for their result, by prompt id (the reply may reach
        # the receive loop first: see on_late_reply).
        self._fires: dict[str, trio.Event] = {}

    async def run(self, ctx: ActorContext) -> None:
        """The receive loop, with the cron jobs fired beside it."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._cron, ctx)
            await super().run(ctx)
            nursery.cancel_scope.cancel()

    async def on_late_reply(self, ctx: ActorContext, message: Message) -> None:
        waiting = self._fires.get(message.correlation_id or "")
        if waiting is None:
            await super().on_late_reply(ctx, message)
        else:
            waiting.set()

    async def _cron(self, ctx: ActorContext) -> None:
        """Fire due cron jobs, one at a time, for as long as the scheduler runs."""
        while True:
            book = load_book(self.run_dir)
            now = self.cron_now()
            job = book.due(now)
            if job is None:
                due = book.next_due()
                wait = CRON_POLL if due is None else min(CRON_POLL, due - now)
                await trio.sleep(max(wait, 0.0) * self.cron_scale)
                continue
            ctx.emit("cron.fired", job=job.id, prompt=job.next_prompt_id)
            await self._fire(ctx, job.next_prompt_id, job.prompt)
            save_book(self.run_dir, load_book(self.run_dir).fired(job.id, self.cron_now()))

    async def _fire(self, ctx: ActorContext, prompt_id: str, text: str) -> None:
        """Send the Lead the prompt and wait for its result, taken here or by the
        receive loop (whichever sees it first)."""
        answered = self._fires[prompt_id] = trio.Event()
        try:
            await ctx.post.send(ctx.request("lead", PROMPT, {"text": text}, id=prompt_id))
            async with trio.open_nursery() as nursery:

                async def take() -> None:
                    await ctx.done(await ctx.reply_for(prompt_id))
                    answered.set()

                nursery.start_soon(take)
                await answered.wait()
                nursery.cancel_scope.cancel()
        finally:
            del self._fires[prompt_id]

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind == INTERRUPT:
            return  # its loop ended before it arrived
        if message.kind != LOOP:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
            return
        spec = parse_loop_spec(str(message.body["spec"]))
        machine = TickMachine(
            load_schedule(self.path, message.id, spec.prompt),
            spec.interval,
            max_ticks=self.max_ticks,
            max_turns=self.max_turns,
        )
        started = time.monotonic()
        stop = _Interrupt()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._watch, ctx, message.id, stop)
            result, why = await self._run(ctx, machine, stop)
            nursery.cancel_scope.cancel()
        schedule = machine.schedule
        duration_ms = int((time.monotonic() - started) * 1000)
        if stop.asked:
            why = "interrupted by the user"
            result = attrs.evolve(result, is_error=True, subtype="error_interrupted")
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

    async def _watch(self, ctx: ActorContext, request: str, stop: _Interrupt) -> None:
        delivery = await ctx.take(
            where=lambda m: m.kind == INTERRUPT and m.body.get("request") == request
        )
        await ctx.done(delivery)
        stop.asked = True
        if stop.tick is not None:  # the tick's turn ends interrupted, and so the loop
            await ctx.send("lead", INTERRUPT, {"request": stop.tick})
        stop.waiting.cancel()

    async def _run(
        self, ctx: ActorContext, machine: TickMachine, stop: _Interrupt
    ) -> tuple[RunResult, str]:
        """Carry out the machine's decisions until it stops; the last result and why."""
        result: RunResult | None = None
        request = machine.schedule.request
        while not stop.asked:
            decision = machine.next(time.time())
            if isinstance(decision, Stop):
                return _last(result), decision.reason
            if isinstance(decision, Wait):
                ctx.emit(
                    "loop.waiting",
                    seconds=round(decision.seconds, 3),
                    tick=machine.schedule.ticks + 1,
                )
                with stop.waiting:
                    await trio.sleep(decision.seconds * self.scale)
                stop.waiting = trio.CancelScope()
                machine.waited()
                continue
            ctx.emit("loop.tick", tick=decision.number, prompt=decision.prompt)
            stop.tick = f"{request}.tick.{decision.number}"
            body = await self._tick(ctx, stop.tick, decision.prompt)
            stop.tick = None
            result = RunResult.from_dict(body)
            wakeup = body.get("wakeup")
            outcome = TickOutcome(
                failed=result.is_error,
                subtype=result.subtype,
                turns=result.num_turns,
                cost=result.total_cost_usd,
                wakeup=(float(wakeup["delaySeconds"]), wakeup.get("prompt")) if wakeup else None,
            )
            ended = machine.ticked(time.time(), outcome)
            save_schedule(self.path, machine.schedule)
            if ended is not None:
                return result, ended.reason
        return _last(result), "interrupted by the user"

    async def _tick(self, ctx: ActorContext, tick_id: str, prompt: str) -> dict[str, Any]:
        # The id is fixed by the request and the tick: a tick sent again after a
        # crash or a resume is the same request, which the lead goes on with.
        reply = await ctx.call("lead", PROMPT, {"text": prompt}, id=tick_id, timeout=math.inf)
        body: dict[str, Any] = reply.body
        return body


@attrs.define
class CronClock:
    """The cron jobs' wall clock, running *scale* times faster than real time from
    its creation (``COTERIE_TIME_SCALE``; 1: the real clock)."""

    scale: float = 1.0
    started: float = attrs.field(factory=time.time)

    def now(self) -> float:
        """The clock's time (a POSIX time)."""
        return self.started + (time.time() - self.started) / self.scale


@attrs.define
class _Interrupt:
    """Whether the user asked the loop to stop, and what there is to stop: the
    tick in flight (its prompt's id) or the wait before the next one."""

    asked: bool = False
    tick: str | None = None
    waiting: trio.CancelScope = attrs.Factory(trio.CancelScope)


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


__all__ = [
    "CRON_POLL",
    "LOOP",
    "SCHEDULER",
    "CronClock",
    "Scheduler",
    "load_schedule",
    "save_schedule",
    "scheduler_spec",
]
