"""Subagents: the ``Task`` tool's one-shot agents, each a short-lived actor.

A subagent has its own name (``<parent>-sub-<hex>``), mailbox and durable
transcript, a fresh context holding only its prompt, and its parent's
permission gate itself (same rules, same mode, same asker; in Auto Mode the
same classifier), so it can never do what its parent may not. Its tools are
those of its type that its parent has too. It runs under a supervisor of its
own (crashes restart it from its transcript; past the restart intensity its
parent gets an error result) as a dynamic child of the ``team`` supervisor,
answers its one prompt and stops. Nesting is bounded by :data:`MAX_DEPTH`.

A custom subagent (``.claude/agents/*.md``, ``--agents``) is started the same
way, with its definition's prompt after the subagent's own, only those of its
parent's tools its ``tools`` names, its ``model``, and its ``permissionMode``
only where it is narrower than its parent's: then a
:class:`~coterie.tools.NarrowedGate` over the parent's gate, so that it is
held by both and can never do more than its parent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Protocol, cast

import attrs

from coterie.actors._actor import actor_spec
from coterie.actors.lead import PROMPT, RESULT, Lead
from coterie.extensions.agents import narrower_mode
from coterie.ids import new_id
from coterie.messages import Message
from coterie.supervisors import Restart, isolated
from coterie.tools import NarrowedGate, ToolResult, custom_registry, subagent_registry

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from coterie.actors._context import ActorContext
    from coterie.agent import AgentLoop
    from coterie.events import EventLog
    from coterie.extensions import AgentDefinition
    from coterie.hooks import AgentHooks
    from coterie.supervisors import ChildSpec
    from coterie.tools import Mode, PermissionGate, ToolRegistry

#: How deep subagents may nest: a subagent of a subagent, no further.
MAX_DEPTH = 2
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


class SubagentHost(Protocol):
    """What starting a subagent needs of the run (the composition root's agents)."""

    @property
    def events(self) -> EventLog | None: ...

    def loop(
        self,
        ctx: ActorContext,
        role: str,
        registry: ToolRegistry,
        *,
        role_prompt: str | None = ...,
        gate: PermissionGate | None = ...,
        depth: int = ...,
        parent: str | None = ...,
        agent_type: str | None = ...,
        model_name: str | None = ...,
        workspace: Path | None = ...,
        schema: Mapping[str, Any] | None = ...,
    ) -> AgentLoop: ...

    async def start_subagent(self, spec: ChildSpec) -> None: ...

    @property
    def custom_agents(self) -> Mapping[str, AgentDefinition]: ...


@attrs.define
class Subagents:
    """The ``ToolContext.subagents`` of one agent: starts its subagents.

    A subagent's tools are those of its type that *registry* (its parent's)
    has, never the team's (:func:`~coterie.tools.subagent_registry`); it
    shares *gate*, its parent's.
    """

    parent: ActorContext
    registry: ToolRegistry
    gate: PermissionGate
    host: SubagentHost
    #: The nesting depth of the subagents this one starts.
    depth: int = 1
    #: The parent's hooks: SubagentStart runs before each subagent starts.
    hooks: AgentHooks | None = None
    #: Where the parent's tools are rooted when not at the run's workspace (a
    #: teammate's own checkout): its subagents work there too.
    workspace: Path | None = None

    async def __call__(
        self,
        description: str,
        prompt: str,
        kind: str,
        *,
        schema: Mapping[str, Any] | None = None,
        model: str | None = None,
        workspace: Path | None = None,
    ) -> ToolResult:
        """Run a subagent of type *kind* on *prompt*; its final text, or with *schema*
        the answer it gave through StructuredOutput as JSON text (an error result if
        it gave none). *model* is the model it asks for (over a custom type's);
        *workspace* where its tools are rooted (a worktree of its own; default: its
        parent's)."""
        # An unknown *kind* raises here, before anything starts.
        role_prompt = SUBAGENT_PROMPT.format(parent=self.parent.name)
        gate, model_name = self.gate, None
        custom = self.host.custom_agents.get(kind)
        if custom is None:
            registry = subagent_registry(self.registry, kind)
        else:
            registry = custom_registry(self.registry, custom.tools)
            role_prompt = f"{role_prompt}\n\n{custom.prompt}"
            model_name = custom.model
            narrow = narrower_mode(self.gate.policy.mode, custom.permission_mode)
            if narrow is not None:
                policy = attrs.evolve(self.gate.policy, mode=cast("Mode", narrow))
                gate = NarrowedGate(policy, self.gate.asker, outer=self.gate)
        name = f"{self.parent.name[:40]}-sub-{new_id()[-8:].lower()}"
        # The request's id is known from the start, so that whoever reads the event
        # can stop the subagent's work (an ``interrupt`` naming it: stop_task).
        request_id = new_id()
        self.parent.emit(
            "subagent.started",
            subagent=name,
            description=description,
            subagent_type=kind,
            request=request_id,
        )
        if self.hooks is not None and self.hooks.configured("SubagentStart"):
            verdict = await self.hooks.fire("SubagentStart", agent_id=name, agent_type=kind)
            if verdict.context:
                prompt = (
                    f'{prompt}\n\n<hook-feedback event="SubagentStart">{verdict.context}'
                    "</hook-feedback>"
                )
        request = self.parent.request(name, PROMPT, {"text": prompt}, id=request_id)

        def make(ctx: ActorContext) -> Lead:
            loop = self.host.loop(
                ctx,
                "subagent",
                registry,
                role_prompt=role_prompt,
                gate=gate,
                depth=self.depth + 1,
                parent=self.parent.name,
                agent_type=kind,
                model_name=model if model is not None else model_name,
                workspace=workspace if workspace is not None else self.workspace,
                schema=schema,
            )
            return Subagent(loop)

        async def gave_up(reason: str) -> None:
            body = {"result": f"The subagent crashed repeatedly: {reason}", "is_error": True}
            await self.parent.post.send(
                Message.new(name, self.parent.name, RESULT, body, correlation_id=request.id)
            )

        events = self.host.events
        spec = actor_spec(name, make, self.parent.post, events=events, restart=Restart.TRANSIENT)
        await self.host.start_subagent(isolated(spec, events=events, on_give_up=gave_up))
        await self.parent.post.send(request)
        delivery = await self.parent.reply_for(request.id)
        await self.parent.done(delivery)
        body: dict[str, Any] = delivery.message.body
        self.parent.emit("subagent.finished", subagent=name, is_error=bool(body["is_error"]))
        if schema is None or body["is_error"]:
            return ToolResult(str(body["result"]), is_error=bool(body["is_error"]))
        answer = body.get("structured_output")
        if answer is None:
            return ToolResult(
                f"The subagent gave no answer fitting the schema: {body['result']}", is_error=True
            )
        return ToolResult(json.dumps(answer, ensure_ascii=False))


__all__ = ["MAX_DEPTH", "Subagent", "SubagentHost", "Subagents"]
