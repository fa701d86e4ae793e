"""Extended thinking through the official Python Agent SDK (``max_thinking_tokens=``,
``thinking=``): the SDK passes ``--max-thinking-tokens`` / ``--thinking`` to the
CLI it spawns (the ``coterie`` console script), whose model is the in-process
``coterie mock-server`` (its recorded requests show what was sent); no key, no
network. Under Trio, as the SDK runs on anyio."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ResultMessage,
    StreamEvent,
    TextBlock,
    ThinkingBlock,
    query,
)

from coterie.models import parse_scenario, serve_scenario

if TYPE_CHECKING:
    import trio

    from coterie.models import MockServer

#: The console script of the environment running the tests.
COTERIE = str(Path(sys.executable).parent / "coterie")
THOUGHT = "The question names a file: read it before answering."


def options(workspace: Path, home: Path, url: str, **kw: Any) -> ClaudeAgentOptions:
    return ClaudeAgentOptions(
        cli_path=COTERIE,
        cwd=str(workspace),
        env={"HOME": str(home), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key"},
        allowed_tools=["Read"],
        **kw,
    )


async def serve(nursery: trio.Nursery, turns: list[dict[str, Any]]) -> MockServer:
    scenario = parse_scenario({"tracks": {"lead": turns}}, source="sdk-thinking.json")
    server: MockServer = await nursery.start(serve_scenario, scenario)
    return server


def bodies(server: MockServer) -> list[dict[str, Any]]:
    return [r.json() for r in server.requests if r.path == "/v1/messages"]


async def test_max_thinking_tokens_gives_thinking_blocks_that_go_back_in_the_tool_turn(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    (workspace / "README.md").write_text("hello\n")
    read = {"name": "Read", "input": {"file_path": "README.md"}}
    server = await serve(
        nursery,
        [
            {"thinking": THOUGHT, "tool_uses": [read]},
            {"thinking": "It says hello.", "text": "It says hello."},
        ],
    )
    opts = options(workspace, home, server.url, model="claude-sonnet-4-5", max_thinking_tokens=8000)
    messages = [m async for m in query(prompt="What does README.md say?", options=opts)]
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.result) == ("success", "It says hello.")
    thoughts = [
        b
        for m in messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ThinkingBlock)
    ]
    assert [t.thinking for t in thoughts] == [THOUGHT, "It says hello."]
    assert all(t.signature for t in thoughts)
    first, second = bodies(server)
    assert first["thinking"] == second["thinking"] == {"type": "enabled", "budget_tokens": 8000}
    # The next request of the tool-use turn carries the thinking block back unchanged.
    assert second["messages"][1]["content"][0] == {
        "type": "thinking",
        "thinking": THOUGHT,
        "signature": thoughts[0].signature,
    }


async def test_adaptive_thinking_streams_thinking_and_signature_deltas(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, [{"thinking": "Two and two: four.", "text": "4"}])
    opts = options(
        workspace, home, server.url, model="claude-opus-4-6",
        thinking={"type": "adaptive"}, include_partial_messages=True,
    )  # fmt: skip
    messages = [m async for m in query(prompt="2 + 2?", options=opts)]
    (body,) = bodies(server)
    assert body["thinking"] == {"type": "adaptive"}
    deltas = [
        m.event["delta"]
        for m in messages
        if isinstance(m, StreamEvent) and m.event.get("type") == "content_block_delta"
    ]
    kinds = [d["type"] for d in deltas]
    assert (
        kinds.index("thinking_delta") < kinds.index("signature_delta") < kinds.index("text_delta")
    )
    thought = "".join(d["thinking"] for d in deltas if d["type"] == "thinking_delta")
    assert thought == "Two and two: four."
    (reply,) = [m for m in messages if isinstance(m, AssistantMessage)]
    thinking, text = reply.content
    assert isinstance(thinking, ThinkingBlock)
    assert isinstance(text, TextBlock)
    signature = next(d["signature"] for d in deltas if d["type"] == "signature_delta")
    assert thinking.signature == signature


async def test_thinking_disabled_sends_disabled_and_serves_no_thinking(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, [{"thinking": "unseen", "text": "4"}])
    opts = options(workspace, home, server.url, thinking={"type": "disabled"})
    messages = [m async for m in query(prompt="2 + 2?", options=opts)]
    (body,) = bodies(server)
    assert body["thinking"] == {"type": "disabled"}
    (reply,) = [m for m in messages if isinstance(m, AssistantMessage)]
    assert [type(b) for b in reply.content] == [TextBlock]
