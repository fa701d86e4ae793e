"""The loop on a durable transcript: prompts are marked, a restart goes on."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.agent import AgentLoop
from coterie.context import TranscriptLog
from coterie.models import ScriptedModel, parse_scenario
from coterie.tools import PermissionGate, PermissionPolicy, ToolContext, default_registry

if TYPE_CHECKING:
    from pathlib import Path


def loop_on(tmp_path: Path, turns: list[dict[str, Any]]) -> AgentLoop:
    log = TranscriptLog.open(tmp_path / "t.log", "none")
    model = ScriptedModel(
        parse_scenario({"name": "s", "tracks": {"lead": turns}}),
        state_path=tmp_path / "state.json",
    )
    return AgentLoop(
        model=model,
        registry=default_registry(),
        gate=PermissionGate(PermissionPolicy.from_rules(mode="bypassPermissions"), None),
        tools=ToolContext(workspace=tmp_path),
        system="test",
        transcript=log,
        messages=log.load(),
    )


TURNS = [
    {"tool_uses": [{"name": "TodoWrite", "input": {"todos": []}}]},
    {"text": "done"},
]


async def test_the_prompt_id_is_recorded_with_the_prompt(tmp_path: Path) -> None:
    loop = loop_on(tmp_path, TURNS)
    await loop.run("go", prompt_id="p-1")
    assert loop.transcript is not None
    loop.transcript.close()
    again = TranscriptLog.open(tmp_path / "t.log", "none")
    assert again.prompt_ids == {"p-1"}
    assert [m["role"] for m in again.load()] == ["user", "assistant", "user", "assistant"]
    again.close()


async def test_resuming_a_finished_run_answers_without_calling_the_model(
    tmp_path: Path,
) -> None:
    first = loop_on(tmp_path, TURNS)
    await first.run("go", prompt_id="p-1")
    assert first.transcript is not None
    first.transcript.close()
    second = loop_on(tmp_path, TURNS)  # the scenario has no turns left for it
    result = await second.resume()
    assert (result.result, result.num_turns, result.is_error) == ("done", 0, False)


async def test_a_request_after_an_interrupted_turn_keeps_the_roles_alternating(
    tmp_path: Path,
) -> None:
    """Found by bench/chaos.py (a full disk, then resume, through the SDK): the history
    ended with the interrupted tools' results (a user message) and the next request
    was appended as another user message: "roles must alternate" (400)."""
    log = TranscriptLog.open(tmp_path / "t.log", "none")
    model = ScriptedModel(
        parse_scenario({"name": "s", "tracks": {"lead": [{"text": "went on"}]}}),
        state_path=tmp_path / "state.json",
        strict=True,  # checks each request as the Messages API does
    )
    interrupted = [
        {"role": "user", "content": [{"type": "text", "text": "first"}]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "TodoWrite", "input": {"todos": []}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "interrupted",
             "is_error": True},
        ]},
    ]  # fmt: skip
    loop = AgentLoop(
        model=model,
        registry=default_registry(),
        gate=PermissionGate(PermissionPolicy.from_rules(mode="bypassPermissions"), None),
        tools=ToolContext(workspace=tmp_path),
        system="test",
        transcript=log,
        messages=interrupted,
    )
    result = await loop.run("next request")
    assert (result.result, result.subtype) == ("went on", "success")
    assert [m["role"] for m in loop.messages] == ["user", "assistant", "user", "assistant"]
    assert loop.messages[2]["content"][-1] == {"type": "text", "text": "next request"}
    log.close()
    reopened = TranscriptLog.open(tmp_path / "t.log", "none")
    assert [m["role"] for m in reopened.load()] == ["user", "assistant"]  # only what it logged
    reopened.close()
