"""The official TypeScript Agent SDK drives coterie unchanged, through
``pathToClaudeCodeExecutable``.

``tests/sdk/ts/can_use_tool.mjs`` runs one ``query()`` with a ``canUseTool``
callback; the SDK spawns the venv's ``coterie`` itself (a path that does not
end in ``.js``/``.mjs`` is run directly, not through node), whose model is
``coterie mock-server`` playing a scenario: no key, no network.

The SDK is pinned by ``tests/sdk/ts/package-lock.json`` and installed once per
machine into the project's ``.cache/ts-sdk/`` (:mod:`tests.sdk.npmpins`), so
every run after the first is offline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import REPO, clean_env
from tests.sdk import npmpins

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.slow

#: The console script of the environment running the tests.
COTERIE = str(Path(sys.executable).parent / "coterie")
TS = Path(__file__).parent / "ts"
CACHE = REPO / ".cache" / "ts-sdk"
PACKAGE = "@anthropic-ai/claude-agent-sdk"


def install(npm: str, cache: Path = CACHE) -> Path:
    """The folder (holding node_modules) of the SDK pinned by tests/sdk/ts."""
    return npmpins.install(npm, TS, cache)


@pytest.fixture(scope="module")
def ts_sdk() -> Path:
    return install(npmpins.npm_or_skip())


def run_query(
    sdk: Path, workspace: Path, env: dict[str, str], decision: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The messages the SDK yielded and what its canUseTool callback received."""
    done = subprocess.run(
        ["node", str(TS / "can_use_tool.mjs"), str(sdk), COTERIE, str(workspace), "go", decision],
        env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    *messages, last = [json.loads(line) for line in done.stdout.splitlines()]
    return [m["message"] for m in messages], last["asked"]


@pytest.mark.parametrize("allow", [True, False])
def test_query_with_can_use_tool_from_the_typescript_sdk(
    ts_sdk: Path,
    tmp_path: Path,
    workspace: Path,
    home: Path,
    mock_server: Callable[[Path], str],
    allow: bool,
) -> None:
    """Default mode asks about `touch`: the TS SDK's callback is the person asked."""
    scenario = tmp_path / "scenario.json"
    touch = {"tool_uses": [{"name": "Bash", "input": {"command": "touch made.txt"}}]}
    track = [{"expect": "go", **touch}, {"text": "done"}]
    scenario.write_text(json.dumps({"name": "ts-sdk", "tracks": {"lead": track}}))
    url = mock_server(scenario)
    env = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="test-key")

    messages, asked = run_query(ts_sdk, workspace, env, "allow" if allow else "deny")

    assert [(m["type"], m.get("subtype")) for m in messages] == [
        ("system", "init"), ("assistant", None), ("user", None), ("assistant", None),
        ("result", "success"),
    ], messages  # fmt: skip
    init, call, tool_result, answer, result = messages
    [tool_use] = call["message"]["content"]
    assert (tool_use["type"], tool_use["name"]) == ("tool_use", "Bash")
    assert call["message"]["model"]
    [block] = tool_result["message"]["content"]
    assert block["tool_use_id"] == tool_use["id"]
    assert block["is_error"] is not allow
    if not allow:
        assert "not today" in str(block["content"])
    assert answer["message"]["content"] == [{"type": "text", "text": "done"}]
    assert (result["is_error"], result["result"]) == (False, "done")
    assert result["session_id"] == init["session_id"]

    [question] = asked
    assert (question["toolName"], question["input"]) == ("Bash", {"command": "touch made.txt"})
    assert question["toolUseID"] == tool_use["id"]
    rules = [r for s in question["suggestions"] for r in s.get("rules", [])]
    assert rules == [{"toolName": "Bash", "ruleContent": "touch:*"}]
    assert (workspace / "made.txt").exists() is allow


def test_the_sdk_is_installed_once_per_machine(ts_sdk: Path) -> None:
    """Once installed, the same lockfile never runs npm again (offline from then on)."""
    assert install("/nonexistent/npm", ts_sdk.parent) == ts_sdk
    version = json.loads((ts_sdk / "node_modules" / PACKAGE / "package.json").read_text())
    pinned = json.loads((TS / "package.json").read_text())["dependencies"][PACKAGE]
    assert version["version"] == pinned
