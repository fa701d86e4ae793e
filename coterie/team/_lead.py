"""The lead of a team: the Trio driver of :class:`~coterie.team._lead_rules.LeadMachine`.

The user's request is one ``prompt`` message, kept unacknowledged while the
team works on it, so that a restarted lead (or a resumed run) gets it again.
The lead's first turn plans; then, whenever it is free, it reads every
message waiting for it and the machine decides what costs a turn (one turn
carrying every message kept so far, with ``lead_turns="batched"``), what
waits unacknowledged for the next turn, which plan must be rejected for want
of an answer, and when the team is done. Work on a turn is recorded in the
lead's transcript under the turn's work id (fixed by the messages it
carries): messages delivered again after a crash continue that turn instead
of starting it over, and are acknowledged only once it is recorded. When
the team is done the lead asks each live teammate to shut down (ids fixed
per request and teammate), waits for the answers, and replies to the user.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import trio

from coterie.actors.lead import COMPACT, PROMPT, REWIND, Lead
from coterie.errors import UnknownActor
from coterie.team import _protocol as proto
from coterie.team._lead_rules import (
    Finish,
    LeadMachine,
    Turn,
    answered_plan,
    final_result,
)
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
#: What ends the lead's final turn of a batched team (after the reports it carries).
FINAL_NOTE = "Every task on the board is finished: check the results and answer the user."


class TeamLead(Lead):
    """The lead of a team run (see the module docstring)."""

    def __init__(self, team: Team, loop: AgentLoop, goal: GoalPursuit | None = None) -> None:
        super().__init__(loop, goal)
        self.team = team
        self.machine = LeadMachine(team.lead_turns)
        #: The deliveries of the messages the machine keeps, by message id.
        self._held: dict[str, Delivery] = {}

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind in (COMPACT, PROMPT, REWIND):
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
        transcript = self.loop.transcript
        begun = transcript.prompt_ids if transcript is not None else set()
        while True:
            await self._read(ctx)
            turn = self.machine.free(begun)
            if turn is not None:
                result = await self._take(ctx, turn, result)
                continue
            seq = await board.wait_for_change(-1)
            tasks = await board.list()
            # Looked at again after reading the board: a report that came in
            # meanwhile must be read before the team may finish. A report is
            # sent before its task is completed, so once the mailbox is synced
            # every report of a finished task on this board is readable.
            await ctx.sync()
            if await self._read(ctx):
                continue
            decision = self.machine.board(tasks, self.team.alive, mail_waiting=False)
            if isinstance(decision, Turn):
                result = await self._take(ctx, decision, result)
            elif isinstance(decision, Finish):
                await self._ack(ctx, decision.ack)
                return final_result(result, tasks, self.team.stopped)
            else:
                changed = board.wait_for_change(seq, poll_interval=5.0)
                delivery = await mail_or(ctx, _from_team, changed)
                if delivery is not None:
                    await self._arrived(ctx, delivery)

    async def _read(self, ctx: ActorContext) -> int:
        """Read every message waiting for the lead; how many there were."""
        count = 0
        while (delivery := await ctx.poll(_from_team)) is not None:
            await self._arrived(ctx, delivery)
            count += 1
        return count

    async def _arrived(self, ctx: ActorContext, delivery: Delivery) -> None:
        message = delivery.message
        body = proto.parse(message)
        if isinstance(body, proto.TeammateStopped):
            self.team.stopped[body.teammate] = body.reason
        failed = isinstance(body, proto.Result) and body.status == "failed"
        task_id = getattr(body, "task_id", None)
        kind = message.kind if body is not None else "malformed"
        self._held[message.id] = delivery
        ack = self.machine.arrived(
            message.id,
            kind,
            message.sender,
            task_id,
            failed=failed,
            redelivered=delivery.redelivered,
        )
        if ack is not None:
            await self._ack(ctx, ack.ids)

    async def _take(self, ctx: ActorContext, turn: Turn, result: RunResult) -> RunResult:
        """One model turn on every message *turn* carries, then its plans' answers and
        the messages' acknowledgements (only once the turn is recorded)."""
        # Idle notices ride along to be acknowledged with the turn, never shown.
        texts = [proto.render(self._held[k.id].message) for k in turn.items if k.kind != proto.IDLE]
        if turn.final and self.machine.lead_turns == "batched":
            texts.append(FINAL_NOTE)
        result = await self._turn(ctx, turn.work_id, "\n\n".join(texts))
        plans = {(k.sender, str(k.task_id)) for k in turn.items if k.kind == proto.PLAN_REQUEST}
        answered = {p for p in plans if answered_plan(self.loop.messages, *p)}
        turned = self.machine.turned(turn, answered)
        for rejection in turned.rejections:
            feedback = "The lead did not approve the plan. It said: " + result.result
            await proto.tell(
                ctx,
                rejection.teammate,
                proto.PlanApproval(rejection.task_id, False, feedback),
                message_id=f"{rejection.request_id}.unanswered",
            )
        await self._ack(ctx, turned.ack)
        return result

    async def _ack(self, ctx: ActorContext, ids: tuple[str, ...]) -> None:
        """Acknowledge these messages together (one cursor write: all or none)."""
        deliveries = [d for i in ids if (d := self._held.pop(i, None)) is not None]
        if deliveries:
            await ctx.done(*deliveries)

    async def _shutdown(self, ctx: ActorContext, prompt_id: str) -> None:
        """The shutdown protocol: ask each live teammate to stop, wait for the answers.

        Request ids are fixed by the user's request and the teammate, so a lead
        restarted mid-protocol asks again with the same ids: a teammate that
        answered already is not asked twice, and its answer still counts.
        """

        async def ask(name: str) -> None:
            request = proto.ShutdownRequest()
            proto.report(ctx, name, request)
            request_id = f"{prompt_id}.shutdown.{name}"
            try:
                await ctx.call(
                    name,
                    request.KIND,
                    proto.to_json(request),
                    id=request_id,
                    timeout=SHUTDOWN_TIMEOUT,
                )
            except TimeoutError:
                ctx.emit("team.shutdown_timeout", teammate=name)
            except UnknownActor:
                # No mailbox: never hosted (a remote team's teammate no worker took) or
                # gone with its host. Nothing runs there to stop; the shutdown goes on.
                ctx.emit("team.shutdown_skipped", teammate=name, reason="no mailbox")

        async with trio.open_nursery() as nursery:
            for name in self.team.alive:
                nursery.start_soon(ask, name)
        # What the teammates said before answering (their last idle notices).
        while (leftover := await ctx.poll(_from_team)) is not None:
            await ctx.done(leftover)


def _from_team(message: Message) -> bool:
    """A teammate's message for the lead's attention (not a reply to an ask)."""
    return message.correlation_id is None and (
        message.kind in proto.LEAD_TURNS or message.kind == proto.IDLE
    )


__all__ = ["SHUTDOWN_TIMEOUT", "TeamLead"]
