"""coterie.sdkmessages: every line StreamLines writes becomes the message the
Agent SDK's own parser makes of it, field for field (the SDK is used here only)."""

from __future__ import annotations

import itertools
from typing import Any

import attrs
import pytest
from claude_agent_sdk._internal.message_parser import parse_message
from hypothesis import given, settings
from hypothesis import strategies as st

import coterie
from coterie.agent import SUBTYPES
from coterie.events import Event
from coterie.models import Usage
from coterie.sdkmessages import (
    AssistantMessage,
    MessageError,
    SystemMessage,
    TaskStartedMessage,
    TextBlock,
    message_of,
)
from coterie.ui.streamlines import StreamLines

SUB = "lead-sub-1"
actors = st.sampled_from(["lead", SUB, "alice"])
texts = st.text(max_size=20)
inputs = st.dictionaries(st.sampled_from(["command", "prompt", "description"]), texts, max_size=2)
blocks = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, texts),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s}, texts, texts),
    st.builds(
        lambda i, n, a: {"type": "tool_use", "id": i, "name": n, "input": a},
        st.sampled_from(["t1", "t2"]), st.sampled_from(["Bash", "Read", "Agent"]), inputs,
    ),
)  # fmt: skip
usages = st.builds(lambda i, o: {"input_tokens": i, "output_tokens": o}, st.integers(0, 99),
                   st.integers(0, 99))  # fmt: skip


def ev(type: str, **data: Any) -> Event:
    return Event(seq=1, ts=1.0, type=type, data=data)


events = st.one_of(
    st.builds(
        lambda a, c, u, s: ev("agent.message", actor=a, content=c, usage=u, stop_reason=s,
                              model="claude-sonnet-5-5"),
        actors, st.lists(blocks, max_size=3), usages, st.sampled_from(["end_turn", "tool_use"]),
    ),
    st.builds(
        lambda a, i, n, x: ev("agent.tool_call", actor=a, id=i, name=n, input=x),
        actors, st.sampled_from(["t1", "t2"]), st.sampled_from(["Bash", "Read", "Agent"]), inputs,
    ),
    st.builds(
        lambda a, i, c, e: ev("agent.tool_result", actor=a, id=i, name="Bash", content=c,
                              is_error=e),
        actors, st.sampled_from(["t1", "t2"]),
        st.one_of(texts, st.just([{"type": "text", "text": "x"}])), st.booleans(),
    ),
    st.builds(
        lambda a, k: ev("agent.stream_event", actor=a,
                        event={"type": k, "message": {"id": "msg_1"}, "index": 0}),
        actors, st.sampled_from(["message_start", "content_block_delta", "message_stop"]),
    ),
    st.builds(
        lambda: ev("subagent.started", actor="lead", subagent=SUB, description="look",
                   subagent_type="general-purpose"),
    ),
    st.builds(lambda e: ev("subagent.finished", actor="lead", subagent=SUB, is_error=e),
              st.booleans()),
    st.builds(lambda r: ev("agent.result", actor=SUB, result=r, is_error=False), texts),
    st.builds(lambda: ev("hook.started", hook_id="h", hook_name="PreToolUse:Bash",
                         event="PreToolUse", actor="lead")),
    st.builds(
        lambda c: ev("hook.response", hook_id="h", hook_name="PreToolUse:Bash",
                     event="PreToolUse", actor="lead", exit_code=c, stdout="o", stderr=""),
        st.integers(0, 2),
    ),
    st.builds(lambda: ev("model.retrying", actor="lead", fallback_model="claude-haiku-5-5",
                         reason="overloaded")),
)  # fmt: skip
results = st.builds(
    lambda subtype, text, structured: {
        "result": text, "is_error": subtype != "success", "subtype": subtype, "num_turns": 2,
        "usage": Usage(3, 4).to_dict(), "total_cost_usd": 0.5, "duration_ms": 7,
        **({"api_error_status": 529} if subtype == "error_model" else {}),
        **({} if structured is None else {"structured_output": structured}),
    },
    st.sampled_from(SUBTYPES), texts,
    st.one_of(st.none(), st.dictionaries(st.sampled_from(["city", "n"]), texts, max_size=2)),
)  # fmt: skip


#: A subagent at work from the start, so that its lines (with a parent) are drawn often.
SUBAGENT = [
    ev("agent.tool_call", actor="lead", id="a1", name="Agent", input={"prompt": "look"}),
    ev("subagent.started", actor="lead", subagent=SUB, description="look",
       subagent_type="general-purpose"),
]  # fmt: skip


def same(ours: Any, theirs: Any) -> None:
    """*ours* has the SDK's class name and, field by field, *theirs*'s values."""
    if attrs.has(type(ours)):
        assert type(ours).__name__ == type(theirs).__name__
        for field in attrs.fields(type(ours)):
            same(getattr(ours, field.name), getattr(theirs, field.name))
    elif isinstance(ours, list) and isinstance(theirs, list):
        assert len(ours) == len(theirs)
        for mine, its in zip(ours, theirs, strict=True):
            same(mine, its)
    else:
        assert ours == theirs


@settings(max_examples=150, deadline=None)
@given(
    st.lists(events, max_size=12),
    results,
    st.booleans(),
    st.booleans(),
)
def test_every_line_converts_as_the_sdk_parses_it(
    stream: list[Event], result: dict[str, Any], partial: bool, hooks: bool
) -> None:
    counter = itertools.count()
    lines = StreamLines(partial=partial, hook_events=hooks, new_uuid=lambda: f"u{next(counter)}")
    out = lines.start({"run_id": "run1", "model": "m", "permission_mode": "default"})
    for event in [*SUBAGENT, *stream]:
        out += lines.event(event)
    out += lines.finish({**result, "run_id": "run1"})
    for line in out:
        ours, theirs = message_of(line), parse_message(line)
        if ours is None:  # a type coterie has no class for yet
            assert theirs is None or type(theirs).__name__ not in coterie.__all__
        else:
            same(ours, theirs)


def test_the_init_line_is_a_system_message_holding_the_whole_line() -> None:
    line = {"type": "system", "subtype": "init", "session_id": "r", "tools": ["Bash"]}
    assert message_of(line) == SystemMessage("init", line)


def test_a_task_message_is_a_system_message() -> None:
    line = {"type": "system", "subtype": "task_started", "task_id": "s", "description": "d",
            "uuid": "u", "session_id": "r", "tool_use_id": "t1"}  # fmt: skip
    message = message_of(line)
    assert isinstance(message, TaskStartedMessage)
    assert isinstance(message, SystemMessage)
    assert message.tool_use_id == "t1"


def test_blocks_of_other_types_are_left_out() -> None:
    content = [{"type": "image", "source": {}}, {"type": "text", "text": "hi"}]
    line = {"type": "assistant", "message": {"content": content, "model": "m"}}
    message = message_of(line)
    assert isinstance(message, AssistantMessage)
    assert message.content == [TextBlock("hi")]


@pytest.mark.parametrize(
    "line",
    [
        {"type": "assistant", "message": {"content": []}},  # no model
        {"type": "assistant", "message": {"content": ["text"], "model": "m"}},
        {"type": "result", "subtype": "success"},
        {"type": "stream_event", "uuid": "u"},
        {"type": "user", "message": {"content": None}},
    ],
)
def test_a_line_missing_what_its_type_needs_is_refused(line: dict[str, Any]) -> None:
    with pytest.raises(MessageError):
        message_of(line)


def test_a_line_of_an_unknown_type_is_skipped() -> None:
    assert message_of({"type": "rate_limit_event"}) is None
