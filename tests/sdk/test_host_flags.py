"""Claude Code's flags for a program driving the run over stdin: ``--replay-user-messages``
(each user line written back, marked ``isReplay``) and
``--allow-dangerously-skip-permissions`` (without it, ``set_permission_mode`` to
``bypassPermissions`` is refused with Claude Code's ``bypass_not_launched``)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import clean_env

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

UUID = "11111111-1111-4111-8111-111111111111"
PROMPT = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "hi"}]},
          "parent_tool_use_id": None, "session_id": "", "uuid": UUID}  # fmt: skip
INIT = {"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize"}}
BYPASS = {"type": "control_request", "request_id": "r2",
          "request": {"subtype": "set_permission_mode", "mode": "bypassPermissions"}}  # fmt: skip
STREAM = ("-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")


def host(
    workspace: Path, home: Path, url: str, lines: list[dict[str, Any]], *flags: str
) -> list[dict[str, Any]]:
    """Run coterie as a host would, with *lines* on its stdin; its output lines."""
    done = subprocess.run(
        [sys.executable, "-m", "coterie", *STREAM, *flags],
        input="".join(json.dumps(line) + "\n" for line in lines),
        cwd=workspace,
        env={**clean_env(HOME=str(home)), "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


@pytest.fixture
def url(tmp_path: Path, mock_server: Callable[[Path], str]) -> str:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"tracks": {"lead": [{"text": "hello"}] * 4}}))
    return mock_server(path)


def test_replayed_user_lines_come_back_after_init_with_their_uuid(
    workspace: Path, home: Path, url: str
) -> None:
    out = host(workspace, home, url, [PROMPT], "--replay-user-messages")
    kinds = [(line["type"], line.get("subtype")) for line in out]
    assert kinds[:3] == [("system", "init"), ("user", None), ("assistant", None)], kinds
    replayed = out[1]
    assert replayed["isReplay"] is True
    assert replayed["uuid"] == UUID
    assert replayed["message"] == PROMPT["message"]
    assert replayed["session_id"] == out[0]["session_id"]
    assert replayed["timestamp"].endswith("Z")
    # Without the flag, nothing is written back.
    plain = host(workspace, home, url, [PROMPT])
    assert not [line for line in plain if line["type"] == "user" and line.get("isReplay")]


def test_bypass_later_needs_the_launch_flag(workspace: Path, home: Path, url: str) -> None:
    refused = host(workspace, home, url, [INIT, BYPASS, PROMPT])
    (answer,) = [line["response"] for line in refused if line["type"] == "control_response"
                 and line["response"]["request_id"] == "r2"]  # fmt: skip
    assert answer["subtype"] == "error"
    assert answer["error_code"] == "bypass_not_launched"
    allowed = host(workspace, home, url, [INIT, BYPASS, PROMPT],
                   "--allow-dangerously-skip-permissions")  # fmt: skip
    (answer,) = [line["response"] for line in allowed if line["type"] == "control_response"
                 and line["response"]["request_id"] == "r2"]  # fmt: skip
    assert answer == {"subtype": "success", "request_id": "r2", "response":
                      {"mode": "bypassPermissions"}}  # fmt: skip
    status = [line for line in allowed if line.get("subtype") == "status"]
    assert status[-1]["permissionMode"] == "bypassPermissions"
