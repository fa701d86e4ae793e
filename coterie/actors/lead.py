"""The Lead: the actor that runs the agent loop for the user's prompts."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.actors._actor import Actor
from coterie.tools import last_wakeup

if TYPE_CHECKING:
    from coterie.actors._context import ActorContext
    from coterie.actors.goal import GoalPursuit
    from coterie.agent import AgentLoop, RunResult
    from coterie.messages import Message

PROMPT = "prompt"
RESULT = "result"
COMPACT = "compact"
COMPACTED = "compacted"


class Lead(Actor):
    """Answers each ``prompt`` message with a ``result`` reply (a RunResult as a dict),
    and each ``compact`` message (``/compact``, body ``{"focus"}``) with a
    ``compacted`` reply saying what the compaction did.

    Each incarnation gets its loop built afresh, from the durable transcript
    when the loop has one: a Lead restarted after a crash gets the unacknowledged
    prompt again, sees in the transcript that it had begun it, and goes on
    from where the transcript ends instead of starting over. A tool that was
    running when it crashed is reported to the model as interrupted, never
    run twice.
    """

    def __init__(self, loop: AgentLoop, goal: GoalPursuit | None = None) -> None:
        self.loop = loop
        self.goal = goal

    async def run(self, ctx: ActorContext) -> None:
        try:
            await super().run(ctx)
        finally:
            if self.loop.transcript is not None:
                self.loop.transcript.close()

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind == COMPACT:
            report = await self.loop.compact(message.body.get("focus"))
            await ctx.reply(message, COMPACTED, attrs.asdict(report))
            return
        if message.kind != PROMPT:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
            return
        text = str(message.body["text"])
        transcript = self.loop.transcript
        if transcript is None or message.id not in transcript.prompt_ids:
            submitted = await self.loop.submit(text)
            if not isinstance(submitted, str):  # a hook blocked the prompt
                result = await self.finish(ctx, message, submitted)
                await ctx.reply(message, RESULT, {**result.to_dict(), "wakeup": None})
                return
            text = submitted
        result = await self.work(ctx, message.id, text)
        if self.goal is not None:
            result = await self.goal.pursue(ctx, self.loop, message.id, result, self.work)
        result = await self.finish(ctx, message, result)
        # A dynamic loop's ScheduleWakeup, from the history (so a resume finds it too).
        wakeup = last_wakeup(self.loop.messages)
        await ctx.reply(message, RESULT, {**result.to_dict(), "wakeup": wakeup})

    async def finish(self, ctx: ActorContext, request: Message, result: RunResult) -> RunResult:
        """Called once a request's work is done, before the reply (a team shuts down here)."""
        return result

    async def work(self, ctx: ActorContext, work_id: str, text: str) -> RunResult:
        """Work on *text*, or go on with it if the transcript shows it begun (*work_id*)."""
        transcript = self.loop.transcript
        if transcript is not None and work_id in transcript.prompt_ids:
            ctx.emit(
                "agent.resumed",
                prompt=work_id,
                messages=len(self.loop.messages),
                interrupted=list(transcript.interrupted),
            )
            return await self.loop.resume(work_id)
        return await self.loop.run(text, prompt_id=work_id)
