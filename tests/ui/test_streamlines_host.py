"""The converter's lines for a host's conversation, as Claude Code 2.1.332 writes
them and the Agent SDK parses them: an API error's result, ``/clear``'s
``conversation_reset`` and result, ``origin`` on a result, and a subagent's
text (on the stream only with ``subagent_text``)."""

from __future__ import annotations

import io
import itertools
import json
from typing import Any

import pytest
from claude_agent_sdk import AssistantMessage, ConversationResetMessage, ResultMessage
from claude_agent_sdk._internal.message_parser import parse_message

from coterie.agent import RunResult
from coterie.commands.streaminput import HostTurn
from coterie.events import Event
from coterie.models import Usage
from coterie.ui import JsonView, StreamJsonView
from coterie.ui.streamlines import StreamLines

FAILED = RunResult(
    result="The model call failed: 404 not_found_error: model: nope",
    is_error=True,
    subtype="error_model",
    num_turns=0,
    usage=Usage(),
    total_cost_usd=0.0,
    duration_ms=5,
    api_error_status=404,
    api_error_type="not_found_error",
).to_dict()


def ev(type: str, **data: Any) -> Event:
    return Event(seq=1, ts=0.0, type=type, data=data)


def started(**options: Any) -> StreamLines:
    counter = itertools.count(1)
    lines = StreamLines(new_uuid=lambda: f"uuid-{next(counter)}", **options)
    lines.start({"run_id": "run1", "model": "m", "permission_mode": "default"})
    return lines


def test_an_api_error_is_an_assistant_line_then_claude_codes_result() -> None:
    said, result = started().finish(FAILED)
    message = parse_message(said)
    assert isinstance(message, AssistantMessage)
    assert message.parent_tool_use_id is None
    assert [getattr(b, "text", None) for b in message.content] == [FAILED["result"]]
    assert (said["is_api_error_message"], said["error"], said["message"]["model"]) == (
        True, "model_not_found", "<synthetic>"
    )  # fmt: skip
    parsed = parse_message(result)
    assert isinstance(parsed, ResultMessage)
    assert (parsed.subtype, parsed.is_error, parsed.terminal_reason) == (
        "success", True, "api_error"
    )  # fmt: skip
    assert parsed.api_error_status == 404
    assert result["api_error_type"] == "not_found_error"
    assert said["api_error_type"] == "not_found_error"


@pytest.mark.parametrize(
    ("status", "error"),
    [(400, "invalid_request"), (401, "authentication_failed"), (429, "rate_limit"),
     (529, "server_error"), (None, "unknown")],
)  # fmt: skip
def test_the_error_of_the_assistant_line_follows_the_status(status: int | None, error: str) -> None:
    failed = {**FAILED, "api_error_status": status}
    if status is None:  # no answer from the API at all (unreachable): no status, no type
        failed = {k: v for k, v in FAILED.items() if not k.startswith("api_error")}
    said, result = started().finish(failed)
    assert said["error"] == error
    assert result["api_error_status"] == status


def test_coteries_own_subtype_stays_in_the_result_it_was_given() -> None:
    """The mapping is the converter's: the session's result keeps ``error_model``."""
    given = dict(FAILED)
    started().finish(given)
    assert given["subtype"] == "error_model"
    assert RunResult.from_dict(FAILED).api_error_status == 404


def test_the_json_view_writes_the_result_line_alone() -> None:
    out = io.StringIO()
    view = JsonView(out)
    view.start({"run_id": "run1", "model": "m", "permission_mode": "default"})
    view.finish(FAILED)
    [line] = [json.loads(text) for text in out.getvalue().splitlines()]
    assert (line["type"], line["subtype"], line["is_error"]) == ("result", "success", True)


def test_the_stream_json_view_writes_both() -> None:
    out = io.StringIO()
    view = StreamJsonView(out)
    view.start({"run_id": "run1", "model": "m", "permission_mode": "default"})
    view.finish(FAILED)
    types = [json.loads(text)["type"] for text in out.getvalue().splitlines()]
    assert types == ["system", "assistant", "result"]


def test_a_conversation_reset_names_the_session_it_ends() -> None:
    [line] = started().conversation_reset("u-clear")
    parsed = parse_message(line)
    assert isinstance(parsed, ConversationResetMessage)
    assert (parsed.session_id, parsed.new_conversation_id, parsed.uuid) == (
        "run1", line["uuid"], line["uuid"]
    )  # fmt: skip
    assert (line["trigger"], line["user_message_uuid"]) == ("clear", "u-clear")
    [other] = started().conversation_reset(None)
    assert other["user_message_uuid"] not in (None, other["uuid"])


def test_a_local_commands_result_has_no_terminal_reason() -> None:
    cleared = {
        "result": "", "is_error": False, "subtype": "success", "num_turns": 0,
        "usage": Usage().to_dict(), "total_cost_usd": 0.0, "duration_ms": 0,
        "local_command": "clear",
    }  # fmt: skip
    [line] = started().finish(cleared)
    assert "terminal_reason" not in line
    assert line["local_command"] == "clear"


def test_a_turns_origin_is_on_its_result() -> None:
    done = {**FAILED, "subtype": "success", "is_error": False, "result": "ok"}
    stamped = HostTurn("hi", origin={"kind": "human"}).stamped(done)
    [line] = started().finish(stamped)
    parsed = parse_message(line)
    assert isinstance(parsed, ResultMessage)
    assert parsed.origin == {"kind": "human"}
    [plain] = started().finish(HostTurn("hi").stamped(done))
    assert "origin" not in plain


TEXT = {"type": "text", "text": "Looking first."}
THINK = {"type": "thinking", "thinking": "hm", "signature": "s"}
GLOB = {"type": "tool_use", "id": "t2", "name": "Glob", "input": {"pattern": "*"}}


def subagent_replies(lines: StreamLines, *replies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines of a subagent started by the lead's call ``agent1``, then its *replies*."""
    out = lines.event(ev("agent.tool_call", actor="lead", id="agent1", name="Agent", input={}))
    out += lines.event(ev("subagent.started", actor="lead", subagent="sub", subagent_type="x"))
    usage = {"input_tokens": 10, "output_tokens": 5}
    for content in replies:
        out += lines.event(ev("agent.message", actor="sub", content=content,
                              stop_reason="end_turn", usage=usage, model="m"))  # fmt: skip
    return [line for line in out if line["type"] == "assistant"]


def test_a_subagents_words_are_left_out_its_calls_kept() -> None:
    lines = started()
    said = subagent_replies(lines, [THINK, TEXT, GLOB], [TEXT])
    assert [line["message"]["content"] for line in said] == [[GLOB]]
    assert said[0]["parent_tool_use_id"] == "agent1"
    # What was left out still counts as the task's spend.
    lines.event(ev("subagent.finished", actor="lead", subagent="sub"))
    [answer] = lines.event(ev("agent.tool_result", actor="lead", id="agent1", name="Agent",
                              content="hi", is_error=False))  # fmt: skip
    assert answer["tool_use_result"]["totalTokens"] == 30


def test_with_subagent_text_a_subagents_replies_are_whole() -> None:
    said = subagent_replies(started(subagent_text=True), [THINK, TEXT, GLOB], [TEXT])
    assert [line["message"]["content"] for line in said] == [[THINK, TEXT, GLOB], [TEXT]]


def test_the_leads_own_text_is_always_there() -> None:
    lines = started()
    [line] = lines.event(ev("agent.message", actor="lead", content=[TEXT],
                            stop_reason="end_turn", usage={}, model="m"))  # fmt: skip
    assert line["message"]["content"] == [TEXT]
