"""A streamed reply put back together: any message, encoded as the API streams it,
assembles back to itself; events out of the API's order are refused."""

from __future__ import annotations

import copy
import itertools
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.models.assembly import MessageAssembly, StreamProtocolError
from tests.strategies import json_values

Event = dict[str, Any]
PING: Event = {"type": "ping"}
STOP_REASONS = ["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn", "refusal"]

texts = st.text(max_size=30)
ids = st.from_regex(r"\A(toolu|srvtoolu)_[A-Za-z0-9]{1,12}\Z")
counts = st.integers(0, 10**6)
tool_inputs = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


@st.composite
def pieces(draw: st.DrawFn, whole: str) -> list[str]:
    """*whole* cut at arbitrary places (empty pieces included, as the API sends)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(whole)), max_size=6)))
    bounds = [0, *cuts, len(whole)]
    return [whole[a:b] for a, b in itertools.pairwise(bounds)]


@st.composite
def blocks(draw: st.DrawFn) -> tuple[Event, Event, list[Event]]:
    """A content block: what it must assemble to, its ``content_block_start``
    block, and its deltas."""
    kind = draw(st.sampled_from(["text", "tool_use", "server_tool_use", "thinking", "redacted"]))
    if kind == "text":
        text = draw(texts)
        deltas = [{"type": "text_delta", "text": p} for p in draw(pieces(text))]
        return {"type": "text", "text": text}, {"type": "text", "text": ""}, deltas
    if kind in ("tool_use", "server_tool_use"):
        name = draw(st.sampled_from(["Read", "Bash", "web_search"]))
        value = draw(tool_inputs)
        encoded = json.dumps(value, ensure_ascii=draw(st.booleans()))
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in draw(pieces(encoded))]
        head = {"type": kind, "id": draw(ids), "name": name, "input": {}}
        return {**head, "input": value}, head, deltas
    if kind == "thinking":
        thinking, signature = draw(texts), draw(st.text(min_size=1, max_size=20))
        thoughts: list[Event] = [
            {"type": "thinking_delta", "thinking": p} for p in draw(pieces(thinking))
        ]
        thoughts.append({"type": "signature_delta", "signature": signature})
        head = {"type": "thinking", "thinking": "", "signature": ""}
        return {**head, "thinking": thinking, "signature": signature}, head, thoughts
    block = {"type": "redacted_thinking", "data": draw(st.text(min_size=1, max_size=20))}
    return block, block, []


usages = st.fixed_dictionaries(
    {"input_tokens": counts, "output_tokens": counts},
    optional={"cache_creation_input_tokens": counts, "cache_read_input_tokens": counts},
)


@st.composite
def replies(draw: st.DrawFn) -> tuple[Event, list[Event]]:
    """A message and the event sequence the API streams it as (pings anywhere)."""
    content = draw(st.lists(blocks(), max_size=5))
    start_usage = draw(usages)
    final_usage = draw(
        st.fixed_dictionaries(
            {"output_tokens": counts},
            optional={
                "input_tokens": counts,
                "cache_read_input_tokens": counts | st.none(),  # None: not reported
            },
        )
    )
    head: Event = {
        "id": "msg_" + draw(st.from_regex(r"\A[A-Za-z0-9]{1,10}\Z")),
        "type": "message",
        "role": "assistant",
        "model": draw(st.sampled_from(["claude-sonnet-4-5", "claude-opus-4-1"])),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    stop_reason = draw(st.sampled_from(STOP_REASONS))
    events: list[Event] = [{"type": "message_start", "message": copy.deepcopy(head)}]
    for index, (_, start, deltas) in enumerate(content):
        events.append({"type": "content_block_start", "index": index, "content_block": start})
        events += [{"type": "content_block_delta", "index": index, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append(
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": final_usage,
        }
    )
    events.append({"type": "message_stop"})
    for _ in range(draw(st.integers(0, 4))):
        events.insert(draw(st.integers(1, len(events))), PING)
    if draw(st.booleans()):
        events.append(PING)  # a ping after message_stop is harmless
    usage = {**start_usage, **{k: v for k, v in final_usage.items() if v is not None}}
    message = {
        **head,
        "content": [block for block, _, _ in content],
        "stop_reason": stop_reason,
        "usage": usage,
    }
    return message, events


def assemble(events: list[Event]) -> tuple[MessageAssembly, str]:
    assembly = MessageAssembly()
    streamed = ""
    for event in events:
        streamed += assembly.feed(copy.deepcopy(event)) or ""
    return assembly, streamed


@given(replies())
def test_any_reply_assembles_back_to_itself(reply: tuple[Event, list[Event]]) -> None:
    message, events = reply
    assembly, streamed = assemble(events)
    assert assembly.stopped
    assert assembly.message() == message
    assert streamed == "".join(b["text"] for b in message["content"] if b["type"] == "text")
    usage = assembly.usage()
    assert set(usage) == {
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    }
    assert usage["output_tokens"] == message["usage"]["output_tokens"]


@given(replies())
def test_the_message_is_not_complete_before_message_stop(reply: tuple[Event, list[Event]]) -> None:
    _, events = reply
    cut = next(i for i, e in enumerate(events) if e["type"] == "message_stop")
    assembly, _ = assemble(events[:cut])
    assert not assembly.stopped
    with pytest.raises(StreamProtocolError):
        assembly.message()


def refused(events: list[Event]) -> None:
    with pytest.raises(StreamProtocolError):
        assemble(events)


def indexed(events: list[Event], kind: str) -> list[int]:
    return [i for i, e in enumerate(events) if e["type"] == kind]


@given(replies(), st.data())
def test_a_block_never_started_is_refused(reply: tuple[Event, list[Event]], data: Any) -> None:
    _, events = reply
    starts = indexed(events, "content_block_start")
    if starts:
        del events[data.draw(st.sampled_from(starts))]
        refused(events)


@given(replies(), st.data())
def test_a_block_never_stopped_is_refused(reply: tuple[Event, list[Event]], data: Any) -> None:
    _, events = reply
    stops = indexed(events, "content_block_stop")
    if stops:
        del events[data.draw(st.sampled_from(stops))]
        refused(events)


@given(replies(), st.data())
def test_a_second_message_start_is_refused(reply: tuple[Event, list[Event]], data: Any) -> None:
    _, events = reply
    events.insert(data.draw(st.integers(1, len(events))), events[0])
    refused(events)


@given(replies(), st.data())
def test_a_block_started_twice_is_refused(reply: tuple[Event, list[Event]], data: Any) -> None:
    _, events = reply
    starts = indexed(events, "content_block_start")
    if starts:
        again = events[data.draw(st.sampled_from(starts))]
        last = indexed(events, "message_stop")[0]
        events.insert(data.draw(st.integers(events.index(again) + 1, last)), again)
        refused(events)


@given(replies(), st.sampled_from(["content_block_start", "message_delta", "message_stop"]))
def test_events_after_message_stop_are_refused(reply: tuple[Event, list[Event]], kind: str) -> None:
    _, events = reply
    table: dict[str, Event] = {
        "content_block_start": {
            "type": "content_block_start",
            "index": 99,
            "content_block": {"type": "text", "text": ""},
        },
        "message_delta": {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        "message_stop": {"type": "message_stop"},
    }
    refused([*events, table[kind]])


@given(replies(), st.data())
def test_a_cut_tool_input_is_refused(reply: tuple[Event, list[Event]], data: Any) -> None:
    _, events = reply
    tools = [
        i
        for i in indexed(events, "content_block_start")
        if events[i]["content_block"]["type"] in ("tool_use", "server_tool_use")
    ]
    if not tools:
        return
    at = data.draw(st.sampled_from(tools))
    index = events[at]["index"]
    mine = [
        i
        for i, e in enumerate(events)
        if e["type"] == "content_block_delta" and e["index"] == index
    ]
    whole = "".join(events[i]["delta"]["partial_json"] for i in mine)
    for i in reversed(mine):
        del events[i]
    events.insert(
        at + 1,
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "input_json_delta", "partial_json": whole[:-1]},  # no closing }
        },
    )
    refused(events)


START: Event = {"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}}
STOP: list[Event] = [
    {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
    {"type": "message_stop"},
]


def block(index: int, start: Event, *deltas: Event) -> list[Event]:
    return [
        {"type": "content_block_start", "index": index, "content_block": start},
        *({"type": "content_block_delta", "index": index, "delta": d} for d in deltas),
        {"type": "content_block_stop", "index": index},
    ]


TOOL: Event = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {}}


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([{"type": "ping"}, *block(0, {"type": "text", "text": ""})], id="block-first"),
        pytest.param(
            [START, {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}],
            id="delta-before-start",
        ),
        pytest.param([START, *STOP[:1], {"type": "message_start", **START}], id="second-start"),
        pytest.param(
            [START, {"type": "content_block_start", "index": 0, "content_block": TOOL}, *STOP],
            id="never-stopped",
        ),
        pytest.param(
            [START, *block(0, TOOL, {"type": "input_json_delta", "partial_json": "{'a': 1}"})],
            id="not-json",
        ),
        pytest.param(
            [START, *block(0, TOOL, {"type": "input_json_delta", "partial_json": "[1, 2]"})],
            id="json-not-an-object",
        ),
        pytest.param(
            [
                START,
                *block(0, {"type": "text", "text": ""}),
                *block(0, {"type": "text", "text": ""}),
            ],
            id="index-reused",
        ),
        pytest.param(
            [
                START,
                *block(
                    0,
                    {"type": "text", "text": ""},
                    {"type": "input_json_delta", "partial_json": ""},
                ),
            ],
            id="json-for-text",
        ),
        pytest.param([START, {"type": "content_block_stop", "index": 3}], id="stop-unopened"),
        pytest.param([START, {"type": "content_block_stop", "index": "0"}], id="index-not-an-int"),
        pytest.param([{"type": "message_start"}], id="start-without-message"),
        pytest.param([START, *STOP, *block(1, {"type": "text", "text": ""})], id="after-stop"),
    ],
)
def test_out_of_order_events_are_refused(events: list[Event]) -> None:
    refused(events)


def test_a_tool_input_given_whole_in_its_start_is_kept() -> None:
    whole = {**TOOL, "input": {"path": "a.txt"}}
    assembly, _ = assemble([START, *block(0, whole), *STOP])
    assert assembly.message()["content"] == [whole]


def test_an_empty_partial_json_is_an_empty_input() -> None:
    events = [START, *block(0, TOOL, {"type": "input_json_delta", "partial_json": ""}), *STOP]
    assembly, _ = assemble(events)
    assert assembly.message()["content"] == [TOOL]


def test_unknown_event_types_are_ignored() -> None:
    events = [START, {"type": "future_event", "x": 1}, *block(0, {"type": "text", "text": ""})]
    assembly, _ = assemble([*events, *STOP])
    assert assembly.message()["content"] == [{"type": "text", "text": ""}]


CITATION = {"type": "char_location", "cited_text": "x", "document_index": 0}


def test_citations_accumulate_on_their_text_block() -> None:
    deltas: list[Event] = [
        {"type": "citations_delta", "citation": CITATION},
        {"type": "text_delta", "text": "cited"},
        {"type": "citations_delta", "citation": {**CITATION, "cited_text": "y"}},
    ]
    assembly, streamed = assemble([START, *block(0, {"type": "text", "text": ""}, *deltas), *STOP])
    assert streamed == "cited"
    assert assembly.message()["content"] == [
        {"type": "text", "text": "cited", "citations": [CITATION, {**CITATION, "cited_text": "y"}]}
    ]


def test_citations_on_a_block_opened_with_null_citations() -> None:
    start = {"type": "text", "text": "", "citations": None}
    delta = {"type": "citations_delta", "citation": CITATION}
    assembly, _ = assemble([START, *block(0, start, delta), *STOP])
    assert assembly.message()["content"][0]["citations"] == [CITATION]


def test_the_assembled_message_does_not_share_the_events() -> None:
    events = [START, *block(0, TOOL, {"type": "input_json_delta", "partial_json": '{"a": 1}'})]
    assembly = MessageAssembly()
    for event in [*events, *STOP]:
        assembly.feed(event)  # the events themselves, not copies
    assert TOOL["input"] == {}
    assert START["message"]["content"] == []
    assert assembly.message()["content"][0]["input"] == {"a": 1}


KINDS = [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
]
DELTAS = ["text_delta", "input_json_delta", "thinking_delta", "signature_delta", "citations_delta"]
#: Any JSON value, or one of the shapes the API's fields take with any values inside.
loose = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": st.sampled_from([*DELTAS, "text", "tool_use", "thinking"])},
        optional={
            "text": json_values,
            "thinking": json_values,
            "citations": json_values,
            "input": json_values,
            "partial_json": json_values,
            "citation": json_values,
            "signature": json_values,
            "stop_reason": json_values,
            "usage": json_values,
            "content": json_values,
        },
    ),
)
garbage_events = st.fixed_dictionaries(
    {"type": st.sampled_from(KINDS)},
    optional={
        "index": st.integers(-1, 3) | json_values,
        "message": loose,
        "content_block": loose,
        "delta": loose,
        "usage": loose,
    },
)


@given(
    st.fixed_dictionaries({"type": st.just("message_start"), "message": loose}),
    st.lists(garbage_events, max_size=12),
)
def test_malformed_events_raise_only_stream_protocol_error(
    start: Event, events: list[Event]
) -> None:
    assembly = MessageAssembly()
    try:
        for event in [start, *events]:
            assembly.feed(event)
            assembly.usage()
        if assembly.stopped:
            assembly.message()
    except StreamProtocolError:
        pass
