"""Deferred tools through the real CLI and SDK, against a mock Messages API server.

What Claude Code 2.1.332 sends (observed against ``coterie mock-server``): the
deferred tools named in the conversation, not in ``tools``; ToolSearch and a
``defer_loading`` placeholder in ``tools``; ToolSearch's result a list of
``tool_reference`` blocks; from then on the loaded tool in ``tools`` with
``defer_loading``; and the prefix the API renders (the system prompt, the tools
without ``defer_loading``) the same bytes before and after.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.models import MockServer, parse_scenario, serve_scenario
from tests.agent.conftest import clean_env, home, workspace
from tests.tools.webpages import Site, serve

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

    from coterie.models.mock_server import RecordedRequest

pytestmark = pytest.mark.slow

site = pytest.fixture(serve)
PLACEHOLDER = "DeferredToolPlaceholder"
ANSWER = "The page says the answer is 42."


async def run_cli(
    *args: str, cwd: Path, home: Path, url: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    environ = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="test-key")
    return await trio.run_process(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env={**environ, **(env or {})},
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        stdin=b"",
    )


def requests_of(server: MockServer, role: str) -> list[dict[str, Any]]:
    recorded: list[RecordedRequest] = [
        r for r in server.requests if r.path == "/v1/messages" and r.body.strip()
    ]
    return [r.json() for r in recorded if r.headers.get("x-coterie-role") == role]


def tools_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in body.get("tools", [])}


def rendered_prefix(body: dict[str, Any]) -> str:
    """What the API renders before the conversation: the system prompt and the
    tools it loads up front (those without ``defer_loading``), as sent."""
    eager = [
        {k: v for k, v in t.items() if k != "cache_control"}
        for t in body["tools"]
        if not t.get("defer_loading")
    ]
    return json.dumps([body.get("system"), eager])


async def test_toolsearch_loads_webfetch_which_then_runs(
    site: Site, workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    search = {"name": "ToolSearch", "input": {"query": "select:WebFetch"}}
    fetch = {"name": "WebFetch", "input": {"url": site.url("/page"), "prompt": "The answer?"}}
    scenario = parse_scenario(
        {
            "tracks": {
                "lead": [
                    {"tool_uses": [search]},
                    {"tool_uses": [fetch]},
                    {"expect": ANSWER, "text": "It is 42."},
                ],
                "webfetch": [{"expect": "Hello from the test page", "text": ANSWER}],
            }
        },
        source="deferred.json",
    )
    server: MockServer = await nursery.start(serve_scenario, scenario)
    done = await run_cli(
        "run", "-p", "--allowedTools=WebFetch(domain:127.0.0.1)", "read the page",
        cwd=workspace, home=home, url=server.url,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b"It is 42.\n"), done.stderr
    first, loaded, last = requests_of(server, "lead")

    # Named to the model, not sent: ToolSearch and the placeholder are.
    offered = tools_of(first)
    assert "WebFetch" not in offered
    assert "ToolSearch" in offered
    assert offered[PLACEHOLDER]["defer_loading"] is True
    opening = json.dumps(first["messages"][0])
    assert "WebFetch" in opening
    assert "NotebookEdit" in opening

    # ToolSearch answered with a reference; WebFetch is sent from then on.
    result = loaded["messages"][-1]["content"][0]
    assert result["type"] == "tool_result"
    assert result["content"] == [{"type": "tool_reference", "tool_name": "WebFetch"}]
    for body in (loaded, last):
        webfetch = tools_of(body)["WebFetch"]
        assert webfetch["defer_loading"] is True
        assert set(webfetch["input_schema"]["required"]) == {"url", "prompt"}
    assert "NotebookEdit" not in tools_of(last)  # only what was loaded
    assert site.hits["/page"] == 1

    # The prompt's cached prefix is the same bytes before and after the load.
    assert rendered_prefix(loaded) == rendered_prefix(first)
    assert rendered_prefix(last) == rendered_prefix(first)


@pytest.mark.parametrize("where", ["environment", "user settings"])
async def test_enable_tool_search_false_sends_every_tool_whole(
    where: str, workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    scenario = parse_scenario({"tracks": {"lead": [{"text": "hi"}]}}, source="off.json")
    server: MockServer = await nursery.start(serve_scenario, scenario)
    env = {"ENABLE_TOOL_SEARCH": "false"}
    if where == "user settings":  # the settings' env, as Claude Code reads it
        (home / ".claude").mkdir()
        (home / ".claude" / "settings.json").write_text(json.dumps({"env": env}))
        env = {}
    done = await run_cli(
        "run", "-p", "hello", cwd=workspace, home=home, url=server.url, env=env
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (first,) = requests_of(server, "lead")
    offered = tools_of(first)
    assert "WebFetch" in offered
    assert "ToolSearch" not in offered
    assert PLACEHOLDER not in offered
    assert not any(t.get("defer_loading") for t in first["tools"])
    assert "ToolSearch" not in json.dumps(first["messages"])


async def test_a_subagent_loads_deferred_tools_as_its_parent_does(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    start = {
        "name": "Agent",
        "input": {"description": "look", "prompt": "load it", "subagent_type": "general-purpose"},
    }
    search = {"name": "ToolSearch", "input": {"query": "notebook"}}
    scenario = parse_scenario(
        {
            "tracks": {
                "lead": [{"tool_uses": [start]}, {"text": "done"}],
                "subagent": [{"tool_uses": [search]}, {"text": "loaded"}],
            }
        },
        source="sub.json",
    )
    server: MockServer = await nursery.start(serve_scenario, scenario)
    done = await run_cli("run", "-p", "go", cwd=workspace, home=home, url=server.url)
    assert (done.returncode, done.stdout) == (0, b"done\n"), done.stderr
    first, second = requests_of(server, "subagent")
    assert "NotebookEdit" not in tools_of(first)
    assert "ToolSearch" in tools_of(first)
    assert "NotebookEdit" in json.dumps(first["messages"][0])
    assert tools_of(second)["NotebookEdit"]["defer_loading"] is True
    assert rendered_prefix(second) == rendered_prefix(first)


async def test_the_tool_search_beta_goes_with_deferred_tools(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    scenario = parse_scenario({"tracks": {"lead": [{"text": "hi"}]}}, source="beta.json")
    server: MockServer = await nursery.start(serve_scenario, scenario)
    done = await run_cli("run", "-p", "hello", cwd=workspace, home=home, url=server.url)
    assert done.returncode == 0, done.stderr
    (first,) = [r for r in server.requests if r.path == "/v1/messages" and r.body.strip()]
    betas = first.headers.get("anthropic-beta", "").split(",")
    assert "advanced-tool-use-2025-11-20" in betas


__all__ = ["home", "workspace"]  # the CLI fixtures, used above
