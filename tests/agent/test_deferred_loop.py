"""The loop and deferred tools: what it names, what it sends, what a resume keeps."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import attrs

from coterie.agent import AgentLoop
from coterie.context import TranscriptLog
from coterie.models import ModelReply, ModelRequest, ScriptedModel, parse_scenario
from coterie.tools import PermissionGate, PermissionPolicy, ToolContext, default_registry
from coterie.tools.capabilities import Capabilities, Effect
from coterie.tools.toolsearch import announced_tools

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from coterie.tools import Tool, ToolRegistry


@attrs.define
class Recording:
    """A scripted model that keeps every request it was sent."""

    inner: ScriptedModel
    requests: list[ModelRequest] = attrs.field(factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    async def complete(self, request: ModelRequest, **kw: Any) -> ModelReply:
        self.requests.append(
            attrs.evolve(request, messages=json.loads(json.dumps(request.messages)))
        )
        return await self.inner.complete(request, **kw)


def loop_on(
    tmp_path: Path, turns: list[dict[str, Any]], registry: ToolRegistry | None = None
) -> tuple[AgentLoop, Recording]:
    log = TranscriptLog.open(tmp_path / "t.log", "none")
    model = Recording(
        ScriptedModel(
            parse_scenario({"name": "s", "tracks": {"lead": turns}}),
            state_path=tmp_path / f"state{len(list(tmp_path.iterdir()))}.json",
            strict=True,  # checks each request as the Messages API does
        )
    )
    loop = AgentLoop(
        model=model,
        registry=registry or default_registry(),
        gate=PermissionGate(PermissionPolicy.from_rules(mode="bypassPermissions"), None),
        tools=ToolContext(workspace=tmp_path),
        system="test",
        transcript=log,
        messages=log.load(),
    )
    return loop, model


def sent(request: ModelRequest) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in request.tools}


SEARCH = {"name": "ToolSearch", "input": {"query": "select:WebFetch"}}


async def test_a_loaded_tool_stays_loaded_after_a_resume(tmp_path: Path) -> None:
    first, _ = loop_on(tmp_path, [{"tool_uses": [SEARCH]}, {"text": "ok"}])
    await first.run("go")
    assert first.transcript is not None
    first.transcript.close()
    again, model = loop_on(tmp_path, [{"text": "still here"}])
    await again.run("more")
    (request,) = model.requests
    assert sent(request)["WebFetch"]["defer_loading"] is True
    assert "NotebookEdit" not in sent(request)
    # The names were given once; the resumed agent does not repeat them.
    texts = json.dumps(request.messages)
    assert texts.count("NotebookEdit") == 1


async def test_the_deferred_tools_are_named_once_in_the_first_message(tmp_path: Path) -> None:
    loop, model = loop_on(tmp_path, [{"tool_uses": [SEARCH]}, {"text": "ok"}])
    await loop.run("go")
    first, second = model.requests
    opening = first.messages[0]["content"]
    assert opening[-1]["text"] == "go"  # the prompt stays the last block
    assert "WebFetch" in announced_tools([{"role": "user", "content": opening[:-1]}])
    assert json.dumps(second.messages).count("NotebookEdit") == 1


@attrs.define
class Server:
    """A tool source whose tools arrive later (an MCP server connecting)."""

    offered: list[Tool] = attrs.field(factory=list)

    def tools(self) -> Sequence[Tool]:
        return list(self.offered)


@attrs.define
class McpLike:
    name: str
    description: str = "an MCP tool"
    input_schema: dict[str, Any] = attrs.field(factory=lambda: {"type": "object"})
    capabilities: Capabilities = attrs.field(factory=lambda: Capabilities(Effect.EXECUTION))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> Any:
        raise AssertionError("not run")


async def test_a_server_connecting_later_has_its_tools_named_then(tmp_path: Path) -> None:
    server = Server()
    registry = default_registry().joined(server)
    turns: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "TodoWrite", "input": {"todos": []}}]},
        {"text": "ok"},
    ]
    loop, model = loop_on(tmp_path, turns, registry)
    original = model.inner.complete

    async def connect_then_answer(request: ModelRequest, **kw: Any) -> ModelReply:
        server.offered.append(McpLike("mcp__late__tool"))  # connected during the first call
        return await original(request, **kw)

    model.inner.complete = connect_then_answer  # type: ignore[method-assign]
    await loop.run("go")
    first, second = model.requests
    assert "mcp__late__tool" not in json.dumps(first.messages)
    last = second.messages[-1]["content"]
    assert last[0]["type"] == "tool_result"  # the results first, then the new names
    assert "mcp__late__tool" in last[-1]["text"]
    assert "WebFetch" not in last[-1]["text"]  # named before already
    assert "mcp__late__tool" not in sent(second)


async def test_a_stale_plan_is_recalled_only_to_an_agent_with_todowrite_in_hand(
    tmp_path: Path,
) -> None:
    """Ten turns without TodoWrite bring one reminder (one ``<system-reminder>``, not
    two nested) to one agent alone; not to a team's member, who defers TodoWrite."""
    from coterie.tools import ToolRegistry
    from coterie.tools.toolsearch import ToolSearchMode

    glob = {"name": "Glob", "input": {"pattern": "*"}}
    turns = [{"tool_uses": [glob]}] * 10 + [{"text": "done"}]
    (tmp_path / "a").mkdir()
    alone, model = loop_on(tmp_path / "a", turns)
    await alone.run("go")
    said = json.dumps(model.requests[-1].messages)
    assert said.count("The TodoWrite tool hasn't been used recently") == 1
    assert "<system-reminder><system-reminder>" not in said
    (tmp_path / "m").mkdir()
    member = ToolRegistry.of(default_registry(), search=ToolSearchMode("always", team=True))
    assert "TodoWrite" in {t.name for t in member.deferred()}
    mate, model = loop_on(tmp_path / "m", turns, member)
    await mate.run("go")
    assert "hasn't been used recently" not in json.dumps(model.requests[-1].messages)
