"""``async for message in session.stream(prompt)``: the Agent SDK's typed messages
of a request as they happen, the ResultMessage last (coterie.runtime.streaming)."""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie import (
    AssistantMessage,
    ResultMessage,
    StreamEvent,
    SystemMessage,
    TaskNotificationMessage,
    TaskStartedMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from coterie.runs import read_state
from coterie.session import open_agent, open_team
from tests.team.test_lead_turns_embedding import scenario

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence
    from pathlib import Path

    from coterie import Message
    from coterie.events import Event
    from coterie.session import AgentSession


def bash(command: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}


@contextlib.asynccontextmanager
async def session_of(
    tmp_path: Path, tracks: dict[str, Any], **options: Any
) -> AsyncIterator[AgentSession]:
    scen = tmp_path / "s.json"
    scen.write_text(json.dumps({"name": "stream", "tracks": tracks}))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    options.setdefault("permission_mode", "bypassPermissions")
    async with open_agent(workdir, scenario=str(scen), **options) as session:
        yield session


async def collect(session: AgentSession, prompt: str, **options: Any) -> list[Message]:
    with trio.fail_after(60):
        return [message async for message in session.stream(prompt, **options)]


def kinds(messages: Sequence[Message]) -> list[str]:
    return [type(message).__name__ for message in messages]


async def test_a_request_streams_init_call_result_reply_and_result_in_order(
    tmp_path: Path,
) -> None:
    async with session_of(tmp_path, {"lead": [bash("echo hi"), {"text": "done"}]}) as session:
        messages = await collect(session, "go")
    assert kinds(messages) == [
        "SystemMessage", "AssistantMessage", "UserMessage", "AssistantMessage", "ResultMessage"
    ]  # fmt: skip
    init, call, answer, reply, result = messages
    assert isinstance(init, SystemMessage)
    assert (init.subtype, init.data["session_id"]) == ("init", session.run_id)
    assert "Bash" in init.data["tools"]
    assert isinstance(call, AssistantMessage)
    [use] = call.content
    assert isinstance(use, ToolUseBlock)
    assert (use.name, use.input) == ("Bash", {"command": "echo hi"})
    assert call.parent_tool_use_id is None
    assert isinstance(answer, UserMessage)
    assert isinstance(answer.content, list)
    [block] = answer.content
    assert isinstance(block, ToolResultBlock)
    assert block.tool_use_id == use.id
    assert answer.tool_use_result["stdout"] == "hi"
    assert isinstance(reply, AssistantMessage)
    assert reply.content == [TextBlock("done")]
    assert isinstance(result, ResultMessage)
    assert (result.subtype, result.result, result.is_error) == ("success", "done", False)
    assert (result.num_turns, result.session_id) == (2, session.run_id)
    assert result.terminal_reason == "completed"


async def test_the_request_is_recorded_as_query_records_it(tmp_path: Path) -> None:
    async with session_of(tmp_path, {"lead": [{"text": "done"}]}) as session:
        await collect(session, "go")
        state = read_state(session.run_dir)
    assert state["state"] == "completed"
    assert (state["request"]["text"], state["request"]["sent"]) == ("go", True)
    assert state["result"]["result"] == "done"


async def test_a_subagents_messages_carry_the_agent_calls_id(tmp_path: Path) -> None:
    look = {"description": "look", "prompt": "Say hi.", "subagent_type": "general-purpose"}
    tracks = {
        "lead": [{"tool_uses": [{"name": "Agent", "input": look}]}, {"text": "It said hi."}],
        "subagent": [bash("echo hi"), {"text": "hi"}],
    }
    async with session_of(tmp_path, tracks) as session:
        messages = await collect(session, "go")
    call = messages[1]
    assert isinstance(call, AssistantMessage)
    [use] = call.content
    assert isinstance(use, ToolUseBlock)
    [started] = [m for m in messages if isinstance(m, TaskStartedMessage)]
    [ended] = [m for m in messages if isinstance(m, TaskNotificationMessage)]
    assert (started.tool_use_id, ended.tool_use_id, ended.summary) == (use.id, use.id, "hi")
    inside = messages[messages.index(started) + 1 : messages.index(ended)]
    said = [m for m in inside if isinstance(m, AssistantMessage | UserMessage)]
    assert kinds(said) == ["UserMessage", "AssistantMessage", "UserMessage"]  # prompt, call, result
    assert {m.parent_tool_use_id for m in said} == {use.id}
    assert isinstance(messages[-1], ResultMessage)
    assert messages[-1].result == "It said hi."


async def test_only_the_first_stream_of_a_session_has_the_init_message(tmp_path: Path) -> None:
    async with session_of(tmp_path, {"lead": [{"text": "one"}, {"text": "two"}]}) as session:
        first = await collect(session, "go")
        second = await collect(session, "again")
    assert kinds(first) == ["SystemMessage", "AssistantMessage", "ResultMessage"]
    assert kinds(second) == ["AssistantMessage", "ResultMessage"]
    assert isinstance(second[-1], ResultMessage)
    assert second[-1].result == "two"


async def test_a_stream_and_a_query_take_turns_on_one_session(tmp_path: Path) -> None:
    async with session_of(tmp_path, {"lead": [{"text": "one"}, {"text": "two"}]}) as session:
        await collect(session, "go")
        with trio.fail_after(60):
            result = await session.query("again")
    assert result.result == "two"


async def test_closing_a_stream_early_interrupts_its_request(tmp_path: Path) -> None:
    tracks = {"lead": [bash("sleep 600"), {"text": "next"}]}
    async with session_of(tmp_path, tracks) as session:
        with trio.fail_after(60):
            async with contextlib.aclosing(session.stream("go")) as messages:
                async for message in messages:
                    if isinstance(message, AssistantMessage):
                        break
        state = read_state(session.run_dir)
        assert state["state"] != "running"  # its result is recorded, as query records it
        assert state["result"]["subtype"] == "error_interrupted"
        after = await collect(session, "again")
    assert kinds(after) == ["AssistantMessage", "ResultMessage"]  # nothing of the first
    assert isinstance(after[-1], ResultMessage)
    assert after[-1].result == "next"


# Trio warns of an async generator left unclosed (the docs say: use aclosing).
@pytest.mark.filterwarnings("ignore:Async generator .* garbage collected:ResourceWarning")
async def test_a_bare_break_leaves_the_session_usable(tmp_path: Path) -> None:
    """Trio closes the abandoned stream in a task of its own; the next request
    gets its own result, not the abandoned one's."""
    tracks = {"lead": [bash("sleep 600"), {"text": "next"}]}
    async with session_of(tmp_path, tracks) as session:
        with trio.fail_after(60):
            async for message in session.stream("go"):
                if isinstance(message, AssistantMessage):
                    break
            result = await session.query("again")
    assert result.result == "next"


async def test_structured_output_reaches_the_result_message(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    answer = {"tool_uses": [{"name": "StructuredOutput", "input": {"city": "Paris"}}]}
    async with session_of(tmp_path, {"lead": [answer]}, json_schema=schema) as session:
        messages = await collect(session, "where?")
    result = messages[-1]
    assert isinstance(result, ResultMessage)
    assert result.structured_output == {"city": "Paris"}
    assert json.loads(result.result or "") == {"city": "Paris"}


async def test_partial_messages_only_when_asked(tmp_path: Path) -> None:
    async with session_of(tmp_path, {"lead": [{"text": "one"}, {"text": "two"}]}) as session:
        plain = await collect(session, "go")
        partial = await collect(session, "again", include_partial_messages=True)
    assert "StreamEvent" not in kinds(plain)
    streamed = [m for m in partial if type(m).__name__ == "StreamEvent"]
    assert streamed
    assert isinstance(streamed[0], StreamEvent)
    assert streamed[0].event["type"] == "message_start"
    assert kinds(partial)[-2:] == ["AssistantMessage", "ResultMessage"]


async def test_a_consumer_that_falls_behind_loses_nothing(tmp_path: Path) -> None:
    """More lines than an event subscription buffers (1000) pile up while the
    consumer waits; every one still comes."""
    calls = [{"name": "Glob", "input": {"pattern": f"{n}.txt"}} for n in range(220)]
    tracks = {"lead": [{"tool_uses": calls}, {"text": "done"}]}
    async with session_of(tmp_path, tracks) as session:
        finished = trio.Event()

        def watch(event: Event) -> None:
            if event.type == "agent.result" and event.data.get("actor") == "lead":
                finished.set()

        with trio.fail_after(60), session.events.listen(watch):
            messages = session.stream("go", include_partial_messages=True)
            async with contextlib.aclosing(messages):
                seen = [await anext(messages), await anext(messages)]  # init, message_start
                await finished.wait()  # the lead's whole turn, while nobody reads
                seen += [message async for message in messages]
    results = [m for m in seen if isinstance(m, UserMessage)]
    starts = [m for m in seen if isinstance(m, StreamEvent)
              and m.event["type"] == "content_block_start"]  # fmt: skip
    assert (len(results), len(starts)) == (220, 221)
    assert sum(1 for m in seen if isinstance(m, StreamEvent)) > 1000
    assert isinstance(seen[-1], ResultMessage)


async def test_a_teams_stream_has_every_members_work(tmp_path: Path) -> None:
    """Teammates' replies and tool results come too (no parent: they are not subagents)."""
    scen = scenario(tmp_path, ["both done"])
    work = tmp_path / "ws"
    work.mkdir()
    async with open_team(
        work, names=["ana", "ben"], scenario=scen, permission_mode="acceptEdits"
    ) as team:
        messages = await collect(team, "write a.txt and b.txt")
    writes = [
        block.input["file_path"]
        for m in messages
        if isinstance(m, AssistantMessage)
        for block in m.content
        if isinstance(block, ToolUseBlock) and block.name == "Write"
    ]
    assert sorted(writes) == ["a.txt", "b.txt"]
    said = [m for m in messages if isinstance(m, AssistantMessage | UserMessage)]
    assert {m.parent_tool_use_id for m in said} == {None}
    assert isinstance(messages[-1], ResultMessage)
    assert messages[-1].result == "both done"
