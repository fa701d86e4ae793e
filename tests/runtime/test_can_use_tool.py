"""``open_agent(can_use_tool=...)``: the typed permission callback of an embedding
program, asked what a person would be asked (coterie.toolpermission)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.session import open_agent
from coterie.toolpermission import Allow, Deny, PermissionContext

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.agent import RunResult


def bash(command: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


async def run(
    tmp_path: Path, decide: Any, turns: list[dict[str, Any]] | None = None
) -> tuple[Path, RunResult]:
    scen = tmp_path / "s.json"
    turns = turns or [bash("touch made.txt"), {"text": "done"}]
    scen.write_text(json.dumps({"name": "can-use-tool", "tracks": {"lead": turns}}))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    async with open_agent(workdir, scenario=str(scen), can_use_tool=decide) as session:
        with trio.fail_after(60):
            return workdir, await session.query("go")


async def test_an_allow_runs_the_call_and_the_context_says_why(tmp_path: Path) -> None:
    seen: list[tuple[str, dict[str, Any], PermissionContext]] = []

    async def decide(tool: str, input: dict[str, Any], context: PermissionContext) -> Allow:
        seen.append((tool, input, context))
        return Allow()

    workdir, result = await run(tmp_path, decide)
    assert (workdir / "made.txt").exists()
    assert result.result == "done"
    [(tool, input, context)] = seen
    assert (tool, input) == ("Bash", {"command": "touch made.txt"})
    assert context.agent_id == "lead"
    assert context.tool_use_id
    assert context.suggestion == "Bash(touch:*)"
    assert context.reason


async def test_a_deny_is_what_the_model_reads(tmp_path: Path) -> None:
    async def decide(tool: str, input: dict[str, Any], context: PermissionContext) -> Deny:
        return Deny("not in this folder")

    turns = [bash("touch made.txt"), {"expect": "not in this folder", "text": "understood"}]
    workdir, result = await run(tmp_path, decide, turns)
    assert not (workdir / "made.txt").exists()
    assert result.result == "understood"


async def test_an_allow_may_rewrite_the_input_which_is_judged_again(tmp_path: Path) -> None:
    async def decide(tool: str, input: dict[str, Any], context: PermissionContext) -> Allow:
        return Allow(updated_input={"command": "touch other.txt"})

    workdir, _ = await run(tmp_path, decide)
    assert (workdir / "other.txt").exists()
    assert not (workdir / "made.txt").exists()


async def test_a_granted_rule_holds_for_the_rest_of_the_run(tmp_path: Path) -> None:
    asked: list[str] = []

    async def decide(tool: str, input: dict[str, Any], context: PermissionContext) -> Allow:
        asked.append(input["command"])
        return Allow(grant=context.suggestion)

    turns = [bash("touch a.txt"), bash("touch b.txt"), {"text": "done"}]
    workdir, _ = await run(tmp_path, decide, turns)
    assert asked == ["touch a.txt"]
    assert (workdir / "b.txt").exists()


@pytest.mark.parametrize("verdict", ["yes", None, RuntimeError("broken")])
async def test_anything_but_allow_or_deny_denies(tmp_path: Path, verdict: object) -> None:
    async def decide(tool: str, input: dict[str, Any], context: PermissionContext) -> Any:
        if isinstance(verdict, Exception):
            raise verdict
        return verdict

    workdir, result = await run(tmp_path, decide)
    assert not (workdir / "made.txt").exists()
    assert result.result == "done"


async def test_an_asker_and_a_callback_together_are_refused(tmp_path: Path) -> None:
    async def decide(tool: str, input: dict[str, Any], context: PermissionContext) -> Allow:
        return Allow()

    class Yes:
        async def ask(self, tool_name: str, input: dict[str, Any], reason: str) -> bool:
            return True

    with pytest.raises(TypeError, match="not both"):
        async with open_agent(tmp_path, asker=Yes(), can_use_tool=decide):
            pass
