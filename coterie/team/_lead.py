"""The lead of a team: plans with the team tools, then leads until every task is done.

Theory of operation. The user's request is one ``prompt`` message, kept
unacknowledged while the team works on it, so that a restarted lead (or a
resumed run) gets it again. The lead's first turn plans; then it takes the
teammates' messages one by one (results, messages, plan requests, a
teammate stopped for good), each one turn of its model, acknowledged once
handled. Work on any message is recorded in the lead's transcript under the
message's id: a message delivered again after a crash continues that work
instead of starting it over. When every task on the board is finished (or
nothing can move any more: no teammate left, or every open task waits on a
failed one), the lead asks each teammate to shut down, waits for their
answers, and replies to the user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import trio

from coterie.actors.lead import COMPACT, PROMPT, Lead
from coterie.board import Task, TaskStatus
from coterie.team import _protocol as proto
from coterie.team._team import mail_or

if TYPE_CHECKING:
    from coterie.actors import ActorContext
    from coterie.actors.goal import GoalPursuit
    from coterie.agent import AgentLoop, RunResult
    from coterie.mailbox import Delivery
    from coterie.messages import Message
    from coterie.team._team import Team

#: How long the lead waits for the teammates' shutdown answers.
SHUTDOWN_TIMEOUT = 30.0


def stuck(tasks: list[Task], alive: tuple[str, ...]) -> bool:
    """Whether no open task can ever move: none in progress, none that a live
    teammate could take (every blocker completed, unassigned or assigned to it)."""
    status = {t.id: t.status for t in tasks}
    for task in tasks:
        if task.status is TaskStatus.IN_PROGRESS:
            return False
        ready = all(status.get(b) is TaskStatus.COMPLETED for b in task.blocked_by)
        takeable = task.owner is None or task.owner in alive
        if task.status is TaskStatus.PENDING and ready and takeable and alive:
            return False
    return True


class TeamLead(Lead):
    """The Lead of a team run (see the module docstring)."""

    def __init__(self, team: Team, loop: AgentLoop, goal: GoalPursuit | None = None) -> None:
        super().__init__(loop, goal)
        self.team = team

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind in (COMPACT, PROMPT):
            if message.kind == PROMPT:
                self.team.request = str(message.body["text"])
            await super().handle(ctx, message)
        else:
            # A teammate's message with no request in progress (e.g. a late
            # idle notice after the team finished): nothing to act on.
            ctx.emit("team.message_ignored", kind=message.kind, sender=message.sender)

    async def work(self, ctx: ActorContext, work_id: str, text: str) -> RunResult:
        """The lead's turn on *text*, then leading the team until the board is done."""
        result = await self._turn(ctx, work_id, text)
        return await self._lead(ctx, result)

    async def finish(self, ctx: ActorContext, request: Message, result: RunResult) -> RunResult:
        await self._shutdown(ctx, request.id)
        return result

    async def _turn(self, ctx: ActorContext, work_id: str, text: str) -> RunResult:
        ctx.emit("actor.state", state="working", task=None)
        try:
            return await super().work(ctx, work_id, text)
        finally:
            ctx.emit("actor.state", state="idle", task=None)

    async def _lead(self, ctx: ActorContext, result: RunResult) -> RunResult:
        """Take teammates' messages until the board is done; the last turn's result."""
        board = self.team.board
        while True:
            delivery = await self._waiting(ctx)
            if delivery is None:
                seq = await board.wait_for_change(-1)
                tasks = await board.list()
                done = all(t.status.finished for t in tasks) or stuck(tasks, self.team.alive)
                # A teammate reports before it completes its task on the board:
                # once every task is done, every report is in the mailbox.
                delivery = await self._waiting(ctx)
                if done and delivery is None:
                    return self._outcome(result, tasks)
                if delivery is None:
                    delivery = await self._next(ctx, seq)
                if delivery is None:
                    continue
            result = await self._take(ctx, delivery, result)

    async def _waiting(self, ctx: ActorContext) -> Delivery | None:
        return await ctx.poll(_from_team)

    async def _next(self, ctx: ActorContext, seq: int) -> Delivery | None:
        """A teammate's message, or None when the board changed first."""
        changed = self.team.board.wait_for_change(seq, poll_interval=5.0)
        return await mail_or(ctx, _from_team, changed)

    async def _take(self, ctx: ActorContext, delivery: Delivery, result: RunResult) -> RunResult:
        message = delivery.message
        if message.kind == proto.TEAMMATE_STOPPED:
            self.team.stopped.add(str(message.body.get("teammate")))
        if message.kind in proto.LEAD_TURNS:
            plan = (message.sender, str(message.body.get("task_id")))
            self.team.answered.discard(plan)
            result = await self._turn(ctx, message.id, proto.render(message))
            if message.kind == proto.PLAN_REQUEST and plan not in self.team.answered:
                # A plan must be answered, or its teammate waits forever: a turn
                # that ends without ApprovePlan is a rejection, its text the feedback.
                body = {
                    "task_id": plan[1],
                    "approve": False,
                    "feedback": "The lead did not approve the plan. It said: " + result.result,
                }
                unanswered = f"{message.id}.unanswered"
                await proto.tell(ctx, plan[0], proto.PLAN_APPROVAL, body, message_id=unanswered)
        await ctx.done(delivery)
        return result

    def _outcome(self, result: RunResult, tasks: list[Task]) -> RunResult:
        """The lead's last answer; an error if a task failed or could not be done."""
        open_ = [t.id for t in tasks if not t.status.finished]
        failed = [t.id for t in tasks if t.status is TaskStatus.FAILED]
        if result.is_error or not (open_ or failed):
            return result
        problems = []
        if failed:
            problems.append(f"failed: {', '.join(failed)}")
        if open_:
            problems.append(f"not done (no teammate could take them): {', '.join(open_)}")
        text = f"{result.result}\n\nThe team did not finish every task ({'; '.join(problems)})."
        return attrs.evolve(result, result=text.strip(), is_error=True, subtype="error_tasks")

    async def _shutdown(self, ctx: ActorContext, prompt_id: str) -> None:
        """The shutdown protocol: ask each live teammate to stop, wait for the answers.

        Request ids are fixed by the user's request and the teammate, so a lead
        restarted mid-protocol asks again with the same ids: a teammate that
        answered already is not asked twice, and its answer still counts.
        """

        async def ask(name: str) -> None:
            request_id = f"{prompt_id}.shutdown.{name}"
            proto.report(ctx, name, proto.SHUTDOWN_REQUEST, {})
            try:
                await ctx.call(
                    name, proto.SHUTDOWN_REQUEST, {}, id=request_id, timeout=SHUTDOWN_TIMEOUT
                )
            except TimeoutError:
                ctx.emit("team.shutdown_timeout", teammate=name)

        async with trio.open_nursery() as nursery:
            for name in self.team.alive:
                nursery.start_soon(ask, name)
        # What the teammates said before answering (their last idle notices).
        while (leftover := await self._waiting(ctx)) is not None:
            await ctx.done(leftover)


def _from_team(message: Message) -> bool:
    """A teammate's message for the lead's attention (not a reply to an ask)."""
    return message.correlation_id is None and (
        message.kind in proto.LEAD_TURNS or message.kind == proto.IDLE
    )


__all__ = ["SHUTDOWN_TIMEOUT", "TeamLead", "stuck"]
