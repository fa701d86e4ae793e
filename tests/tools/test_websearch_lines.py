"""Server-tool blocks and searches on the stream-json lines.

A reply holding a server tool's search (``server_tool_use``, its
``web_search_tool_result``, the cited text) reaches its ``assistant`` line as
the API gave it, and the typed messages read it as the Agent SDK does; a
subagent's searches are not counted as its tokens.
"""

from __future__ import annotations

from claude_agent_sdk import AssistantMessage, TaskNotificationMessage
from claude_agent_sdk._internal.message_parser import parse_message

from coterie import sdkmessages
from coterie.sdkmessages import ServerToolUseBlock, TextBlock, message_of
from tests.models.test_websearch_blocks import blocks
from tests.test_sdkmessages import same
from tests.ui.test_streamlines import ev, lines_of, subagent_run


def test_a_search_reaches_the_assistant_line_as_the_api_gave_it() -> None:
    usage = {"input_tokens": 10, "output_tokens": 5, "web_search_requests": 1}
    reply = ev("agent.message", actor="lead", content=blocks(), stop_reason="end_turn",
               usage=usage, model="claude-sonnet-5-5")  # fmt: skip
    _, [_, line] = lines_of([reply])
    assert line["message"]["content"] == blocks()
    parsed = parse_message(line)
    assert isinstance(parsed, AssistantMessage)
    ours = message_of(line)
    same(ours, parsed)  # the search's call kept, its result left out, as the SDK reads it
    assert isinstance(ours, sdkmessages.AssistantMessage)
    assert ours.content == [
        ServerToolUseBlock("srvtoolu_1", "web_search", {"query": "trio"}),
        TextBlock("Nurseries scope tasks."),
    ]


def test_a_subagents_searches_are_not_its_tokens() -> None:
    events = subagent_run()
    sub = events[2]
    assert sub.type == "agent.message"
    events[2] = ev(
        "agent.message",
        actor=sub.data["actor"],
        content=sub.data["content"],
        stop_reason="end_turn",
        usage={"input_tokens": 10, "output_tokens": 5, "web_search_requests": 3},
        model="claude-sonnet-5-5",
    )
    _, out = lines_of(events, subagent_text=True)
    done = [m for m in map(parse_message, out[1:]) if isinstance(m, TaskNotificationMessage)]
    assert done[0].usage is not None
    assert done[0].usage["total_tokens"] == 15
