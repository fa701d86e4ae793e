"""A teammate: the WORK → IDLE cycle of DESIGN §6 around its own agent loop.

Theory of operation. In IDLE a teammate first reads its mailbox (a shutdown
request first, then other members' messages, each one turn of its model),
then takes a task: the one it holds already (after a restart), else one the
board gives it by claim (its own assignments first, then ready unassigned
tasks). With nothing to do it waits, without polling, for a message or a
change of the board. In WORK it runs its loop on the task with its lease
renewed in the background; its final text is the task's result, reported to
the lead (a ``result`` message with an id fixed by task and teammate, so a
re-send after a crash is recognised) *before* the task is completed on the
board, so that a lead that sees every task completed has every result in
its mailbox; then an ``idle`` notification.

A claimed task is made the teammate's assignment at once: if the teammate
crashes, or the whole run is killed, the task waits for it (its transcript
holds the work done so far) instead of going to someone who would redo that
work. If its supervisor gives up on it, the runtime hands its tasks back.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.actors import Actor
from coterie.board import BoardError, BoardRefusal, TaskStatus
from coterie.team import _protocol as proto
from coterie.team._team import LEASE_SECONDS, mail_or

if TYPE_CHECKING:
    from coterie.actors import ActorContext
    from coterie.agent import AgentLoop, RunResult
    from coterie.board import Task
    from coterie.mailbox import Delivery
    from coterie.team._team import Team

#: An idle teammate looks at the board at least this often (for changes made
#: by other processes, and leases that expired).
POLL_SECONDS = 5.0
#: How many plans a teammate proposes for a task before it gives the task up.
MAX_PLAN_ROUNDS = 3
PLAN_NOTE = (
    "You are in plan mode: investigate with read-only tools and answer with your plan for"
    " this task. The lead must approve the plan before you change anything."
)


def task_prompt(task: Task, lead: str) -> str:
    """What a teammate is asked to do for *task*: the lead's words, tagged as such
    (they are another agent's, never the user's consent for anything)."""
    text = f"Your task {task.id}: {task.subject}\n\n{task.description}".rstrip()
    return proto.tagged(lead, "task", text)


class Teammate(Actor):
    """One member of the team doing tasks from the board."""

    def __init__(self, team: Team, loop: AgentLoop) -> None:
        self.team = team
        self.loop = loop
        self._generation = 0
        self._started = True

    async def run(self, ctx: ActorContext) -> None:
        ctx.mailbox.requeue_in_flight()
        wakeups = self.team.wakeups
        wakeups.join(ctx.name)
        try:
            while True:
                self._generation = wakeups.generation(ctx.name)
                if await self._read_mail(ctx):
                    return
                task = await self._next_task(ctx)
                if task is not None:
                    await self._work(ctx, task)
                    continue
                ctx.emit("actor.state", state="idle", task=None)
                delivery = await self._wait(ctx)
                if delivery is not None and await self._handle(ctx, delivery):
                    return
        finally:
            if self.loop.transcript is not None:
                self.loop.transcript.close()

    # -- IDLE ------------------------------------------------------------------

    async def _read_mail(self, ctx: ActorContext) -> bool:
        """Handle what is waiting, shutdown first; True if the teammate must stop."""
        for where in (lambda m: m.kind == proto.SHUTDOWN_REQUEST, None):
            while (delivery := await ctx.poll(where)) is not None:
                if await self._handle(ctx, delivery):
                    return True
        return False

    async def _handle(self, ctx: ActorContext, delivery: Delivery) -> bool:
        message = delivery.message
        stop = False
        if message.kind == proto.SHUTDOWN_REQUEST:
            await proto.tell(
                ctx, message.sender, proto.SHUTDOWN_RESPONSE, {"approve": True},
                correlation_id=message.id,
            )  # fmt: skip
            ctx.emit("actor.state", state="stopping", task=None)
            stop = True
        elif message.kind == proto.MESSAGE:
            ctx.emit("actor.state", state="working", task=None)
            await self._turn(message.id, proto.render(message))
        else:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
        await ctx.done(delivery)
        if stop:
            # A copy of the request (sent again by a restarted lead) is answered
            # already: take it out (poll acknowledges copies of handled ids).
            await ctx.poll(lambda m: m.id == message.id)
        return stop

    async def _next_task(self, ctx: ActorContext) -> Task | None:
        board, me = self.team.board, ctx.name
        if self._started:
            # Restarted (or resumed): the task this teammate held comes first.
            self._started = False
            for task in await board.list():
                if task.status is TaskStatus.IN_PROGRESS and task.owner == me:
                    return await board.renew(task.id, me, lease_seconds=LEASE_SECONDS)
        claimed = await board.claim(me, lease_seconds=LEASE_SECONDS)
        if claimed is not None and not claimed.assigned:
            claimed = await board.update(claimed.id, owner=me)
        return claimed

    async def _wait(self, ctx: ActorContext) -> Delivery | None:
        """Until a message arrives (returned) or a board change concerns this
        teammate (None); a change made by another process is noticed by a
        slow poll."""
        return await mail_or(ctx, None, self._concerned(ctx))

    async def _concerned(self, ctx: ActorContext) -> None:
        with trio.move_on_after(POLL_SECONDS):
            await self.team.wakeups.wait(ctx.name, self._generation)

    # -- WORK ------------------------------------------------------------------

    async def _work(self, ctx: ActorContext, task: Task) -> None:
        team_ctx = self.loop.tools.team
        assert team_ctx is not None
        team_ctx.current_task = task.id
        ctx.emit("actor.state", state="working", task=task.id)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._renew, ctx, task.id)
            if self.team.plan_approval and task.id not in self.team.approved(ctx.name):
                result = await self._plan(ctx, task)
            else:
                result = await self._turn(task.id, task_prompt(task, self.team.lead))
            nursery.cancel_scope.cancel()
        status = "failed" if result.is_error else "completed"
        body = {"task_id": task.id, "status": status, "result": result.result}
        await proto.tell(
            ctx, self.team.lead, proto.RESULT, body, message_id=f"{task.id}.{ctx.name}.result"
        )
        try:
            if result.is_error:
                await self.team.board.fail(task.id, ctx.name, result.result or "failed")
            else:
                await self.team.board.complete(task.id, ctx.name, result.result)
        except BoardRefusal as exc:
            # Already settled: the teammate marked it failed or handed it back
            # with TaskUpdate, or the lead changed it meanwhile.
            ctx.emit("team.task_settled", task=task.id, reason=str(exc))
        team_ctx.current_task = None
        await proto.tell(ctx, self.team.lead, proto.IDLE, {"task_id": task.id})

    async def _renew(self, ctx: ActorContext, task_id: str) -> None:
        while True:
            await trio.sleep(LEASE_SECONDS / 3)
            try:
                await self.team.board.renew(task_id, ctx.name, lease_seconds=LEASE_SECONDS)
            except (BoardRefusal, BoardError):
                return  # no longer ours: the turn's end will find out

    async def _plan(self, ctx: ActorContext, task: Task) -> RunResult:
        """Plan read-only, ask the lead, revise until approved, then carry the plan out."""
        asked = task_prompt(task, self.team.lead)
        result = await self._turn(task.id, f"{asked}\n\n{PLAN_NOTE}", planning=True)
        for _ in range(MAX_PLAN_ROUNDS):
            if result.is_error:
                return result  # no plan to propose: the task fails
            body = {"task_id": task.id, "plan": result.result}
            await proto.tell(ctx, self.team.lead, proto.PLAN_REQUEST, body)
            ctx.emit("actor.state", state="awaiting approval", task=task.id)
            delivery = await ctx.take(
                lambda m: m.kind == proto.PLAN_APPROVAL and m.body.get("task_id") == task.id
            )
            answer = delivery.message
            approved = bool(answer.body.get("approve"))
            if approved:
                self.team.record_approval(ctx.name, task.id)
                text = "The lead approved your plan. Carry it out now."
            else:
                feedback = answer.body.get("feedback") or "no reason given"
                text = f"The lead rejected your plan: {feedback}\nRevise it. {PLAN_NOTE}"
            ctx.emit("actor.state", state="working", task=task.id)
            text = proto.render(answer) + "\n" + text
            result = await self._turn(answer.id, text, planning=not approved)
            await ctx.done(delivery)
            if approved:
                return result
        reason = f"The lead did not approve a plan in {MAX_PLAN_ROUNDS} rounds."
        return attrs.evolve(result, result=reason, is_error=True, subtype="error_plan")

    async def _turn(self, work_id: str, text: str, *, planning: bool = False) -> RunResult:
        """Work on *text* (begun before a restart if its id is in the transcript);
        *planning*: under plan mode's ceiling (read-only until approved)."""
        loop = self.loop
        with loop.gate.capped("plan") if planning else contextlib.nullcontext():
            if loop.transcript is not None and work_id in loop.transcript.prompt_ids:
                return await loop.resume(work_id)
            return await loop.run(text, prompt_id=work_id)
