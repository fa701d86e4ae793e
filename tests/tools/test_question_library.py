"""AskUserQuestion and ExitPlanMode answered by an embedding program's typed
``can_use_tool`` (``open_agent(can_use_tool=...)``), in process (issue 27)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import trio

from coterie.session import open_agent
from coterie.toolpermission import Allow
from tests.tools.questions import QUESTION

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.agent import RunResult
    from coterie.toolpermission import PermissionContext


async def run(tmp_path: Path, decide: Any, turns: list[dict[str, Any]], **options: Any) -> Path:
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps({"name": "question", "tracks": {"lead": turns}}))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    async with open_agent(workdir, scenario=str(scen), can_use_tool=decide, **options) as session:
        with trio.fail_after(60):
            result: RunResult = await session.query("go")
    assert result.result == "done", result
    return workdir


async def test_the_callbacks_answers_are_what_the_model_reads(tmp_path: Path) -> None:
    seen: list[str] = []

    async def decide(tool: str, input: dict[str, Any], context: PermissionContext) -> Allow:
        seen.append(tool)
        return Allow(updated_input={**input, "answers": {QUESTION["question"]: "Postgres"}})

    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "AskUserQuestion", "input": {"questions": [QUESTION]}}]},
        {"expect": '"Which database should we use?"="Postgres"', "text": "done"},
    ]
    await run(tmp_path, decide, turns)
    assert seen == ["AskUserQuestion"]


async def test_the_callbacks_yes_to_a_plan_leaves_plan_mode(tmp_path: Path) -> None:
    """Then the run is in ``default``: the Write after it is asked about, and allowed."""
    seen: list[str] = []

    async def decide(tool: str, input: dict[str, Any], context: PermissionContext) -> Allow:
        seen.append(tool)
        return Allow()

    write = {"file_path": "a.txt", "content": "x"}
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "ExitPlanMode", "input": {"plan": "1. write a.txt"}}]},
        {"expect": "approved your plan", "tool_uses": [{"name": "Write", "input": write}]},
        {"text": "done"},
    ]
    workdir = await run(tmp_path, decide, turns, permission_mode="plan")
    assert seen == ["ExitPlanMode", "Write"]
    assert (workdir / "a.txt").read_text() == "x"
