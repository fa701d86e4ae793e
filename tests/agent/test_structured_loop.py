"""The turn loop of a prompt whose answer comes through StructuredOutput: on a durable
transcript, after a restart, and from an embedding program (``open_agent(json_schema=)``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import trio

from coterie.agent import AgentLoop
from coterie.context import TranscriptLog
from coterie.models import ScriptedModel, parse_scenario
from coterie.session import open_agent
from coterie.tools import (
    PermissionGate,
    PermissionPolicy,
    StructuredOutputTool,
    ToolContext,
    ToolRegistry,
    default_registry,
)

if TYPE_CHECKING:
    from pathlib import Path

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


def answer(value: dict[str, Any]) -> dict[str, Any]:
    return {"tool_uses": [{"name": "StructuredOutput", "input": value}]}


def loop_on(tmp_path: Path, turns: list[dict[str, Any]]) -> AgentLoop:
    log = TranscriptLog.open(tmp_path / "t.log", "none")
    model = ScriptedModel(
        parse_scenario({"name": "s", "tracks": {"lead": turns}}),
        state_path=tmp_path / "state.json",
    )
    output = StructuredOutputTool(SCHEMA)
    return AgentLoop(
        model=model,
        registry=ToolRegistry.of([*default_registry(), output]),
        gate=PermissionGate(PermissionPolicy.from_rules(mode="default"), None),
        tools=ToolContext(workspace=tmp_path),
        system="test",
        transcript=log,
        messages=log.load(),
        output=output,
    )


async def test_the_tool_needs_no_permission_in_default_mode(tmp_path: Path) -> None:
    """Nobody can answer a question here: the answer passes without one."""
    result = await loop_on(tmp_path, [answer({"n": 1})]).run("go")
    assert (result.subtype, result.structured_output) == ("success", {"n": 1})


async def test_a_restarted_agent_finds_the_answer_its_history_recorded(tmp_path: Path) -> None:
    """The answer was recorded, then the agent stopped before its result went out: the
    restart ends with it, without calling the model (the scenario has no turn left)."""
    first = loop_on(tmp_path, [answer({"n": 7})])
    await first.run("go", prompt_id="p-1")
    assert first.transcript is not None
    first.transcript.close()
    again = loop_on(tmp_path, [])
    result = await again.resume("p-1")
    assert (result.subtype, result.structured_output, result.num_turns) == ("success", {"n": 7}, 0)


async def test_a_restart_after_a_text_reply_reminds_the_model(tmp_path: Path) -> None:
    """The history ends with the model's prose (the agent stopped before it was
    reminded): the restart reminds it, and its answer ends the prompt."""
    log = TranscriptLog.open(tmp_path / "t.log", "none")
    await log.append_message({"role": "user", "content": "go"}, prompt_id="p-1", meta={})
    await log.append_message({"role": "assistant", "content": [{"type": "text", "text": "7"}]})
    log.close()
    again = loop_on(tmp_path, [{"expect": "StructuredOutput", **answer({"n": 7})}])
    result = await again.resume("p-1")
    assert (result.subtype, result.structured_output) == ("success", {"n": 7})


async def test_open_agent_takes_a_json_schema(tmp_path: Path) -> None:
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"tracks": {"lead": [answer({"n": 42})]}}))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    async with open_agent(workdir, scenario=str(scenario), json_schema=SCHEMA) as session:
        with trio.fail_after(60):
            result = await session.query("go")
    assert result.structured_output == {"n": 42}
    assert json.loads(result.result) == {"n": 42}
    assert session.options.json_schema == SCHEMA
