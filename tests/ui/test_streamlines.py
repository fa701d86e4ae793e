"""The stream-json lines: a run's events as Claude Code's messages, as the Agent SDK reads them."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from claude_agent_sdk import (
    AssistantMessage,
    HookEventMessage,
    ResultMessage,
    StreamEvent,
    TaskNotificationMessage,
    TaskProgressMessage,
    TaskStartedMessage,
    UserMessage,
)
from claude_agent_sdk._internal.message_parser import parse_message
from hypothesis import given
from hypothesis import strategies as st

from coterie.events import Event
from coterie.models import Usage, cost_usd
from coterie.models._wire import stream_events
from coterie.tools._lines import number_lines, window_note
from coterie.ui.streamlines import StreamLines, tool_use_result

USAGE = {"input_tokens": 10, "output_tokens": 5}
RESULT = {
    "result": "done",
    "is_error": False,
    "subtype": "success",
    "num_turns": 1,
    "usage": Usage().to_dict(),
    "total_cost_usd": 0.0,
    "duration_ms": 3,
}


def ev(type: str, ts: float = 0.0, seq: int = 1, **data: Any) -> Event:
    return Event(seq=seq, ts=ts, type=type, data=data)


def lines_of(events: list[Event], **options: Any) -> tuple[StreamLines, list[dict[str, Any]]]:
    counter = itertools.count(1)
    lines = StreamLines(new_uuid=lambda: f"uuid-{next(counter)}", **options)
    out = lines.start({"run_id": "run1", "model": "m", "permission_mode": "default"})
    for event in events:
        out += lines.event(event)
    return lines, out


def message(actor: str = "lead", model: str = "claude-sonnet-5-5", **usage: int) -> Event:
    content = [{"type": "text", "text": "hi"}]
    return ev("agent.message", actor=actor, content=content, stop_reason="end_turn",
              usage=usage or USAGE, model=model)  # fmt: skip


def call(id: str, name: str, actor: str = "lead", **input: Any) -> Event:
    return ev("agent.tool_call", actor=actor, id=id, name=name, input=input)


def result(id: str, name: str, content: str, actor: str = "lead", error: bool = False) -> Event:
    return ev("agent.tool_result", actor=actor, id=id, name=name, content=content, is_error=error)


def test_every_line_has_a_uuid_and_the_session() -> None:
    _, out = lines_of([message(), call("t1", "Bash", command="ls"), result("t1", "Bash", "x")])
    assert [line["uuid"] for line in out] == ["uuid-1", "uuid-2", "uuid-3"]
    assert {line["session_id"] for line in out} == {"run1"}


def test_a_bash_result_carries_stdout_as_claude_code_does() -> None:
    events = [call("t1", "Bash", command="echo hi"), result("t1", "Bash", "hi\nho\n\nExit code: 0")]
    _, [_, line] = lines_of(events)
    parsed = parse_message(line)
    assert isinstance(parsed, UserMessage)
    assert parsed.tool_use_result == {
        "stdout": "hi\nho", "stderr": "", "interrupted": False, "isImage": False,
        "noOutputExpected": False,
    }  # fmt: skip
    assert parsed.uuid == line["uuid"]


def test_a_failed_call_says_error_and_its_content() -> None:
    assert tool_use_result({"name": "Bash"}, "Exit code: 3", True) == "Error: Exit code: 3"


def test_a_silent_command_has_empty_stdout() -> None:
    form = tool_use_result({"name": "Bash"}, "(no output)\n\nExit code: 0", False)
    assert form["stdout"] == ""


def test_a_tool_without_a_form_gives_its_content() -> None:
    assert tool_use_result({"name": "Glob", "input": {}}, "a.txt\nb.txt", False) == "a.txt\nb.txt"


def test_a_tools_own_form_wins() -> None:
    """An agent.tool_result that carries a tool_use_result is passed as it is."""
    events = [call("t1", "Bash", command="x"), result("t1", "Bash", "y")]
    events[1].data["tool_use_result"] = {"stdout": "own"}
    _, [_, line] = lines_of(events)
    assert line["tool_use_result"] == {"stdout": "own"}


@given(
    st.lists(st.text(alphabet=st.characters(exclude_characters="\n\r"), max_size=20), min_size=1),
    st.integers(min_value=1, max_value=50),
    st.integers(min_value=0, max_value=5),
)
def test_read_gives_back_the_lines_it_showed(lines: list[str], first: int, more: int) -> None:
    """Whatever lines a Read numbered (and a window note after them), the form has
    them unnumbered, where they start, how many, and how long the file is."""
    total = first + len(lines) - 1 + more
    note = window_note(first, len(lines), total, 100)
    shown = number_lines(lines, first)
    content = f"{shown}\n\n{note}" if note else shown
    form = tool_use_result({"name": "Read", "input": {"file_path": "f.txt"}}, content, False)
    assert form == {
        "type": "text",
        "file": {"filePath": "f.txt", "content": "\n".join(lines), "numLines": len(lines),
                 "startLine": first, "totalLines": total},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("said", "kind"),
    [
        ("File created successfully at: /w/a", "create"),
        ("The file /w/a has been updated.", "update"),
    ],
)
def test_write_says_whether_it_created_or_updated(said: str, kind: str) -> None:
    form = tool_use_result(
        {"name": "Write", "input": {"file_path": "a", "content": "x"}}, said, False
    )
    assert (form["type"], form["filePath"], form["content"]) == (kind, "a", "x")


def test_edit_gives_its_strings() -> None:
    given = {"file_path": "a", "old_string": "x", "new_string": "y", "replace_all": True}
    form = tool_use_result({"name": "Edit", "input": given}, "The file a has been updated.", False)
    assert (form["oldString"], form["newString"], form["replaceAll"]) == ("x", "y", True)


def test_the_assistant_line_has_the_apis_message_id_when_it_streamed() -> None:
    raw = stream_events("msg_api_1", "m", [{"type": "text", "text": "hi"}], "end_turn", Usage(1, 1))
    events = [ev("agent.stream_event", actor="lead", event=e) for e in raw] + [message()]
    _, out = lines_of(events)
    parsed = parse_message(out[-1])
    assert isinstance(parsed, AssistantMessage)
    assert parsed.message_id == "msg_api_1"


def test_without_a_stream_the_id_is_the_runs() -> None:
    _, [_, line] = lines_of([message()])
    assert line["message"]["id"] == "msg_run1_1"


@pytest.mark.parametrize("partial", [True, False])
def test_partial_messages_are_stream_event_lines_only_when_asked(partial: bool) -> None:
    raw = stream_events("msg_1", "m", [{"type": "text", "text": "hello"}], "end_turn", Usage(1, 1))
    events = [ev("agent.stream_event", actor="lead", event=e) for e in raw]
    _, out = lines_of(events, partial=partial)
    streamed = [parse_message(line) for line in out[1:]]
    if not partial:
        assert streamed == []
        return
    assert all(isinstance(m, StreamEvent) for m in streamed)
    kinds = [m.event["type"] for m in streamed if isinstance(m, StreamEvent)]
    assert kinds == [
        "message_start", "content_block_start", "ping", "content_block_delta",
        "content_block_delta", "content_block_delta", "content_block_stop", "message_delta",
        "message_stop",
    ]  # fmt: skip


HOOK: dict[str, Any] = {
    "hook_id": "h1",
    "hook_name": "PreToolUse:Bash",
    "event": "PreToolUse",
    "actor": "lead",
}


@pytest.mark.parametrize("asked", [True, False])
def test_hook_lines_only_when_asked(asked: bool) -> None:
    events = [
        ev("hook.started", **HOOK),
        ev("hook.response", **HOOK, exit_code=2, stdout="", stderr="no\n", blocked=True),
    ]
    _, out = lines_of(events, hook_events=asked)
    parsed = [parse_message(line) for line in out[1:]]
    if not asked:
        assert parsed == []
        return
    started, answered = parsed
    assert isinstance(started, HookEventMessage)
    assert isinstance(answered, HookEventMessage)
    assert (started.subtype, started.hook_event_name) == ("hook_started", "PreToolUse")
    assert answered.data["hook_name"] == "PreToolUse:Bash"
    assert (answered.data["exit_code"], answered.data["outcome"]) == (2, "error")
    assert answered.data["output"] == "no\n"


def subagent_run() -> list[Event]:
    sub = "lead-sub-1"
    return [
        call(
            "agent1",
            "Agent",
            description="look",
            prompt="List the notes.",
            subagent_type="general-purpose",
        ),
        ev(
            "subagent.started",
            ts=10.0,
            actor="lead",
            subagent=sub,
            description="look",
            subagent_type="general-purpose",
            request="r1",
        ),
        message(actor=sub),
        ev(
            "agent.tool_call",
            ts=10.5,
            actor=sub,
            id="t2",
            name="Bash",
            input={"command": "cat notes.txt", "description": "show"},
        ),
        result("t2", "Bash", "two\n\nExit code: 0", actor=sub),
        ev("agent.result", actor=sub, result="two lines", is_error=False),
        ev("subagent.finished", ts=12.0, actor="lead", subagent=sub, is_error=False),
        result("agent1", "Agent", "two lines"),
    ]


def test_a_subagent_is_a_task_from_start_to_notification() -> None:
    _, out = lines_of(subagent_run(), subagent_text=True)
    parsed = [parse_message(line) for line in out[1:]]
    kinds = [type(m).__name__ if m is not None else None for m in parsed]
    assert kinds == ["TaskStartedMessage", "UserMessage", "AssistantMessage",
                     "TaskProgressMessage", "UserMessage", "TaskUpdatedMessage",
                     "TaskNotificationMessage", "UserMessage"]  # fmt: skip
    started, prompt, reply, progress = parsed[:4]
    assert isinstance(started, TaskStartedMessage)
    assert (started.task_id, started.tool_use_id) == ("lead-sub-1", "agent1")
    assert isinstance(prompt, UserMessage)
    assert prompt.parent_tool_use_id == "agent1"
    assert isinstance(reply, AssistantMessage)
    assert reply.parent_tool_use_id == "agent1"
    assert isinstance(progress, TaskProgressMessage)
    assert progress.last_tool_name == "Bash"
    assert progress.description == "Running show"
    done = parsed[6]
    assert isinstance(done, TaskNotificationMessage)
    assert (done.status, done.summary) == ("completed", "two lines")
    assert done.usage == {"total_tokens": 15, "tool_uses": 1, "duration_ms": 2000}
    agent_result = parsed[7]
    assert isinstance(agent_result, UserMessage)
    assert agent_result.tool_use_result is not None
    assert agent_result.tool_use_result["agentId"] == "lead-sub-1"
    assert agent_result.tool_use_result["totalToolUseCount"] == 1


@pytest.mark.parametrize(
    ("subtype", "text", "reason"),
    [
        ("success", "done", "completed"),
        ("error_max_turns", "x", "max_turns"),
        ("error_max_budget_usd", "x", "budget_exhausted"),
        ("error_model", "x", "api_error"),
        ("error_interrupted", "[Request interrupted by user for tool use]", "aborted_tools"),
        ("error_interrupted", "[Request interrupted by user]", "aborted_streaming"),
        ("error_during_execution", "x", None),
    ],
)
def test_the_result_says_why_the_loop_ended(subtype: str, text: str, reason: str | None) -> None:
    lines, _ = lines_of([])
    *_, line = lines.finish({**RESULT, "subtype": subtype, "result": text, "is_error": True})
    parsed = parse_message(line)
    assert isinstance(parsed, ResultMessage)
    assert parsed.terminal_reason == reason


def test_model_usage_counts_every_models_replies_subagents_too_then_starts_over() -> None:
    events = [
        message(model="claude-sonnet-5-5", input_tokens=100, output_tokens=10),
        message(actor="lead-sub-1", model="claude-sonnet-5-5", input_tokens=50),
        message(model="claude-haiku-5-5", input_tokens=7, cache_read_input_tokens=3),
    ]
    lines, _ = lines_of(events)
    [line] = lines.finish(RESULT)
    parsed = parse_message(line)
    assert isinstance(parsed, ResultMessage)
    assert parsed.model_usage is not None
    sonnet = parsed.model_usage["claude-sonnet-5-5"]
    assert (sonnet["inputTokens"], sonnet["outputTokens"]) == (150, 10)
    spent = cost_usd("claude-sonnet-5-5", Usage(100, 10)) + cost_usd("claude-sonnet-5-5", Usage(50))
    assert sonnet["costUSD"] == pytest.approx(spent)
    assert sonnet["contextWindow"] > 0
    assert parsed.model_usage["claude-haiku-5-5"]["cacheReadInputTokens"] == 3
    assert parsed.stop_reason == "end_turn"
    [again] = lines.finish(RESULT)
    assert again["modelUsage"] == {}
