"""The model behind ``prompt`` and ``agent`` hooks: the thin Trio layer of :mod:`.judgement`.

A :class:`Judge` holds the run's model (the metered one, so that every call's
spend goes to the run's ledger and counts against its budget) and, for
``agent`` hooks, the read-only tools the verifying subagent may use
(:class:`HookTools`, :mod:`.readtools`). A ``prompt`` hook is one call with
no tools, made as actor ``<agent>-hook-prompt`` in role ``hook-prompt`` (so a
scenario's ``hook-prompt`` track answers it, as ``webfetch`` answers
WebFetch's side calls); an ``agent`` hook is a short loop in role
``hook-agent`` (track ``hook-agent``): the model may call Read, Grep and Glob,
up to :data:`MAX_TURNS` replies, and its last text is the answer. The model
is the hook's ``model``, else ``ANTHROPIC_SMALL_FAST_MODEL`` when set, else the
run's own: what Claude Code 2.1.332 asks (observed against the mock server:
with no ``model`` and no ``ANTHROPIC_SMALL_FAST_MODEL`` its prompt hook went
to the session's model).
A failed call is raised as the model's error; the caller reads it as no
answer (:func:`~coterie.hooks.judgement.judge_failed`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from coterie.hooks.judgement import AGENT_NOTE, JUDGE_SYSTEM, with_arguments
from coterie.models import ModelRequest
from coterie.models.aliases import resolve_model

if TYPE_CHECKING:
    from coterie.hooks.config import Handler
    from coterie.models import Model

__all__ = ["MAX_TURNS", "SMALL_MODEL_ENV", "HookTools", "Judge"]

#: The variable naming the model of background calls, hooks' included.
SMALL_MODEL_ENV = "ANTHROPIC_SMALL_FAST_MODEL"
#: How many replies an ``agent`` hook's subagent may give before it must have decided.
MAX_TURNS = 50
_MAX_TOKENS = 2048


class HookTools(Protocol):
    """The tools an ``agent`` hook may use: read-only, in the workspace."""

    def schemas(self) -> list[dict[str, Any]]:
        """The tools' definitions as the Messages API takes them."""
        ...

    async def run(self, name: str, input: Any) -> tuple[str, bool]:
        """Run tool *name* on *input*: its result's text and whether it is an error."""
        ...


@attrs.frozen
class Judge:
    """Asks the run's *model* what the ``prompt`` and ``agent`` hooks need answered."""

    model: Model
    #: The ``agent`` hooks' tools (None: an agent hook decides from its prompt alone).
    tools: HookTools | None = None
    #: The model of a hook naming none (None: the run's own).
    small_model: str | None = attrs.field(factory=lambda: os.environ.get(SMALL_MODEL_ENV) or None)

    async def answer(self, handler: Handler, payload: str, agent: str) -> str:
        """The model's final text for *handler* (a ``prompt`` or ``agent`` hook) on the
        hook input *payload*, asked on behalf of *agent*."""
        prompt = with_arguments(handler.target, payload)
        purpose = f"hook-{handler.type}"
        system = JUDGE_SYSTEM if handler.type == "prompt" else JUDGE_SYSTEM + AGENT_NOTE
        tools = self.tools if handler.type == "agent" else None
        messages: list[dict[str, Any]] = [
            {"role": "user", "content": [{"type": "text", "text": prompt}]}
        ]
        text = ""
        for _ in range(MAX_TURNS):
            request = ModelRequest(
                system=system,
                messages=messages,
                tools=tools.schemas() if tools is not None else [],
                max_tokens=_MAX_TOKENS,
                actor=f"{agent}-{purpose}",
                role=purpose,
                model=resolve_model(handler.model) if handler.model else self.small_model,
            )
            reply = await self.model.complete(request)
            text = reply.text
            uses = reply.tool_uses
            if tools is None or not uses:
                return text
            messages.append({"role": "assistant", "content": reply.content})
            results = []
            for use in uses:
                output, is_error = await tools.run(str(use.get("name")), use.get("input"))
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": use.get("id"),
                        "content": output,
                        "is_error": is_error,
                    }
                )
            messages.append({"role": "user", "content": results})
        return text
