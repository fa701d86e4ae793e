"""The Lead: the actor that runs the agent loop for the user's prompts."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.actors._actor import Actor
from coterie.actors.goal import GoalPursuit
from coterie.tools import last_wakeup

if TYPE_CHECKING:
    from coterie.actors._context import ActorContext
    from coterie.agent import AgentLoop, RunResult
    from coterie.messages import Message

PROMPT = "prompt"
RESULT = "result"
COMPACT = "compact"
COMPACTED = "compacted"
#: Runs tool calls as the lead's own before a prompt (body ``{"calls": [{"name",
#: "input"}], "allow": [rule], "by": name}``): a slash command's ``!`` lines and
#: ``@`` files, its ``allowed-tools`` granted for them. Replied with
#: ``tools-ran``, body ``{"results": [{"content", "is_error"}]}``.
RUN_TOOLS = "run-tools"
TOOLS_RAN = "tools-ran"
#: Cancels the work on one request (body ``{"request": id}``): the user's Ctrl-C.
INTERRUPT = "interrupt"
#: Cuts the conversation back to before one request (body ``{"prompt": id}``): a
#: rewind in a live session. Replied with ``rewound``, body ``{"dropped": n}``.
REWIND = "rewind"
REWOUND = "rewound"


class Lead(Actor):
    """Answers each ``prompt`` message with a ``result`` reply (a RunResult as a dict),
    and each ``compact`` message (``/compact``, body ``{"focus"}``) with a
    ``compacted`` reply saying what the compaction did, and each ``run-tools``
    message (a slash command's lines, run before its prompt) with ``tools-ran``. An ``interrupt``
    message naming the request being worked on (the user's Ctrl-C) cancels
    that work: the history records the interruption (a tool that was running
    is answered as interrupted) and the reply is an ``error_interrupted``
    result, so the conversation goes on with the next prompt and a resume
    never works on the request again. An ``interrupt`` that comes too late
    (the work was done) is dropped.

    The run's goal (``--goal``, given at construction) is pursued on every
    request; a prompt whose body carries a ``goal`` (a conversation's
    ``/goal``: a :class:`GoalPursuit` as a dict) has that one pursued instead,
    for that request only. It is in the request, so a resumed run pursues it too.

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
        if message.kind == RUN_TOOLS:
            body = message.body
            ran = await self.loop.run_tools(
                body["calls"], body.get("allow", ()), body.get("by", "")
            )
            results = [{"content": r.content, "is_error": r.is_error} for r in ran]
            await ctx.reply(message, TOOLS_RAN, {"results": results})
            return
        if message.kind == REWIND:
            dropped = await self.loop.cut_before(str(message.body["prompt"]))
            await ctx.reply(message, REWOUND, {"dropped": dropped})
            return
        if message.kind == INTERRUPT:
            return  # its request was answered before it arrived
        if message.kind != PROMPT:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
            return
        text = str(message.body["text"])
        if message.body.get("model"):  # /model: the model from this request on
            self.loop.model_name = str(message.body["model"])
        transcript = self.loop.transcript
        if transcript is None or message.id not in transcript.prompt_ids:
            submitted = await self.loop.submit(text)
            if not isinstance(submitted, str):  # a hook blocked the prompt
                result = await self.finish(ctx, message, submitted)
                await ctx.reply(message, RESULT, {**result.to_dict(), "wakeup": None})
                return
            text = submitted
        goal = GoalPursuit(**message.body["goal"]) if message.body.get("goal") else self.goal
        result = await self.interruptible(ctx, message.id, text, goal)
        result = await self.finish(ctx, message, result)
        # A dynamic loop's ScheduleWakeup, from the history (so a resume finds it too).
        wakeup = last_wakeup(self.loop.messages)
        await ctx.reply(message, RESULT, {**result.to_dict(), "wakeup": wakeup})

    async def interruptible(
        self, ctx: ActorContext, work_id: str, text: str, goal: GoalPursuit | None = None
    ) -> RunResult:
        """The work on request *work_id* (*goal* pursued), until an ``interrupt`` for
        it arrives: then the interrupted result (see the class docstring)."""
        started, turns_before = time.monotonic(), self.loop.turns
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                delivery = await ctx.take(
                    where=lambda m: m.kind == INTERRUPT and m.body.get("request") == work_id
                )
                await ctx.done(delivery)
                ctx.emit("agent.interrupted", prompt=work_id)
                work.cancel()

            with trio.CancelScope() as work:
                nursery.start_soon(watch)
                result = await self.work(ctx, work_id, text)
                if goal is not None:
                    result = await goal.pursue(ctx, self.loop, work_id, result, self.work)
            nursery.cancel_scope.cancel()
        if work.cancelled_caught:
            return await self.loop.interrupted(started, turns_before)
        return result

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
