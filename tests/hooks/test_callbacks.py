"""Python hook callbacks of an embedding program (the Agent SDK's HookMatcher shape)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.hooks import HookMatcher, callback_hooks
from coterie.session import open_agent

if TYPE_CHECKING:
    from pathlib import Path

TOUCH = {"tool_uses": [{"name": "Bash", "input": {"command": "touch made.txt"}}]}


def scenario(path: Path, turns: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"name": "callbacks", "tracks": {"lead": turns}}))
    return path


async def run(tmp_path: Path, hooks: dict[str, list[HookMatcher]]) -> str:
    scen = scenario(tmp_path / "s.json", [TOUCH, {"text": "done"}])
    workdir = tmp_path / "ws"
    workdir.mkdir()
    async with open_agent(
        workdir, scenario=str(scen), permission_mode="bypassPermissions", hooks=hooks
    ) as session:
        with trio.fail_after(60):
            result = await session.query("go")
    return result.result


async def test_a_pre_tool_use_callback_blocks_the_call(tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []

    async def no_bash(data: dict[str, Any]) -> dict[str, Any]:
        seen.append(data)
        return {"decision": "block", "reason": "no shell today"}

    assert await run(tmp_path, {"PreToolUse": [HookMatcher("Bash", [no_bash])]}) == "done"
    assert not (tmp_path / "ws" / "made.txt").exists()
    [data] = seen
    assert (data["hook_event_name"], data["tool_name"]) == ("PreToolUse", "Bash")
    assert data["tool_input"] == {"command": "touch made.txt"}


async def test_a_callback_whose_matcher_does_not_match_is_not_called(tmp_path: Path) -> None:
    async def never(data: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("called")

    await run(tmp_path, {"PreToolUse": [HookMatcher("Write|Edit", [never])]})
    assert (tmp_path / "ws" / "made.txt").exists()


async def test_a_pre_tool_use_callback_that_raises_fails_closed(tmp_path: Path) -> None:
    """As a PreToolUse command hook that cannot run: the call is not allowed."""

    async def broken(data: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("a bug in the embedder")

    await run(tmp_path, {"PreToolUse": [HookMatcher(None, [broken])]})
    assert not (tmp_path / "ws" / "made.txt").exists()


async def test_a_pre_tool_use_callback_past_its_timeout_fails_closed(
    tmp_path: Path, autojump_clock: trio.abc.Clock
) -> None:
    async def slow(data: dict[str, Any]) -> dict[str, Any]:
        await trio.sleep(3600)
        return {}

    await run(tmp_path, {"PreToolUse": [HookMatcher("Bash", [slow], timeout=5)]})
    assert not (tmp_path / "ws" / "made.txt").exists()


async def test_a_post_tool_use_callback_that_raises_stops_nothing(tmp_path: Path) -> None:
    async def broken(data: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("a bug in the embedder")

    assert await run(tmp_path, {"PostToolUse": [HookMatcher(None, [broken])]}) == "done"
    assert (tmp_path / "ws" / "made.txt").exists()


def test_an_unknown_event_is_refused_before_any_run() -> None:
    with pytest.raises(ValueError, match="PreToolUze"):
        callback_hooks({"PreToolUze": [HookMatcher(None, [])]})
