"""Server-tool blocks (web search) through scenarios, the wire, both clients and the price.

A scenario turn's ``content`` serves ``server_tool_use``, ``web_search_tool_result``
and cited ``text`` blocks; the mock server streams them as the API does, with
the searches in ``usage.server_tool_use.web_search_requests``; the thin client
and the SDK transport assemble them back unchanged, and the ledger prices each
search at $10 per 1,000.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

import anthropic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.models import ModelReply, ModelRequest, ScenarioError, Usage
from coterie.models._wire import stream_events
from coterie.models.anthropic_model import AnthropicModel
from coterie.models.assembly import MessageAssembly
from coterie.models.pricing import WEB_SEARCH_USD, UsageLedger, cost_usd
from tests.models.conftest import scenario

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.models import MockServer, Scenario

    Serve = Callable[[Scenario], Awaitable[MockServer]]

URL = "https://trio.readthedocs.io/en/stable/"
SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 8}
ASK = ModelRequest(system="search", messages=[{"role": "user", "content": "trio"}], tools=[SEARCH])


def blocks(call: str = "srvtoolu_1", text: str = "Nurseries scope tasks.") -> list[dict[str, Any]]:
    return [
        {"type": "server_tool_use", "id": call, "name": "web_search", "input": {"query": "trio"}},
        {
            "type": "web_search_tool_result",
            "tool_use_id": call,
            "content": [
                {
                    "type": "web_search_result",
                    "url": URL,
                    "title": "Trio",
                    "encrypted_content": "e1",
                    "page_age": None,
                }
            ],
        },
        {
            "type": "text",
            "text": text,
            "citations": [
                {
                    "type": "web_search_result_location",
                    "url": URL,
                    "title": "Trio",
                    "encrypted_index": "i1",
                    "cited_text": "A nursery",
                }
            ],
        },
    ]


def test_usage_keeps_searches_in_the_apis_form_and_its_own() -> None:
    usage = Usage(3, 4, web_search_requests=2)
    assert usage.to_api()["server_tool_use"] == {"web_search_requests": 2}
    assert Usage.from_api(usage.to_api()) == usage
    assert Usage(**usage.to_dict()) == usage
    assert Usage.from_api(usage.to_dict()) == usage  # coterie's own (flat) form too
    assert "web_search_requests" not in Usage(3, 4).to_dict()  # no searches: the old shape
    assert "server_tool_use" not in Usage(3, 4).to_api()
    assert (usage + usage).web_search_requests == 4
    assert usage.tokens == 7
    assert Usage.from_api({"server_tool_use": None, "input_tokens": True}) == Usage()


def test_each_search_costs_a_cent_whatever_the_model() -> None:
    for model in ("claude-haiku-4-5", "claude-opus-4-1", "scripted"):
        tokens = cost_usd(model, Usage(1000, 100))
        assert cost_usd(model, Usage(1000, 100, web_search_requests=3)) == pytest.approx(
            tokens + 3 * 0.01
        )
    ledger = UsageLedger()
    ledger.record("lead-websearch", "claude-sonnet-4-5", Usage(web_search_requests=1))
    assert ledger.cost_usd("lead-websearch") == pytest.approx(WEB_SEARCH_USD) == 0.01


def test_a_turns_content_is_parsed_served_and_written_back() -> None:
    scen = scenario({"websearch": [{"content": blocks(), "text": "Then this."}]})
    assert scenario(scen.to_dict()["tracks"]) == scen
    (turn,) = scen.tracks["websearch"]
    assert list(turn.content) == blocks()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ([], "non-empty list"),
        ([{"type": "tool_use"}], "'type' must be one of"),
        ([blocks()[1]], "must name a server_tool_use before it"),
        ([{**blocks()[0], "input": []}], "'input' must be an object"),
        ([blocks()[0], {**blocks()[1], "content": [{"type": "web_search_result"}]}], "'url'"),
        ([blocks()[0], {**blocks()[1], "content": {"type": "oops"}}], "error_code"),
        ([{"type": "text", "text": ""}], "non-empty string"),
        ([{"type": "text", "text": "x", "citations": "no"}], "'citations'"),
    ],
)
def test_a_malformed_block_is_refused_where_it_is(content: list[Any], problem: str) -> None:
    with pytest.raises(ScenarioError, match=r"tracks\.lead\[0\]") as caught:
        scenario({"lead": [{"content": content}]})
    assert problem in str(caught.value)


texts = st.text(min_size=1, max_size=30)


@given(texts, st.integers(0, 5), st.integers(0, 50))
def test_streamed_server_blocks_assemble_back_to_themselves(
    text: str, searches: int, tokens: int
) -> None:
    content = blocks(text=text)
    usage = Usage(tokens, tokens + 1, web_search_requests=searches)
    assembly = MessageAssembly()
    streamed = ""
    for event in stream_events("msg_1", "m", copy.deepcopy(content), "end_turn", usage):
        streamed += assembly.feed(json.loads(json.dumps(event))) or ""
    message = assembly.message()
    assert message["content"] == content
    assert streamed == text
    assert Usage.from_api(message["usage"]) == usage


@pytest.mark.parametrize("client", ["thin", "sdk"])
async def test_both_clients_bring_back_the_blocks_and_the_searches(
    serve: Serve, client: str
) -> None:
    server = await serve(scenario({"lead": [{"content": blocks()}]}))
    if client == "sdk":
        sdk = anthropic.AsyncAnthropic(api_key="k", base_url=server.url, max_retries=0)
        model = AnthropicModel("claude-sonnet-4-5", client=sdk, cache_conversation=False)
    else:
        model = AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=server.url)
    streamed: list[str] = []
    async with model:
        reply = await model.complete(ASK, on_text=streamed.append)
    assert isinstance(reply, ModelReply)
    assert reply.content == blocks()
    assert reply.usage.web_search_requests == 1
    assert "".join(streamed) == reply.text == "Nurseries scope tasks."
    sent = json.loads(server.requests[0].body)
    assert sent["tools"][0]["type"] == "web_search_20250305"
    assert {k: v for k, v in sent["tools"][0].items() if k != "cache_control"} == SEARCH


async def test_the_mock_server_answers_with_the_apis_usage_form(serve: Serve) -> None:
    server = await serve(scenario({"lead": [{"content": blocks()}]}))
    async with AnthropicModel("claude-sonnet-4-5", api_key="k", base_url=server.url) as model:
        reply = await model.complete(ASK)
    assert reply.usage.web_search_requests == 1
    assert reply.usage.input_tokens > 0
