"""WebSearch: its side call carries Anthropic's server tool, its result is read from
the server's blocks, and its searches are counted and priced in the run's ledger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.agent.sidecall import SideCalls
from coterie.models import MeteredModel, ModelReply, ModelRequest, Usage, parse_scenario
from coterie.models.pricing import WEB_SEARCH_USD
from coterie.models.scripted import ScriptedModel
from coterie.tools import ToolContext
from coterie.tools.capabilities import Effect
from coterie.tools.web import WebSearchTool
from coterie.tools.web.search import SERVER_TOOL, checked, result_text, server_tool

DOCS = "https://trio.readthedocs.io/en/stable/"
PEP = "https://peps.python.org/pep-0789/"


def searched(query: str = "trio nurseries", *, call: str = "srvtoolu_1") -> list[dict[str, Any]]:
    """The blocks of a side call's reply that searched once and summed up."""
    return [
        {"type": "server_tool_use", "id": call, "name": "web_search", "input": {"query": query}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": call,
            "content": [
                {"type": "web_search_result", "url": DOCS, "title": "Trio", "page_age": None},
                {"type": "web_search_result", "url": PEP, "title": "PEP 789"},
            ],
        },
        {
            "type": "text",
            "text": "A nursery scopes its child tasks.",
            "citations": [{"type": "web_search_result_location", "url": DOCS, "title": "Trio"}],
        },
    ]


def context(tracks: dict[str, list[dict[str, Any]]]) -> tuple[ToolContext, MeteredModel]:
    model = MeteredModel(ScriptedModel(parse_scenario({"tracks": tracks})))
    return ToolContext(Path("."), ask_model=SideCalls(model, "lead")), model


class Recording:
    """A model that records its requests and answers each with the next reply."""

    name = "recording"

    def __init__(self, *replies: ModelReply) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    async def complete(self, request: ModelRequest, **_: Any) -> ModelReply:
        self.requests.append(request)
        return self.replies.pop(0)


def test_it_is_a_deferred_network_tool() -> None:
    caps = WebSearchTool.capabilities
    assert (caps.effect, caps.deferred) == (Effect.NETWORK, True)


def test_the_server_tool_passes_the_domains_through() -> None:
    assert server_tool({"query": "q", "allowed_domains": ["a.example"]}) == {
        "type": SERVER_TOOL,
        "name": "web_search",
        "allowed_domains": ["a.example"],
        "max_uses": 8,
    }
    tool = server_tool({"query": "q", "blocked_domains": ["b.example"], "allowed_domains": []})
    assert tool["blocked_domains"] == ["b.example"]
    assert "allowed_domains" not in tool


@pytest.mark.parametrize(
    ("given_input", "problem"),
    [
        ({"query": "x"}, "at least 2"),
        ({"query": "  x "}, "at least 2"),
        ({"query": "ok", "allowed_domains": ["a"], "blocked_domains": ["b"]}, "not both"),
    ],
)
async def test_bad_input_is_refused_before_any_call(
    given_input: dict[str, Any], problem: str
) -> None:
    model = Recording()
    ctx = ToolContext(Path("."), ask_model=SideCalls(model, "lead"))
    result = await WebSearchTool().run(given_input, ctx)
    assert result.is_error
    assert problem in result.content
    assert checked(given_input) is not None
    assert model.requests == []


async def test_a_search_goes_out_as_a_side_call_and_comes_back_with_its_sources() -> None:
    reply = ModelReply(searched(), "end_turn", Usage(10, 5, web_search_requests=1), "m")
    model = Recording(reply)
    ctx = ToolContext(Path("."), agent="alice", ask_model=SideCalls(model, "alice"))
    result = await WebSearchTool().run(
        {"query": "trio nurseries", "blocked_domains": ["spam.example"]}, ctx
    )
    assert not result.is_error
    (request,) = model.requests
    assert (request.actor, request.role) == ("alice-websearch", "websearch")
    assert request.tools == [
        {
            "type": SERVER_TOOL,
            "name": "web_search",
            "blocked_domains": ["spam.example"],
            "max_uses": 8,
        }
    ]
    assert "trio nurseries" in request.messages[0]["content"][0]["text"]
    assert '"trio nurseries"' in result.content
    assert f"[Trio]({DOCS})" in result.content
    assert f"[PEP 789]({PEP})" in result.content
    assert "A nursery scopes its child tasks." in result.content


async def test_a_paused_reply_is_continued_with_what_it_holds() -> None:
    first = searched()[:2]
    model = Recording(
        ModelReply(first, "pause_turn", Usage(web_search_requests=1), "m"),
        ModelReply([{"type": "text", "text": "Done."}], "end_turn", Usage(), "m"),
    )
    ctx = ToolContext(Path("."), ask_model=SideCalls(model, "lead"))
    result = await WebSearchTool().run({"query": "trio"}, ctx)
    assert len(model.requests) == 2
    assert model.requests[1].messages[-1] == {"role": "assistant", "content": first}
    assert DOCS in result.content
    assert "Done." in result.content


async def test_the_scripted_websearch_track_serves_the_blocks_and_the_ledger_prices_them() -> None:
    ctx, model = context(
        {"websearch": [{"content": searched(), "usage": {"web_search_requests": 1}}]}
    )
    result = await WebSearchTool().run({"query": "trio nurseries"}, ctx)
    assert DOCS in result.content
    assert model.ledger.usage("lead-websearch") == Usage(web_search_requests=1)
    assert model.ledger.cost_usd() == pytest.approx(WEB_SEARCH_USD)  # no tokens: the search


async def test_a_turn_without_usage_counts_its_searches() -> None:
    ctx, model = context({"websearch": [{"content": searched()}]})
    await WebSearchTool().run({"query": "trio nurseries"}, ctx)
    assert model.ledger.usage().web_search_requests == 1


async def test_a_failed_search_says_why() -> None:
    blocks = [
        {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "s1",
            "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
        },
    ]
    ctx, _ = context({"websearch": [{"content": blocks}]})
    result = await WebSearchTool().run({"query": "qq"}, ctx)
    assert "max_uses_exceeded" in result.content
    assert "No pages were found." in result.content


async def test_without_the_runs_model_it_says_so() -> None:
    result = await WebSearchTool().run({"query": "trio"}, ToolContext(Path(".")))
    assert result.is_error
    assert "model" in result.content


async def test_a_failed_side_call_is_the_tools_error() -> None:
    ctx, _ = context({"websearch": [{"error": {"status": 400, "type": "invalid_request_error"}}]})
    result = await WebSearchTool().run({"query": "trio"}, ctx)
    assert result.is_error
    assert "invalid_request_error" in result.content


urls = st.from_regex(r"https://[a-z]{1,8}\.example/[a-z0-9]{0,6}", fullmatch=True)


@given(st.lists(st.tuples(urls, st.text(max_size=20)), max_size=6), st.text(max_size=40))
def test_every_source_found_is_in_the_result(hits: list[tuple[str, str]], summary: str) -> None:
    blocks: list[dict[str, Any]] = [
        {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": "s",
            "content": [{"type": "web_search_result", "url": u, "title": t} for u, t in hits],
        },
    ]
    if summary:
        blocks.append({"type": "text", "text": summary})
    text = result_text("q", blocks)
    for url, _title in hits:
        assert f"]({url})" in text
    assert summary.strip() in text
    assert ("Cite" in text) == bool(hits)
