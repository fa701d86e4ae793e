"""How full the lead's context is: the Agent SDK's ``get_context_usage``.

:class:`ContextMeter` folds the run's events (pure; the session feeds it):
the size of the lead's requests as the API reported them (input, cache
reads and writes, plus the reply that joins the history). The first request
of the run is the part every request starts with (system prompt, tools,
memory, the first prompt); what came after it is the conversation. These
are measured figures, not estimates by category: coterie does not split
the fixed part further, and says so in the category's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from coterie.events import Event

__all__ = ["ContextMeter"]


def _size(usage: Any) -> int:
    if not isinstance(usage, dict):
        return 0
    keys = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    return sum(int(usage.get(k) or 0) for k in keys)


@attrs.define
class ContextMeter:
    """The lead's context as its requests measured it."""

    #: The actor whose context this is.
    actor: str = "lead"
    first: int = 0
    last: int = 0
    model: str = ""

    def event(self, event: Event) -> None:
        """Take one event of the run (the lead's replies matter)."""
        if event.type != "agent.message" or event.data.get("actor") != self.actor:
            return
        usage = event.data.get("usage")
        size = _size(usage) + int((usage or {}).get("output_tokens") or 0)
        if size <= 0:
            return
        if not self.first:
            self.first = _size(usage)
        self.last = size
        self.model = str(event.data.get("model") or self.model)

    def usage(self, *, model: str, window: int, compact_at: int) -> dict[str, Any]:
        """The answer to ``get_context_usage``, in the Agent SDK's shape, for a
        context *window* compacted past *compact_at* tokens."""
        total = self.last
        fixed = min(self.first, total)
        categories = [
            {"name": "System prompt, tools, memory and first prompt", "tokens": fixed},
            {"name": "Messages", "tokens": total - fixed},
            {"name": "Free space", "tokens": max(compact_at - total, 0)},
            {"name": "Autocompact buffer", "tokens": max(window - compact_at, 0)},
        ]
        return {
            "categories": [{**c, "color": ""} for c in categories],
            "totalTokens": total,
            "maxTokens": compact_at,
            "rawMaxTokens": window,
            "percentage": round(100 * total / window, 1) if window else 0.0,
            "model": self.model or model,
            "isAutoCompactEnabled": True,
            "autoCompactThreshold": compact_at,
            "memoryFiles": [],
            "mcpTools": [],
            "agents": [],
            "gridRows": [],
        }
