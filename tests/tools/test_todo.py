"""TodoWrite and the stale-plan reminder."""

from __future__ import annotations

from coterie.events import EventLog
from coterie.tools import TodoWriteTool, ToolContext, default_registry, execute_tool_call
from coterie.tools.todo import todo_reminder

todo = TodoWriteTool()
PLAN = [
    {"content": "Write tests", "status": "completed", "activeForm": "Writing tests"},
    {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
    {"content": "Open a PR", "status": "pending"},
]


async def test_todo_write_stores_the_plan(ctx: ToolContext) -> None:
    ctx.turns_since_todo_update = 7
    ctx.events = EventLog()
    result = await todo.run({"todos": PLAN}, ctx)
    assert not result.is_error
    assert ctx.todos == PLAN
    assert ctx.turns_since_todo_update == 0
    assert "[x] Write tests" in result.content
    assert "[>] Fix the bug" in result.content
    assert ctx.events.of_type("tool.todos")


async def test_todo_write_replaces_the_whole_list(ctx: ToolContext) -> None:
    await todo.run({"todos": PLAN}, ctx)
    await todo.run({"todos": [{"content": "Only", "status": "pending"}]}, ctx)
    assert ctx.todos == [{"content": "Only", "status": "pending"}]


async def test_todo_write_notes_several_in_progress(ctx: ToolContext) -> None:
    items = [{"content": c, "status": "in_progress"} for c in ("a", "b")]
    result = await todo.run({"todos": items}, ctx)
    assert "2 items are in_progress" in result.content


async def test_a_bad_status_is_rejected_by_the_schema(ctx: ToolContext) -> None:
    input = {"todos": [{"content": "x", "status": "done"}]}
    result = await execute_tool_call(default_registry(), None, "TodoWrite", input, ctx)
    assert result.is_error
    assert "todos[0].status must be one of" in result.content
    assert ctx.todos == []


async def test_empty_content_is_rejected(ctx: ToolContext) -> None:
    input = {"todos": [{"content": "", "status": "pending"}]}
    result = await execute_tool_call(default_registry(), None, "TodoWrite", input, ctx)
    assert result.is_error


def test_no_reminder_while_the_plan_is_fresh(ctx: ToolContext) -> None:
    ctx.turns_since_todo_update = 3
    assert todo_reminder(ctx, after_turns=5) is None


async def test_reminder_after_n_turns_shows_the_plan(ctx: ToolContext) -> None:
    await todo.run({"todos": PLAN}, ctx)
    ctx.turns_since_todo_update = 5
    reminder = todo_reminder(ctx, after_turns=5)
    assert reminder is not None
    assert reminder.startswith("<system-reminder>")
    assert "[>] Fix the bug" in reminder


def test_reminder_without_a_plan_suggests_one(ctx: ToolContext) -> None:
    ctx.turns_since_todo_update = 10
    reminder = todo_reminder(ctx)
    assert reminder is not None
    assert "consider using TodoWrite" in reminder


def test_reminder_repeats_every_n_turns_not_every_turn(ctx: ToolContext) -> None:
    fired = []
    for turn in range(1, 13):
        ctx.turns_since_todo_update = turn
        if todo_reminder(ctx, after_turns=4):
            fired.append(turn)
    assert fired == [4, 8, 12]
