"""The Agent tool's ``run_in_background`` (Claude Code's): false runs the subagent as
always; true is an error result until coterie has background subagents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.tools import ToolContext, ToolResult
from coterie.tools._schema import validate
from coterie.tools.task import TaskTool

if TYPE_CHECKING:
    from pathlib import Path

GREET = {"description": "Greet", "prompt": "say hi"}


def test_the_schema_takes_run_in_background_as_a_boolean() -> None:
    schema = TaskTool().input_schema
    assert validate(schema, {**GREET, "run_in_background": False}) == []
    assert validate(schema, {**GREET, "run_in_background": True}) == []
    assert validate(schema, {**GREET, "run_in_background": "yes"}) != []
    assert validate(schema, {**GREET, "in_background": True}) != []  # still closed


async def test_in_the_foreground_the_subagent_runs(tmp_path: Path) -> None:
    started: list[str] = []

    async def subagents(description: str, prompt: str, kind: str, **_: object) -> ToolResult:
        started.append(prompt)
        return ToolResult("hi")

    ctx = ToolContext(workspace=tmp_path, subagents=subagents)
    result = await TaskTool().run({**GREET, "run_in_background": False}, ctx)
    assert (result.content, result.is_error, started) == ("hi", False, ["say hi"])


async def test_in_the_background_it_is_an_error_and_nothing_starts(tmp_path: Path) -> None:
    started: list[str] = []

    async def subagents(description: str, prompt: str, kind: str, **_: object) -> ToolResult:
        started.append(prompt)
        return ToolResult("hi")

    ctx = ToolContext(workspace=tmp_path, subagents=subagents)
    result = await TaskTool().run({**GREET, "run_in_background": True}, ctx)
    assert result.is_error
    assert "not available yet" in str(result.content)
    assert started == []
