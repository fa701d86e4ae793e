"""A host's conversation over ``--input-format stream-json``, as Claude Code 2.1.332
holds it: ``/clear`` starts a new run, a line's ``origin`` comes back on its result,
an API error's result has Claude Code's shape, a subagent's text is on the stream
only when the host asks (``forwardSubagentText``), and the Agent tool takes
``run_in_background``. The real CLI against the in-process mock server, whose
recorded requests show what the model was sent."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import trio

from coterie.models import parse_scenario, serve_scenario
from coterie.runs import read_state, runs_root
from tests.agent.conftest import clean_env

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.models import MockServer

HOST = ("--output-format", "stream-json", "--verbose", "--input-format", "stream-json")
GREET = {"description": "Greet", "prompt": "say hi", "subagent_type": "general-purpose"}


async def serve(nursery: trio.Nursery, **tracks: list[dict[str, Any]]) -> MockServer:
    server: MockServer = await nursery.start(
        serve_scenario, parse_scenario({"tracks": tracks}, source="s.json")
    )
    return server


async def host(
    stdin: list[dict[str, Any]], *args: str, cwd: Path, home: Path, url: str
) -> tuple[int, list[dict[str, Any]], str]:
    """``coterie ARGS`` fed the host's *stdin* lines: exit code, stdout's lines, stderr."""
    env = {**clean_env(HOME=str(home)), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"}
    done = await trio.run_process(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env=env,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        stdin="".join(json.dumps(line) + "\n" for line in stdin).encode(),
    )
    out = [json.loads(line) for line in done.stdout.decode().splitlines() if line.strip()]
    return done.returncode, out, done.stderr.decode()


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, **extra}


def initialize(**body: Any) -> dict[str, Any]:
    return {"type": "control_request", "request_id": "r1",
            "request": {"subtype": "initialize", **body}}  # fmt: skip


def sent(server: MockServer) -> list[dict[str, Any]]:
    """The bodies of the model requests the server received."""
    return [r.json() for r in server.requests if r.path == "/v1/messages"]


def kinds(out: list[dict[str, Any]]) -> list[str]:
    return [f"{o['type']}/{o['subtype']}" if o["type"] == "system" else o["type"] for o in out]


async def test_clear_ends_the_run_and_the_next_prompt_starts_a_new_one_with_no_history(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(
        nursery, lead=[{"expect": "first", "text": "one"}, {"expect": "second", "text": "two"}]
    )
    stdin = [user("first"), user("/clear", uuid="u-clear"), user("second")]
    code, out, err = await host(stdin, *HOST, cwd=workspace, home=home, url=server.url)
    assert code == 0, err
    assert kinds(out) == [
        "system/init", "assistant", "result",  # the first run
        "conversation_reset",  # said in the first run's name
        "system/init", "result", "assistant", "result",  # the new one: /clear's result first
    ]  # fmt: skip
    first, second = out[0]["session_id"], out[4]["session_id"]
    assert first != second
    reset = out[3]
    assert (reset["session_id"], reset["user_message_uuid"]) == (first, "u-clear")
    assert reset["new_conversation_id"] == reset["uuid"]
    cleared = out[5]
    assert (cleared["session_id"], cleared["subtype"], cleared["is_error"]) == (
        second,
        "success",
        False,
    )
    assert (cleared["num_turns"], cleared["result"], cleared["total_cost_usd"]) == (0, "", 0.0)
    assert "terminal_reason" not in cleared  # the model was not asked
    assert [o["session_id"] for o in out[5:]] == [second] * 3
    assert out[-1]["result"] == "two"
    # The model never saw /clear, and the new run's request holds the new prompt only.
    bodies = sent(server)
    assert len(bodies) == 2
    [only] = bodies[1]["messages"]
    assert "second" in json.dumps(only)
    assert "first" not in json.dumps(bodies[1]["messages"])
    # The first run ended as any run does: its result recorded, resumable.
    runs = runs_root(workspace)
    assert read_state(runs / first)["result"]["result"] == "one"
    assert read_state(runs / second)["result"]["result"] == "two"


async def test_a_clear_before_any_prompt_is_no_error(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, lead=[{"expect": "hello", "text": "hi"}])
    stdin = [user("/clear"), user("hello")]
    code, out, err = await host(stdin, *HOST, cwd=workspace, home=home, url=server.url)
    assert code == 0, err
    assert kinds(out) == [
        "system/init", "conversation_reset", "system/init", "result", "assistant", "result"
    ]  # fmt: skip
    assert "no user message" not in err
    assert [o["result"] for o in out if o["type"] == "result"] == ["", "hi"]


async def test_a_lines_origin_comes_back_on_its_result_and_only_there(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, lead=[{"text": "one"}, {"text": "two"}, {"text": "three"}])
    stdin = [user("a", origin={"kind": "human"}), user("b"), user("c", origin="odd")]
    code, out, err = await host(stdin, *HOST, cwd=workspace, home=home, url=server.url)
    assert code == 0, err
    results = [o for o in out if o["type"] == "result"]
    assert results[0]["origin"] == {"kind": "human"}
    assert "origin" not in results[1]
    assert "origin" not in results[2]  # not an object: no stamp of the host's


async def test_an_api_error_ends_as_claude_code_ends_it(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    error = {"status": 404, "type": "not_found_error", "message": "model: nope"}
    server = await serve(nursery, lead=[{"error": error}])
    code, out, err = await host(
        [user("hi", origin={"kind": "human"})], *HOST, cwd=workspace, home=home, url=server.url
    )
    assert code == 1, err
    said, result = out[-2:]
    assert said["type"] == "assistant"
    assert (said["is_api_error_message"], said["error"]) == (True, "model_not_found")
    assert "model: nope" in said["message"]["content"][0]["text"]
    assert (result["subtype"], result["is_error"], result["terminal_reason"]) == (
        "success", True, "api_error"
    )  # fmt: skip
    assert (result["api_error_status"], result["api_error_type"]) == (404, "not_found_error")
    assert result["result"] == said["message"]["content"][0]["text"]
    assert result["origin"] == {"kind": "human"}


async def test_json_output_is_the_result_alone(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    error = {"status": 401, "type": "authentication_error", "message": "bad key"}
    server = await serve(nursery, lead=[{"error": error}])
    code, out, err = await host(
        [], "run", "-p", "--output-format", "json", "go", cwd=workspace, home=home,
        url=server.url,
    )  # fmt: skip
    assert code == 1, err
    [result] = out
    assert (result["type"], result["subtype"], result["terminal_reason"]) == (
        "result", "success", "api_error"
    )  # fmt: skip
    assert (result["api_error_status"], result["api_error_type"]) == (401, "authentication_error")


def agent_turns(background: bool = False) -> dict[str, list[dict[str, Any]]]:
    call = {"name": "Agent", "input": {**GREET, "run_in_background": background}}
    return {
        "lead": [{"tool_uses": [call]}, {"text": "DONE"}],
        "subagent": [
            {"text": "Looking first.", "tool_uses": [{"name": "Glob", "input": {"pattern": "*"}}]},
            {"text": "Hi there!"},
        ],
    }


def subagent_lines(out: list[dict[str, Any]]) -> list[list[str]]:
    """The block types of each assistant line a subagent wrote."""
    return [
        [b["type"] for b in o["message"]["content"]]
        for o in out
        if o["type"] == "assistant" and o["parent_tool_use_id"] is not None
    ]


async def test_a_subagents_text_stays_off_the_stream_unless_the_host_asks(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, **agent_turns())
    flags = (*HOST, "--permission-mode", "bypassPermissions")
    code, out, err = await host(
        [initialize(), user("go")], *flags, cwd=workspace, home=home, url=server.url
    )
    assert code == 0, err
    assert subagent_lines(out) == [["tool_use"]]  # its Glob call, without its words
    notification = next(o for o in out if o.get("subtype") == "task_notification")
    assert notification["summary"] == "Hi there!"

    server = await serve(nursery, **agent_turns())
    code, out, err = await host(
        [initialize(forwardSubagentText=True), user("go")], *flags, cwd=workspace, home=home,
        url=server.url,
    )  # fmt: skip
    assert code == 0, err
    assert subagent_lines(out) == [["text", "tool_use"], ["text"]]


async def test_the_agent_tool_takes_run_in_background(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, **agent_turns(background=True))
    flags = (*HOST, "--permission-mode", "bypassPermissions")
    code, out, err = await host([user("go")], *flags, cwd=workspace, home=home, url=server.url)
    assert code == 0, err
    [answer] = [
        b
        for o in out
        if o["type"] == "user" and o["parent_tool_use_id"] is None
        for b in o["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert answer["is_error"]
    assert "Background subagents are not available yet" in answer["content"]
    assert out[-1]["result"] == "DONE"


async def test_a_clear_in_a_resumed_run_opens_a_new_run_not_the_resumed_one(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, lead=[{"text": "one"}, {"expect": "second", "text": "two"}])
    code, out, err = await host([user("first")], *HOST, cwd=workspace, home=home, url=server.url)
    assert code == 0, err
    resumed = out[0]["session_id"]
    code, out, err = await host(
        [user("/clear"), user("second")], *HOST, "--resume", resumed, cwd=workspace, home=home,
        url=server.url,
    )  # fmt: skip
    assert code == 0, err
    assert out[0]["session_id"] == resumed
    assert kinds(out)[1:3] == ["conversation_reset", "system/init"]
    assert {o["session_id"] for o in out[2:]} == {out[2]["session_id"]} != {resumed}
    assert len(list(runs_root(workspace).iterdir())) == 2
