"""Running handlers: stdin JSON, cwd and env, parallel, timeouts kill the group, http."""

from __future__ import annotations

import functools
import json
import os
from typing import TYPE_CHECKING, Any

import trio

from coterie.events import EventLog
from coterie.hooks import Actor, HookConfig, Hooks
from coterie.hooks.config import Handler
from coterie.hooks.runner import run_handler

if TYPE_CHECKING:
    from pathlib import Path


def hooks_of(tmp_path: Path, config: dict[str, Any], events: EventLog | None = None) -> Hooks:
    return Hooks(
        HookConfig.parse(config, tmp_path / "settings.json"),
        session_id="run-1",
        cwd=tmp_path,
        permission_mode="default",
        events=events,
    )


def group(event: str, *commands: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    handlers = [{"type": "command", "command": c, **extra} for c in commands]
    entry: dict[str, Any] = {"hooks": handlers}
    if matcher is not None:
        entry["matcher"] = matcher
    return {event: [entry]}


async def test_the_input_arrives_on_stdin_in_the_workspace_with_the_project_dir(
    tmp_path: Path,
) -> None:
    script = 'cat > in.json; echo "$CLAUDE_PROJECT_DIR" > dir'
    hooks = hooks_of(tmp_path, group("PreToolUse", script))
    agent = hooks.for_agent(Actor("bob-sub-1", "subagent", parent="bob"), tmp_path / "t.log")
    verdict = await agent.fire("PreToolUse", tool_name="Bash", tool_input={"command": "ls"})
    assert not verdict.blocked
    data = json.loads((tmp_path / "in.json").read_text())
    assert data == {
        "session_id": "run-1",
        "transcript_path": str(tmp_path / "t.jsonl"),
        "cwd": str(tmp_path),
        "permission_mode": "default",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "agent": {"name": "bob-sub-1", "role": "subagent", "parent": "bob"},
    }
    assert (tmp_path / "dir").read_text().strip() == str(tmp_path)


async def test_the_handlers_of_one_event_run_in_parallel(tmp_path: Path) -> None:
    """Each waits for the other's file: run one after the other, both would time out."""
    a = "touch a; while [ ! -e b ]; do sleep 0.01; done"
    b = "touch b; while [ ! -e a ]; do sleep 0.01; done"
    hooks = hooks_of(tmp_path, group("Stop", a, b, timeout=10))
    verdict = await hooks.fire("Stop", {})
    assert verdict.notices == ()


async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    handler = Handler("command", "sleep 30 & echo $! > child; wait", timeout=0.5)
    ran = await run_handler(handler, b"{}", cwd=tmp_path, env=dict(os.environ))
    assert (ran.exit_code, ran.error) == (None, "timed out after 0.5s")
    child = int((tmp_path / "child").read_text())
    assert not _alive(child)


async def test_a_cancelled_hook_leaves_nothing_running(tmp_path: Path) -> None:
    handler = Handler("command", "sleep 30 & echo $! > child; wait", timeout=60)
    with trio.move_on_after(0.5):
        await run_handler(handler, b"{}", cwd=tmp_path, env=dict(os.environ))
    child = int((tmp_path / "child").read_text())
    assert not _alive(child)


async def test_a_timed_out_pre_tool_use_blocks_and_is_reported(tmp_path: Path) -> None:
    events = EventLog(tmp_path / "events.jsonl")
    hooks = hooks_of(tmp_path, group("PreToolUse", "sleep 5", timeout=0.2), events)
    verdict = await hooks.fire("PreToolUse", {"tool_name": "Bash"})
    assert verdict.blocked
    assert "could not run (timed out after 0.2s)" in (verdict.reason or "")
    events.close()
    (event,) = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert (event["type"], event["blocked"], event["event"]) == ("hook.failed", True, "PreToolUse")


async def test_only_matching_groups_run(tmp_path: Path) -> None:
    hooks = hooks_of(tmp_path, group("PreToolUse", "echo no >&2; exit 2", matcher="mcp__db__.*"))
    assert (await hooks.fire("PreToolUse", {"tool_name": "mcp__db__query"})).blocked
    assert not (await hooks.fire("PreToolUse", {"tool_name": "Bash"})).blocked


async def test_an_http_handler_posts_the_same_json(tmp_path: Path) -> None:
    seen: list[bytes] = []
    answer = json.dumps({"decision": "block", "reason": "from http"}).encode()

    async def serve(stream: trio.SocketStream) -> None:
        data = b""
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < _length(data):
            data += await stream.receive_some(65536)
        seen.append(data.split(b"\r\n\r\n", 1)[1])
        head = f"HTTP/1.1 200 OK\r\ncontent-length: {len(answer)}\r\nconnection: close\r\n\r\n"
        await stream.send_all(head.encode() + answer)
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        serve_tcp = functools.partial(trio.serve_tcp, host="127.0.0.1")
        (listener,) = await nursery.start(serve_tcp, serve, 0)
        port = listener.socket.getsockname()[1]
        config = {"Stop": [{"hooks": [{"type": "http", "url": f"http://127.0.0.1:{port}/h"}]}]}
        verdict = await hooks_of(tmp_path, config).fire("Stop", {"stop_hook_active": False})
        nursery.cancel_scope.cancel()
    assert (verdict.blocked, verdict.reason) == (True, "from http")
    assert json.loads(seen[0])["hook_event_name"] == "Stop"


def _length(data: bytes) -> int:
    for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return int(line.split(b":", 1)[1])
    return 0


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except FileNotFoundError:
        return False
    return stat[stat.rfind(")") + 2] not in "ZX"
