"""What a host may ask of a running session: stop a subagent's work
(``stop_task``) and how full the lead's context is (``get_context_usage``)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import trio

from coterie.session import open_agent

if TYPE_CHECKING:
    from pathlib import Path

SLOW = {"tool_uses": [{"name": "Bash", "input": {"command": "sleep 30; touch late.txt"}}]}
DELEGATE = {"tool_uses": [{"name": "Task", "input": {"description": "slow", "prompt": "wait"}}]}


def scenario(tmp_path: Path, tracks: dict[str, list[dict[str, Any]]]) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"name": "control", "tracks": tracks}))
    return path


async def test_stop_task_interrupts_a_subagent_and_its_parent_goes_on(tmp_path: Path) -> None:
    tracks = {
        "lead": [DELEGATE, {"expect": "interrupted", "text": "the helper was stopped"}],
        "subagent": [SLOW, {"text": "never"}],
    }
    workdir = tmp_path / "ws"
    workdir.mkdir()
    async with open_agent(
        workdir, scenario=str(scenario(tmp_path, tracks)), permission_mode="bypassPermissions"
    ) as session:
        assert not await session.stop_task("nobody")
        with session.events.subscribe() as events, trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                results: list[str] = []

                async def ask() -> None:
                    results.append((await session.query("go")).result)

                nursery.start_soon(ask)
                async for event in events:
                    if event.type == "agent.tool_call" and event.data.get("name") == "Bash":
                        break
                [task_id] = list(session.tasks)
                assert await session.stop_task(task_id)
        assert results == ["the helper was stopped"]
        assert list(session.tasks) == []
    assert not (workdir / "late.txt").exists()


async def test_context_usage_is_what_the_lead_s_requests_measured(tmp_path: Path) -> None:
    tracks = {"lead": [{"text": "one"}, {"text": "two"}]}
    async with open_agent(tmp_path, scenario=str(scenario(tmp_path, tracks))) as session:
        assert session.context_usage()["totalTokens"] == 0
        await session.query("first")
        first = session.context_usage()
        await session.query("second, a longer prompt than the first one " * 20)
        second = session.context_usage()
    assert 0 < first["totalTokens"] < second["totalTokens"]
    fixed, messages, free, buffer = (c["tokens"] for c in second["categories"])
    assert fixed == first["categories"][0]["tokens"] > 0
    assert fixed + messages == second["totalTokens"]
    assert free + buffer + second["totalTokens"] == second["rawMaxTokens"]
    assert second["maxTokens"] == second["autoCompactThreshold"] < second["rawMaxTokens"]
    assert 0 < second["percentage"] < 100
