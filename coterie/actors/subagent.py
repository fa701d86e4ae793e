"""Subagents: the ``Task`` tool's one-shot agents, each a short-lived actor.

A subagent has its own name (``<parent>-sub-<hex>``), mailbox and durable
transcript, a fresh context holding only its prompt, and its parent's
permission gate itself (same rules, same mode, same asker; in Auto Mode the
same classifier), so it can never do what its parent may not. Its tools are
those of its type that its parent has too. It runs under a supervisor of its
own (crashes restart it from its transcript; past the restart intensity its
parent gets an error result) as a dynamic child of the ``team`` supervisor,
answers its one prompt and stops. Nesting is bounded by :data:`MAX_DEPTH`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.actors._actor import actor_spec
from coterie.actors.lead import PROMPT, RESULT, Lead
from coterie.actors.summarizer import use_summarizer
from coterie.ids import new_id
from coterie.messages import Message
from coterie.supervisors import Restart, isolated
from coterie.tools import ToolRegistry, ToolResult

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.actors._context import ActorContext
    from coterie.agent import AgentFactory, AgentLoop
    from coterie.supervisors import ChildSpec

#: How deep subagents may nest: a subagent of a subagent, no further.
MAX_DEPTH = 2
#: The team's own tools: a subagent works for its parent, not on the team's board.
TEAM_ONLY = frozenset(
    {"TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "SendMessage", "ApprovePlan"}
)
#: The tools of each subagent type (None: every tool its parent has).
TYPE_TOOLS: dict[str, frozenset[str] | None] = {
    "general-purpose": None,
    "Explore": frozenset({"Read", "Glob", "Grep", "TodoWrite"}),
}
SUBAGENT_PROMPT = """\
You are a subagent started by {parent} for one task. You see only the task \
below, not the conversation that led to it. Work on it with your tools, then \
answer with a final report: it is all {parent} will see of your work."""


class Subagent(Lead):
    """Answers its one prompt, then stops."""

    async def handle(self, ctx: ActorContext, message: Message) -> None:
        await super().handle(ctx, message)
        if message.kind == PROMPT:
            ctx.stop()


@attrs.define
class Subagents:
    """The ``ToolContext.subagents`` of one agent: starts its subagents."""

    parent: ActorContext
    parent_loop: AgentLoop
    factory: AgentFactory
    #: Starts a subagent's spec as a dynamic child of the ``team`` supervisor.
    start_child: Callable[[ChildSpec], Awaitable[None]]
    depth: int = 1

    async def __call__(self, description: str, prompt: str, kind: str) -> ToolResult:
        name = f"{self.parent.name[:40]}-sub-{new_id()[-8:].lower()}"
        request = Message.new(
            self.parent.name, name, PROMPT, {"text": prompt}, reply_to=self.parent.name
        )
        self.parent.emit(
            "subagent.started", subagent=name, description=description, subagent_type=kind
        )

        def make() -> Lead:
            return Subagent(lambda: self._loop(name, kind), self._setup)

        async def gave_up(reason: str) -> None:
            body = {"result": f"The subagent crashed repeatedly: {reason}", "is_error": True}
            await self.parent.post.send(
                Message.new(name, self.parent.name, RESULT, body, correlation_id=request.id)
            )

        spec = actor_spec(
            name, make, self.parent.post, events=self.factory.events, restart=Restart.TRANSIENT
        )
        await self.start_child(isolated(spec, events=self.factory.events, on_give_up=gave_up))
        await self.parent.post.send(request)
        mailbox = self.parent.mailbox
        delivery = await mailbox.receive(where=lambda m: m.correlation_id == request.id)
        await mailbox.ack(delivery)
        body: dict[str, Any] = delivery.message.body
        self.parent.emit("subagent.finished", subagent=name, is_error=bool(body["is_error"]))
        return ToolResult(str(body["result"]), is_error=bool(body["is_error"]))

    def _loop(self, name: str, kind: str) -> AgentLoop:
        allowed = TYPE_TOOLS.get(kind)
        registry = ToolRegistry()
        for tool in self.parent_loop.registry:
            if tool.name in TEAM_ONLY:
                continue  # a subagent is not a member of its parent's team
            if allowed is None or tool.name in allowed:
                registry.register(tool)
        role_prompt = SUBAGENT_PROMPT.format(parent=self.parent.name)
        return self.factory.loop(
            name, "subagent", registry, role_prompt=role_prompt, gate=self.parent_loop.gate
        )

    def _setup(self, ctx: ActorContext, loop: AgentLoop) -> None:
        use_summarizer(ctx, loop)
        # Past the nesting limit the Task tool stays, and says why it cannot start one.
        if "Task" in loop.registry and self.depth < MAX_DEPTH:
            loop.tools.subagents = Subagents(
                ctx, loop, self.factory, self.start_child, self.depth + 1
            )


__all__ = ["MAX_DEPTH", "TYPE_TOOLS", "Subagent", "Subagents"]
