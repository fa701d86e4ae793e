"""Zed's ACP adapter for Claude Code drives coterie unchanged.

``@agentclientprotocol/claude-agent-acp`` (pinned by ``tests/sdk/acp/``) is the
Agent Client Protocol agent Zed and other editors run for Claude: it speaks
JSON-RPC to the editor on its stdin and stdout, and drives the CLI through the
TypeScript Agent SDK. Pointed at coterie by ``CLAUDE_CODE_EXECUTABLE``, with
``coterie mock-server`` as the model, this test is the editor: it opens a
session, switches it to the default mode, sends a prompt, answers the
adapter's permission question, and reads the session's updates. No key, no
network once the package is installed (:mod:`tests.sdk.npmpins`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from queue import Empty, Queue
from typing import IO, TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import REPO, clean_env
from tests.sdk import npmpins

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.slow

COTERIE = str(Path(sys.executable).parent / "coterie")
SPEC = Path(__file__).parent / "acp"
PACKAGE = "@agentclientprotocol/claude-agent-acp"
WAIT = 60.0


@pytest.fixture(scope="module")
def adapter() -> Path:
    """The adapter's entry script."""
    folder = npmpins.install(npmpins.npm_or_skip(), SPEC, REPO / ".cache" / "acp-adapter")
    return folder / "node_modules" / PACKAGE / "dist" / "index.js"


class Editor:
    """The editor's side of ACP: requests out, the adapter's lines in, its
    permission questions answered (the first "allow" option, or a rejection)."""

    def __init__(self, adapter: Path, workspace: Path, env: dict[str, str], allow: bool) -> None:
        self.proc = subprocess.Popen(
            ["node", str(adapter)], cwd=workspace, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.allow = allow
        self.lines: Queue[dict[str, Any]] = Queue()
        self.updates: list[dict[str, Any]] = []
        self.asked: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        assert self.proc.stdout is not None
        assert self.proc.stderr is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), daemon=True).start()
        threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True).start()
        self._id = 0

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.put(json.loads(line))

    def _drain(self, stream: IO[str]) -> None:
        self.stderr.extend(stream)

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a request; its response, answering what the adapter asks meanwhile."""
        self._id += 1
        self._send({"id": self._id, "method": method, "params": params})
        while True:
            try:
                message = self.lines.get(timeout=WAIT)
            except Empty:
                pytest.fail(f"no answer to {method}; stderr:\n{''.join(self.stderr)[-3000:]}")
            if message.get("id") == self._id and "method" not in message:
                assert "error" not in message, (message, "".join(self.stderr)[-3000:])
                result: dict[str, Any] = message["result"]
                return result
            if message.get("method") == "session/request_permission":
                self.asked.append(message["params"])
                options = message["params"]["options"]
                chosen = next(o for o in options if o["kind"].startswith(
                    "allow" if self.allow else "reject"))  # fmt: skip
                outcome = {"outcome": "selected", "optionId": chosen["optionId"]}
                self._send({"id": message["id"], "result": {"outcome": outcome}})
            elif message.get("method") == "session/update":
                self.updates.append(message["params"]["update"])

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        finally:
            self.proc.kill()
            self.proc.wait()
            for stream in (self.proc.stdout, self.proc.stderr):
                if stream is not None:
                    stream.close()


@pytest.fixture
def editor(
    adapter: Path, tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> Iterator[Callable[[bool], Editor]]:
    opened: list[Editor] = []

    def open_editor(allow: bool) -> Editor:
        write = {"name": "Write", "input": {"file_path": "hello.txt", "content": "hi from acp\n"}}
        track = [{"expect": "please write", "tool_uses": [write]}, {"text": "wrote hello.txt"}]
        scenario = tmp_path / "scenario.json"
        scenario.write_text(json.dumps({"name": "acp", "tracks": {"lead": track}}))
        env = clean_env(
            HOME=str(home), ANTHROPIC_BASE_URL=mock_server(scenario), ANTHROPIC_API_KEY="k",
            CLAUDE_CODE_EXECUTABLE=COTERIE,
        )  # fmt: skip
        opened.append(Editor(adapter, workspace, env, allow))
        return opened[-1]

    yield open_editor
    for each in opened:
        each.close()


@pytest.mark.parametrize("allow", [True, False])
def test_an_acp_editor_runs_a_prompt_with_a_permission_question(
    editor: Callable[[bool], Editor], workspace: Path, allow: bool
) -> None:
    acp = editor(allow)
    hello = acp.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert hello["protocolVersion"] == 1
    session = acp.call("session/new", {"cwd": str(workspace), "mcpServers": []})
    (model,) = [o for o in session["configOptions"] if o["id"] == "model"]
    assert "sonnet" in {m["value"] for m in model["options"]}  # coterie's initialize answer
    acp.call("session/set_mode", {"sessionId": session["sessionId"], "modeId": "default"})
    done = acp.call(
        "session/prompt",
        {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "please write"}]},
    )
    assert done["stopReason"] == "end_turn"
    [question] = acp.asked
    assert question["toolCall"]["toolCallId"].startswith("toolu_")
    assert (workspace / "hello.txt").exists() is allow
    text = "".join(
        u["content"]["text"] for u in acp.updates if u["sessionUpdate"] == "agent_message_chunk"
    )
    assert text == "wrote hello.txt"
    statuses = [u.get("status") for u in acp.updates if u["sessionUpdate"] == "tool_call_update"]
    assert statuses[-1] == ("completed" if allow else "failed")
