"""ScheduleWakeup: in a dynamic ``--loop``, the agent says when to run again.

It exists only during a dynamic loop (the runtime registers it then). The
call itself only answers; the runtime reads the last ``ScheduleWakeup`` of a
tick from the agent's history (:func:`last_wakeup`), so a resumed run finds
it in the durable transcript. Not calling it ends the loop ("converged"), and
so does calling it with ``stop: true``. Claude Code's inputs: none required (a
missing ``delaySeconds`` is the minimum); ``noop: true`` says the pass changed
nothing, which Claude Code folds away on screen and coterie accepts and ignores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.autonomy import clamp_delay
from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from collections.abc import Sequence

    from coterie.tools._base import ToolContext

__all__ = ["ScheduleWakeupTool", "last_wakeup"]

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "delaySeconds": {
            "type": "number",
            "description": "Seconds until the next run (clamped to 60..3600)",
        },
        "reason": {"type": "string", "description": "Why then"},
        "prompt": {"type": "string", "description": "What to do next time (default: the same)"},
        "stop": {"type": "boolean", "description": "true: end the loop after this pass"},
        "noop": {
            "type": "boolean",
            "description": "true: this pass changed nothing and has nothing new to report",
        },
    },
    "required": [],
    "additionalProperties": False,
}


class ScheduleWakeupTool:
    """Asks to be run again after a delay (dynamic loops only)."""

    name = "ScheduleWakeup"
    description = (
        "You are running in a loop. Call this to be woken up again after delaySeconds"
        " (clamped to 60..3600 seconds) with prompt (default: the same prompt). If you do not"
        " call it (or call it with stop: true), the loop ends: do that when the work has"
        " converged and nothing needs checking again."
    )
    input_schema = _SCHEMA
    capabilities = Capabilities(Effect.RUN_STATE, needs="loop")

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if input.get("stop") is True:
            return ToolResult(f"The loop ends after this pass: {input.get('reason', '')}".strip())
        delay = clamp_delay(input.get("delaySeconds"))
        return ToolResult(f"Wake-up scheduled in {delay} s: {input.get('reason', '')}".strip())


def last_wakeup(messages: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The last ``ScheduleWakeup`` of the current request (since its prompt), clamped;
    only a call that succeeded counts (one the tool was not there for, or that was
    denied or blocked, scheduled nothing); a last one with ``stop: true`` schedules
    nothing either."""
    succeeded: set[str] = set()
    for message in reversed(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        if message.get("role") == "user":
            succeeded |= {
                str(b.get("tool_use_id"))
                for b in content
                if b.get("type") == "tool_result" and not b.get("is_error")
            }
        if message.get("role") == "user" and any(
            b.get("type") == "text" and not str(b.get("text", "")).startswith("<system-reminder>")
            for b in content
        ):
            return None  # reached the request itself
        if message.get("role") != "assistant":
            continue
        for block in reversed(content):
            if (
                block.get("type") == "tool_use"
                and block.get("name") == ScheduleWakeupTool.name
                and str(block.get("id")) in succeeded
            ):
                data = block.get("input") or {}
                if data.get("stop") is True:
                    return None
                return {
                    "delaySeconds": clamp_delay(data.get("delaySeconds")),
                    "reason": str(data.get("reason", "")),
                    "prompt": data.get("prompt") if isinstance(data.get("prompt"), str) else None,
                }
    return None
