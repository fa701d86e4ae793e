"""What the headless views learn from a run's events besides what they show.

:class:`RunRecord` is fed every event in order (a pure accumulator, no I/O)
and keeps what Claude Code's result and message objects carry that no single
event says: the permission denials of the turn (each with the call it
denied: the agent's last tool call of that tool, as an agent runs its calls
one at a time), the time spent waiting for the model, the tokens and cost
of every model's replies (``modelUsage``: subagents' included, as Claude
Code counts them), the stop reason of the last reply of an agent that is not
a subagent, and, for each subagent, the ``tool_use_id`` of the Agent call
that started it (its messages' ``parent_tool_use_id``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.context.tokens import context_window
from coterie.models import Usage, cost_usd

if TYPE_CHECKING:
    from coterie.events import Event

__all__ = ["RunRecord"]


@attrs.define
class RunRecord:
    """Permission denials, model time and usage, and subagents' parents, from the events."""

    #: ``{tool_name, tool_use_id, tool_input}`` of each denied call since the last result.
    denials: list[dict[str, Any]] = attrs.field(factory=list)
    #: Milliseconds spent waiting for model replies since the last result.
    api_ms: float = 0.0
    #: Each subagent's starting Agent call's id, by the subagent's actor name.
    parents: dict[str, str] = attrs.field(factory=dict)
    #: Claude Code's ``modelUsage`` since the last result: per model, its tokens and cost.
    model_usage: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    #: The stop reason of the last reply of an agent that is not a subagent.
    stop_reason: str | None = None
    _calls: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    _asked: dict[str, float] = attrs.field(factory=dict)

    def event(self, event: Event) -> None:
        d = event.data
        actor = str(d.get("actor", d.get("agent", "")))
        match event.type:
            case "agent.tool_call":
                self._calls[actor] = d
            case "permission.denied":
                call = self._calls.get(actor)
                if call is not None and call.get("name") == d.get("tool"):
                    self.denials.append(
                        {
                            "tool_name": call["name"],
                            "tool_use_id": call["id"],
                            "tool_input": call["input"],
                        }
                    )
            case "subagent.started":
                call = self._calls.get(actor)
                if call is not None and isinstance(d.get("subagent"), str):
                    self.parents[d["subagent"]] = str(call["id"])
            case "model.requested":
                self._asked[actor] = event.ts
            case "agent.message":
                asked = self._asked.pop(actor, None)
                if asked is not None:
                    self.api_ms += max(0.0, event.ts - asked) * 1000
                self._count(str(d.get("model") or ""), d.get("usage"))
                if actor not in self.parents:
                    self.stop_reason = d.get("stop_reason")

    def _count(self, model: str, usage: Any) -> None:
        """Add one reply's *usage* to *model*'s entry of :attr:`model_usage`."""
        if not isinstance(usage, dict):
            return
        tokens = Usage(**{k: int(usage.get(k) or 0) for k in attrs.fields_dict(Usage)})
        entry = self.model_usage.setdefault(
            model,
            {
                "inputTokens": 0,
                "outputTokens": 0,
                "cacheReadInputTokens": 0,
                "cacheCreationInputTokens": 0,
                "webSearchRequests": 0,
                "costUSD": 0.0,
                "contextWindow": context_window(model),
            },
        )
        entry["inputTokens"] += tokens.input_tokens
        entry["outputTokens"] += tokens.output_tokens
        entry["cacheReadInputTokens"] += tokens.cache_read_input_tokens
        entry["cacheCreationInputTokens"] += tokens.cache_creation_input_tokens
        entry["costUSD"] += cost_usd(model, tokens)

    def parent_of(self, actor: str) -> str | None:
        """The ``tool_use_id`` of the call that started *actor* (None: not a subagent)."""
        return self.parents.get(actor)

    def result_fields(self) -> dict[str, Any]:
        """The fields a result gets from the record; the record starts over."""
        fields = {
            "duration_api_ms": int(self.api_ms),
            "permission_denials": self.denials,
            "modelUsage": self.model_usage,
            "stop_reason": self.stop_reason,
        }
        self.denials, self.api_ms, self.model_usage, self.stop_reason = [], 0.0, {}, None
        return fields
