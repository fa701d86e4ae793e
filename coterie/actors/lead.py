"""The Lead: the actor that runs the agent loop for the user's prompts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.actors._actor import Actor

if TYPE_CHECKING:
    from collections.abc import Callable

    from coterie.actors._context import ActorContext
    from coterie.agent import AgentLoop
    from coterie.messages import Message

PROMPT = "prompt"
RESULT = "result"


class Lead(Actor):
    """Answers each ``prompt`` message with a ``result`` reply (a RunResult as a dict).

    A fresh incarnation builds a fresh loop; a crash mid-run leaves the
    prompt unacknowledged, so the restarted Lead runs it again.
    """

    def __init__(self, make_loop: Callable[[], AgentLoop]) -> None:
        self.loop = make_loop()

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind != PROMPT:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
            return
        result = await self.loop.run(str(message.body["text"]))
        await ctx.reply(message, RESULT, result.to_dict())
