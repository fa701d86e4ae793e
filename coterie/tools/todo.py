"""TodoWrite: the agent's plan, and the reminder when it goes stale.

The whole list is replaced on every call (as in Claude Code) and kept in
``ctx.todos``. The turn loop counts turns in ``ctx.turns_since_todo_update``
(TodoWrite resets it) and asks :func:`todo_reminder` each turn for a
``<system-reminder>`` to add to the next user message.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext

__all__ = ["DEFAULT_REMINDER_TURNS", "TODO_WRITE", "TodoWriteTool", "format_todos", "todo_reminder"]

#: The tool's name.
TODO_WRITE = "TodoWrite"

DEFAULT_REMINDER_TURNS = 10
STATUSES = ("pending", "in_progress", "completed")
_MARKS = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}

_TODO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "todos": {
            "type": "array",
            "description": "The updated todo list (replaces the previous one)",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string", "minLength": 1},
                    "status": {"type": "string", "enum": list(STATUSES)},
                    "activeForm": {"type": "string", "minLength": 1},
                },
                "required": ["content", "status"],
                # Older Claude Code schemas also sent id and priority; accept and keep them.
                "additionalProperties": True,
            },
        },
    },
    "required": ["todos"],
    "additionalProperties": False,
}


def format_todos(todos: list[dict[str, Any]]) -> str:
    """The list one item a line, with a status mark: ``[ ]``, ``[>]``, ``[x]``."""
    if not todos:
        return "(the todo list is empty)"
    return "\n".join(f"{i}. {_MARKS[t['status']]} {t['content']}" for i, t in enumerate(todos, 1))


class TodoWriteTool:
    """Replaces the agent's todo list."""

    name = TODO_WRITE
    description = (
        "Creates and updates a structured todo list for the current task, to plan multi-step"
        " work and show progress. Send the whole list every time; each item has content, a"
        " status (pending, in_progress, completed) and optionally activeForm (the present"
        " continuous form, e.g. 'Running tests'). Keep exactly one item in_progress while"
        " working, and mark items completed as soon as they are done."
    )
    input_schema = _TODO_SCHEMA
    # Read-only: it keeps the agent's own notes and changes nothing else.
    capabilities = Capabilities(Effect.READ_ONLY, deferred_in_team=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Store the list in ``ctx.todos`` and reset the staleness counter."""
        todos = [dict(item) for item in input["todos"]]
        ctx.todos = todos
        ctx.turns_since_todo_update = 0
        if ctx.events is not None:
            ctx.events.emit("tool.todos", agent=ctx.agent, todos=todos)
        in_progress = sum(1 for t in todos if t["status"] == "in_progress")
        note = ""
        if in_progress > 1:
            note = f"\nNote: {in_progress} items are in_progress; keep it to one at a time."
        return ToolResult(
            "Todos have been modified successfully. Keep using the todo list to track your"
            " progress, and proceed with the current task.\n\n" + format_todos(todos) + note
        )


def todo_reminder(ctx: ToolContext, after_turns: int = DEFAULT_REMINDER_TURNS) -> str | None:
    """A system-reminder when the plan has not been touched for *after_turns* turns.

    It comes back every *after_turns* turns while the plan stays untouched,
    not on every turn, so it nudges without drowning the conversation.
    """
    turns = ctx.turns_since_todo_update
    if after_turns <= 0 or turns < after_turns or turns % after_turns:
        return None
    if ctx.todos:
        body = (
            "The TodoWrite tool hasn't been used recently. If the plan below has changed or"
            " items are done, update it with TodoWrite; don't mention this reminder to the"
            " user.\n\nCurrent todo list:\n" + format_todos(ctx.todos)
        )
    else:
        body = (
            "The TodoWrite tool hasn't been used recently. If you are working on a task with"
            " several steps, consider using TodoWrite to plan and track it; otherwise ignore"
            " this reminder and don't mention it to the user."
        )
    return f"<system-reminder>\n{body}\n</system-reminder>"
