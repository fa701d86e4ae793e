"""Every agent of a team sends the same bytes up to the breakpoint after the run-wide
opening of its first message: the tools, coterie's own system prompt, the run's context
and the deferred tools' announcement, so what the first agent writes to the prompt
cache every other agent reads (each one's role, name and task come after it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import trio

from coterie.models.anthropic_model import system_blocks
from tests.models.conftest import scenario

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from coterie.models import MockServer, Scenario


def team_tracks() -> dict[str, list[dict[str, Any]]]:
    create = [
        {"name": "TaskCreate", "input": {"subject": f"t{i}", "description": "x", "owner": name}}
        for i, name in enumerate(["alice", "bob"])
    ]
    write = {"name": "Write", "input": {"file_path": "f.txt", "content": "x"}}
    mate = [{"tool_uses": [write]}, {"text": "did it"}]
    lead = [{"tool_uses": create}, {"text": "planned"}, {"text": "all done"}, {"text": "all done"}]
    return {"lead": lead, "alice": mate, "bob": mate}


def up_to_opening_breakpoint(body: dict[str, Any]) -> bytes:
    """The request's bytes up to and including the first message's first breakpoint
    (tools, then system, then that message's blocks, as the API caches them)."""
    blocks = body["messages"][0]["content"]
    (end,) = [i for i, block in enumerate(blocks[:-1]) if "cache_control" in block]
    return json.dumps([body["tools"], body["system"], blocks[: end + 1]], sort_keys=True).encode()


async def test_every_agents_first_request_shares_its_prefix(
    serve: Callable[[Scenario], Awaitable[MockServer]], tmp_path: Path
) -> None:
    server = await serve(scenario(team_tracks()))
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    (workspace / "CLAUDE.md").write_text("Use tabs.\n" * 800)  # written once, read by all
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env |= {"HOME": str(home), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test"}
    done = await trio.run_process(
        [sys.executable, "-m", "coterie", "team", "-p", "--teammates", "2",
         "--permission-mode", "bypassPermissions", "--output-format", "json", "go"],
        cwd=workspace, env=env, capture_stdout=True, capture_stderr=True,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    first: dict[str, dict[str, Any]] = {}
    for request in server.requests:
        if request.path == "/v1/messages":
            first.setdefault(request.headers["x-coterie-actor"], request.json())
    assert set(first) == {"lead", "alice", "bob"}
    prefixes = {actor: up_to_opening_breakpoint(body) for actor, body in first.items()}
    assert len(set(prefixes.values())) == 1, "the agents' prefixes differ"
    for body in first.values():
        (system,) = body["system"]
        assert system["cache_control"] == {"type": "ephemeral"}
        assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
        marks = [b for b in body["messages"][0]["content"] if "cache_control" in b]
        assert len(marks) == 2, "the opening's breakpoint and the conversation's"
    assert b"Use tabs." in prefixes["alice"], "the project's memory is in the shared part"
    # Tools a team's members seldom need are deferred: named, not sent.
    for body in first.values():
        names = {tool["name"] for tool in body["tools"]}
        assert not names & {"AskUserQuestion", "Workflow", "TodoWrite", "Agent", "ListAgents"}
        said = json.dumps(body["messages"][0])
        assert "AskUserQuestion" in said
        assert "TodoWrite" in said
    # The role and the name are the agent's own, after the breakpoint.
    own = [b["text"] for b in first["alice"]["messages"][0]["content"] if "alice" in b["text"]]
    assert own
    assert own[0].startswith("<system-reminder>\n# Your part in this run\n")
    assert b"alice" not in prefixes["alice"]
    assert "alice" not in json.dumps(first["alice"]["system"])
    # What the first agent's call wrote, the others' first calls read: the cache
    # figures the mock server reports, as the API's would be.
    usage = json.loads(done.stdout)["actors"]
    lead_wrote = usage["lead"]["cache_creation_input_tokens"]
    for mate in ("alice", "bob"):
        assert usage[mate]["cache_creation_input_tokens"] < lead_wrote / 5, usage


def test_a_system_prompt_with_nothing_shared_is_one_block() -> None:
    assert len(system_blocks("abc", 0)) == 1
    assert len(system_blocks("abc", 3)) == 1
    assert [b["text"] for b in system_blocks("abc", 1)] == ["a", "bc"]


async def test_toolsearch_denied_sends_every_tool_whole(
    serve: Callable[[Scenario], Awaitable[MockServer]], tmp_path: Path
) -> None:
    """``--disallowedTools ToolSearch``: nothing could be loaded, so nothing is deferred."""
    server = await serve(scenario({"lead": [{"text": "done"}]}))
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env |= {"HOME": str(home), "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "test"}
    done = await trio.run_process(
        [sys.executable, "-m", "coterie", "run", "-p", "go", "--disallowedTools", "ToolSearch"],
        cwd=workspace, env=env, capture_stdout=True, capture_stderr=True,
        stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    (body,) = [r.json() for r in server.requests if r.path == "/v1/messages"]
    names = {tool["name"] for tool in body["tools"]}
    assert "WebFetch" in names
    assert "ToolSearch" not in names
    assert not any(tool.get("defer_loading") for tool in body["tools"])
