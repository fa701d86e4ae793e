"""The summarizer: the actor that writes compaction summaries (the funnel's stage 4).

Each agent's compaction funnel asks it through its mailbox (kind
``summarize``, body ``{system, messages, max_tokens}``, built by
``coterie.context.summary``: the history framed as data, never as
instructions) and gets back the summary text (``{text, usage, model}``) or
``{error}``. Running as a service under supervision keeps a summarizer bug
from taking an agent down with it: a request delivered again after the
summarizer crashed is answered with an error at once (the agent's turn then
fails, or its reactive compaction reports the prompt too long), rather than
crashing again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.actors._actor import Actor, actor_spec
from coterie.models import ModelError, ModelReply, ModelRequest, Usage

if TYPE_CHECKING:
    from coterie.actors._context import ActorContext
    from coterie.agent import AgentLoop
    from coterie.events import EventLog
    from coterie.mailbox import PostOffice
    from coterie.messages import Message
    from coterie.models import Model, RetrySink, TextSink
    from coterie.supervisors import ChildSpec

SUMMARIZER = "summarizer"
SUMMARIZE = "summarize"
SUMMARY = "summary"
#: How long an agent waits for a summary.
TIMEOUT = 600.0


class Summarizer(Actor):
    """Answers ``summarize`` requests with the model's summary (role ``summarizer``)."""

    def __init__(self, model: Model) -> None:
        self.model = model

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        if message.kind != SUMMARIZE:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
            return
        body: dict[str, Any] = message.body if isinstance(message.body, dict) else {}
        if ctx.redelivered:
            answer: dict[str, Any] = {"error": "the summarizer crashed while summarising"}
        else:
            request = ModelRequest(
                system=str(body.get("system", "")),
                messages=list(body.get("messages", [])),
                max_tokens=int(body.get("max_tokens", 4096)),
                actor=ctx.name,
                role=SUMMARIZER,
            )
            try:
                reply = await self.model.complete(request)
            except ModelError as exc:
                answer = {"error": str(exc)}
            else:
                answer = {"text": reply.text, "usage": reply.usage.to_dict(), "model": reply.model}
        await ctx.reply(message, SUMMARY, answer)


@attrs.define
class SummarizerClient:
    """The model a funnel uses for summaries: the ``summarizer`` actor, asked by mail."""

    ctx: ActorContext
    timeout: float = TIMEOUT
    name: str = SUMMARIZER

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply:
        body = {
            "system": request.system,
            "messages": request.messages,
            "max_tokens": request.max_tokens,
        }
        try:
            reply = await self.ctx.call(SUMMARIZER, SUMMARIZE, body, timeout=self.timeout)
        except Exception as exc:  # a timeout, an unknown actor: the summary failed
            raise ModelError(f"no summary from the summarizer ({exc})") from exc
        answer: dict[str, Any] = reply.body if isinstance(reply.body, dict) else {}
        if "text" not in answer:
            raise ModelError(f"the summarizer failed: {answer.get('error', 'no answer')}")
        content = [{"type": "text", "text": str(answer["text"])}]
        usage = Usage(**answer.get("usage", {}))
        return ModelReply(content, "end_turn", usage, str(answer.get("model", SUMMARIZER)))


def use_summarizer(ctx: ActorContext, loop: AgentLoop) -> None:
    """Have *loop*'s compaction funnel ask the summarizer actor for its summaries."""
    if loop.funnel is not None:
        loop.funnel.model = SummarizerClient(ctx)


def summarizer_spec(model: Model, post: PostOffice, *, events: EventLog | None = None) -> ChildSpec:
    """The ``services`` child that runs the :class:`Summarizer`."""
    return actor_spec(SUMMARIZER, lambda _: Summarizer(model), post, events=events)


__all__ = ["SUMMARIZER", "Summarizer", "SummarizerClient", "summarizer_spec", "use_summarizer"]
