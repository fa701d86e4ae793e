"""Task: a one-shot subagent with a fresh context, returning only its final text.

The tool only checks its input and hands it to ``ToolContext.subagents``,
the runtime's way of starting a subagent actor (its own transcript, the
parent's permission gate, so it can never do more than its parent may).
Without one (or past the nesting limit) the tool is an error result.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = ["SUBAGENT_TYPES", "TaskTool"]

#: The kinds of subagent: what each may use. ``general-purpose`` has its
#: parent's tools but the team's; ``Explore`` only reads.
SUBAGENT_TYPES: dict[str, str] = {
    "general-purpose": "Researches, searches and changes code with its parent's tools.",
    "Explore": "Searches and reads the codebase (Read, Glob, Grep); no edits, no commands.",
}

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "minLength": 1, "description": "3-5 word summary"},
        "prompt": {"type": "string", "minLength": 1, "description": "The task, in full"},
        "subagent_type": {
            "type": "string",
            "description": f"One of {', '.join(SUBAGENT_TYPES)} (default general-purpose)",
        },
    },
    "required": ["description", "prompt"],
    "additionalProperties": False,
}


class TaskTool:
    """Runs a subagent on a self-contained task and returns its final answer."""

    name = "Task"
    description = (
        "Launch a subagent for a self-contained task. It starts with a fresh context (it"
        " sees only your prompt, so include everything it needs), works with the same"
        " permissions as you, and returns only its final answer. Use it to keep long searches"
        " or investigations out of your own context. Types: "
        + "; ".join(f"{k}: {v}" for k, v in SUBAGENT_TYPES.items())
    )
    input_schema = _SCHEMA
    read_only = False

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The subagent's final text (an error result if it failed or cannot start)."""
        kind = input.get("subagent_type") or "general-purpose"
        if kind not in SUBAGENT_TYPES:
            return ToolResult(
                f"Unknown subagent_type {kind!r}; use one of: {', '.join(SUBAGENT_TYPES)}.",
                is_error=True,
            )
        if ctx.subagents is None:
            return ToolResult(
                "Subagents are not available here (the nesting limit is reached).", is_error=True
            )
        return await ctx.subagents(input["description"], input["prompt"], kind)
