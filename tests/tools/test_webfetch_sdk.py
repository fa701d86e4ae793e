"""WebFetch on the real SDK path: the CLI talks to a mock Messages API server.

The first request offers WebFetch (and every other tool named as Claude Code
2.1.332 names it) with Claude Code's input fields; the page is read by a side
call that goes out as its own request, in role ``webfetch``, with no tools.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.models import MockServer, parse_scenario, serve_scenario
from tests.agent.conftest import clean_env, home, workspace
from tests.tools.test_cc_tool_schemas import CAPTURED, KNOWN, shape
from tests.tools.webpages import Site, serve

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.models.mock_server import RecordedRequest

pytestmark = pytest.mark.slow

site = pytest.fixture(serve)
ANSWER = "The page says the answer is 42."


async def run_cli(*args: str, cwd: Path, home: Path, url: str) -> trio.Process:
    env = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="test-key")
    return await trio.run_process(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env=env,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        stdin=b"",
    )


def calls(server: MockServer) -> list[RecordedRequest]:
    return [r for r in server.requests if r.path == "/v1/messages" and r.body.strip()]


async def test_webfetch_over_the_messages_api(
    site: Site, workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    fetch = {"name": "WebFetch", "input": {"url": site.url("/page"), "prompt": "The answer?"}}
    scenario = parse_scenario(
        {
            "tracks": {
                "lead": [{"tool_uses": [fetch]}, {"expect": ANSWER, "text": "It is 42."}],
                "webfetch": [{"expect": "Hello from the test page", "text": ANSWER}],
            }
        },
        source="webfetch.json",
    )
    server: MockServer = await nursery.start(serve_scenario, scenario)
    done = await run_cli(
        "run", "-p", "--allowedTools=WebFetch(domain:127.0.0.1)", "read the page",
        cwd=workspace, home=home, url=server.url,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b"It is 42.\n"), done.stderr
    first, side, last = calls(server)
    assert [r.headers.get("x-coterie-role") for r in (first, side, last)] == [
        "lead",
        "webfetch",
        "lead",
    ]
    offered = {t["name"]: t for t in first.json()["tools"]}
    # Deferred, as in Claude Code: named in the conversation, sent once ToolSearch loads it.
    assert "WebFetch" not in offered
    assert "WebFetch" in json.dumps(first.json()["messages"][0])
    for name, tool in offered.items():
        if name in CAPTURED["tools"] and name not in KNOWN:
            theirs = CAPTURED["tools"][name]
            expected = {"properties": theirs["properties"], "required": theirs["required"]}
            assert shape(tool["input_schema"]) == expected, name
    body: dict[str, Any] = side.json()
    assert body.get("tools", []) == []
    assert side.headers.get("x-coterie-actor") == "lead-webfetch"
    assert "Hello from the test page" in json.dumps(body["messages"])
    assert site.hits["/page"] == 1


__all__ = ["home", "workspace"]  # the CLI fixtures, used above
