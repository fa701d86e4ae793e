"""WebSearch through the real CLI: allowed by a ``WebSearch`` rule, its side call served
with the server tool's blocks, the sources reaching the model, the search in the spend.

The scripted runs serve the side call from the scenario's ``websearch`` track;
one run goes over the real Messages API path to an in-process ``coterie
mock-server``, which records what the side call sent.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.events import read_events
from coterie.models import MockServer, parse_scenario, serve_scenario
from coterie.models.pricing import WEB_SEARCH_USD
from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie, home, workspace

if TYPE_CHECKING:
    from subprocess import CompletedProcess

__all__ = ["home", "workspace"]  # the fixtures

pytestmark = pytest.mark.slow

SCENARIOS = Path(__file__).parent / "scenarios"
URL = "https://trio.readthedocs.io/en/stable/reference-core.html"
ALLOW = ("--settings", json.dumps({"permissions": {"allow": ["WebSearch"]}}))
NO_TOKENS: dict[str, int] = {}  # a turn's usage: no tokens, so the spend is the searches'


#: WebSearch is deferred: over the API the model loads its schema with ToolSearch before
#: calling it; the scripted runs leave deferral out (what they test is the search).
LOAD = {"tool_uses": [{"name": "ToolSearch", "input": {"query": "select:WebSearch"}}], "usage": {}}
UNDEFERRED = {"ENABLE_TOOL_SEARCH": "false"}


def search_turn(**extra: Any) -> dict[str, Any]:
    call = {"name": "WebSearch", "input": {"query": "trio nursery", **extra}}
    return {"tool_uses": [call], "usage": NO_TOKENS}


def served() -> dict[str, Any]:
    """The side call's reply: one search, its result, a cited summary."""
    turn: dict[str, Any] = json.loads((SCENARIOS / "websearch.json").read_text())["tracks"][
        "websearch"
    ][0]
    return turn


def run(
    workspace: Path, home: Path, tracks: dict[str, list[dict[str, Any]]], *flags: str
) -> CompletedProcess[str]:
    scenario = workspace.parent / "websearch.json"
    scenario.write_text(json.dumps({"name": "websearch", "tracks": tracks}))
    return coterie(
        "run", "-p", "--output-format", "json", "--scenario", str(scenario), *flags,
        "search the web", cwd=workspace, home=home, env=UNDEFERRED,
    )  # fmt: skip


def results(workspace: Path) -> list[tuple[str, str]]:
    """(agent, content) of every tool result of the newest run, in order."""
    newest = max(runs_root(workspace).iterdir(), key=lambda p: p.name)
    return [
        (str(e.data.get("agent", e.data.get("actor"))), str(e.data["content"]))
        for e in read_events(newest / "events.jsonl")
        if e.type == "agent.tool_result"
    ]


def test_an_allowed_search_reaches_the_model_and_the_spend(workspace: Path, home: Path) -> None:
    done = coterie(
        "run", "-p", "--output-format", "json", *ALLOW,
        "--scenario", str(SCENARIOS / "websearch.json"), "search the web",
        cwd=workspace, home=home, env=UNDEFERRED,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "Trio's nurseries scope their tasks."
    ((_agent, given),) = results(workspace)
    assert URL in given
    assert "scopes their child tasks" in given


def test_the_search_is_in_the_runs_spend(workspace: Path, home: Path) -> None:
    """No tokens are counted: only the search's cent can exhaust a half-cent budget."""
    done = coterie(
        "run", "-p", "--output-format", "json", *ALLOW, f"--max-budget-usd={WEB_SEARCH_USD / 2}",
        "--scenario", str(SCENARIOS / "websearch.json"), "search the web",
        cwd=workspace, home=home, env=UNDEFERRED,
    )  # fmt: skip
    result = json.loads(done.stdout)
    assert result["subtype"] == "error_max_budget_usd", done.stdout
    assert "spent $0.0100" in result["result"]


def test_without_a_rule_it_is_asked_and_headless_denied(workspace: Path, home: Path) -> None:
    done = run(
        workspace,
        home,
        {"lead": [search_turn(), {"expect": "denied", "text": "No search.", "usage": NO_TOKENS}]},
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "No search."
    assert results(workspace)[0][1].startswith("Permission to use WebSearch was denied")


def test_a_deny_rule_wins_over_bypass(workspace: Path, home: Path) -> None:
    done = run(
        workspace,
        home,
        {"lead": [search_turn(), {"expect": "deny", "text": "No search.", "usage": NO_TOKENS}]},
        "--permission-mode",
        "bypassPermissions",
        "--disallowedTools=WebSearch",
    )
    assert done.returncode == 0, done.stderr
    assert "WebSearch" in results(workspace)[0][1]


def test_a_subagent_searches_the_same_way(workspace: Path, home: Path) -> None:
    look = {"description": "search", "prompt": "Search.", "subagent_type": "general-purpose"}
    done = run(
        workspace,
        home,
        {
            "lead": [
                {"tool_uses": [{"name": "Agent", "input": look}], "usage": NO_TOKENS},
                {"expect": "scope", "text": "Done.", "usage": NO_TOKENS},
            ],
            "subagent": [search_turn(), {"expect": URL, "text": "They scope.", "usage": NO_TOKENS}],
            "websearch": [served()],
        },
        *ALLOW,
    )
    assert done.returncode == 0, done.stderr
    agent, given = results(workspace)[0]
    assert agent != "lead"
    assert URL in given


async def test_over_the_messages_api_the_side_call_carries_the_server_tool(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    tracks = {
        "lead": [
            LOAD,
            search_turn(allowed_domains=["trio.readthedocs.io"]),
            {"expect": URL, "text": "ok"},
        ],
        "websearch": [served()],
    }
    server: MockServer = await nursery.start(serve_scenario, parse_scenario({"tracks": tracks}))
    env = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="test-key")
    done = await trio.run_process(
        [sys.executable, "-m", "coterie", "run", "-p", *ALLOW, "search the web"],
        cwd=workspace, env=env, capture_stdout=True, capture_stderr=True, check=False, stdin=b"",
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b"ok\n"), done.stderr
    _load, first, side, last = [r for r in server.requests if r.path == "/v1/messages"]
    assert [r.headers.get("x-coterie-role") for r in (first, side, last)] == [
        "lead",
        "websearch",
        "lead",
    ]
    (tool,) = side.json()["tools"]
    assert {k: v for k, v in tool.items() if k != "cache_control"} == {
        "type": "web_search_20250305",
        "name": "web_search",
        "allowed_domains": ["trio.readthedocs.io"],
        "max_uses": 8,
    }
    assert "trio nursery" in json.dumps(side.json()["messages"])
    answered = last.json()["messages"][-1]["content"]
    assert URL in json.dumps(answered)
