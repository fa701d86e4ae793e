"""Finding 9 through the real CLI: with ``sandbox.enabled``, an allowed command cannot
read ``~/.ssh`` nor write outside the workspace, and auto-allowed commands need no prompt.

Measured before: an allowed ``cat ~/.ssh/id_rsa`` returned the key and a
``touch`` outside the workspace wrote there. Needs a working bwrap (CI
installs it; under ``CI=true`` a missing one fails these tests).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from coterie.tools import probe_sandbox
from tests.agent.conftest import coterie

if TYPE_CHECKING:
    from collections.abc import Iterator

WHY_NOT = probe_sandbox()
if WHY_NOT is not None:
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI must run the sandbox tests: {WHY_NOT}")
    pytest.skip(WHY_NOT, allow_module_level=True)

pytestmark = pytest.mark.slow


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A user's home with an SSH key and user settings that turn the sandbox on."""
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (h / ".claude").mkdir()
    return h


@pytest.fixture
def elsewhere() -> Iterator[Path]:
    """Outside the workspace and outside /tmp (the sandbox has a /tmp of its own)."""
    path = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="coterie-sandbox-cli-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def settings(home: Path, sandbox: dict[str, Any], allow: list[str] | None = None) -> None:
    raw = {"sandbox": sandbox, "permissions": {"allow": allow or []}}
    (home / ".claude" / "settings.json").write_text(json.dumps(raw))


def run_bash(command: str, workspace: Path, home: Path, *flags: str) -> list[dict[str, Any]]:
    """Run one scripted Bash call headless; the tool results it produced."""
    call = {"tool_uses": [{"name": "Bash", "input": {"command": command}}]}
    scenario = workspace.parent / "scenario.json"
    scenario.write_text(json.dumps({"name": "s", "tracks": {"lead": [call, {"text": "done"}]}}))
    done = coterie(
        "run", "-p", "--output-format", "stream-json", *flags, "--scenario", str(scenario),
        "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [
        block
        for line in done.stdout.splitlines()
        for block in (json.loads(line).get("message") or {}).get("content") or []
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]


def text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def test_an_allowed_command_cannot_read_ssh_keys_or_write_outside(
    workspace: Path, home: Path, elsewhere: Path
) -> None:
    settings(home, {"enabled": True}, allow=["Bash"])
    # Inside a program, where no shell parser can see the paths: only the OS stops this.
    program = (
        f"import pathlib; print(pathlib.Path('{home}/.ssh/id_rsa').read_text())\n"
        f"pathlib.Path('{elsewhere}/planted').touch()"
    )
    command = f'python3 -c "{program}"; touch inside; echo end'
    (result,) = run_bash(command, workspace, home)
    assert "end" in text(result)
    assert "PRIVATE KEY" not in text(result)
    assert not (elsewhere / "planted").exists()
    assert (workspace / "inside").exists()


def test_sandboxed_commands_are_auto_allowed_and_still_confined(
    workspace: Path, home: Path, elsewhere: Path
) -> None:
    """autoAllowBashIfSandboxed (the default): no allow rule, no prompt, yet no escape."""
    settings(home, {"enabled": True})
    program = f"print(1 + 1); open('{elsewhere}/planted', 'w')"
    command = f'python3 -c "{program}"; touch inside'

    (result,) = run_bash(command, workspace, home)
    assert "2" in text(result)
    assert not (elsewhere / "planted").exists()
    assert (workspace / "inside").exists()


def test_without_auto_allow_a_headless_run_still_asks(workspace: Path, home: Path) -> None:
    """autoAllowBashIfSandboxed: false keeps the usual permission flow (-p: denied)."""
    settings(home, {"enabled": True, "autoAllowBashIfSandboxed": False})
    (result,) = run_bash("python3 -c 'print(1 + 1)'", workspace, home)
    assert result["is_error"]


def test_issue_24_nested_configuration_is_read_only_to_a_program(
    workspace: Path, home: Path
) -> None:
    """Findings 3 and 4: a program (out of coterie's sight, so only the sandbox stands in
    its way) could write ``sub/.claude/settings.json`` and ``.mcp.json``; not any more."""
    settings(home, {"enabled": True}, allow=["Bash"])
    (workspace / "sub" / ".claude").mkdir(parents=True)
    (workspace / "sub" / ".claude" / "settings.json").write_text("{}\n")
    (workspace / ".mcp.json").write_text("{}\n")
    program = (
        "import sys\n"
        "for p in ('sub/.claude/settings.json', '.mcp.json', 'sub/.claude/skills'):\n"
        "    try:\n"
        "        open(p, 'w').write('planted')\n"
        "    except OSError as e:\n"
        "        print('refused', p, e.strerror)\n"
    )
    (workspace / "plant.py").write_text(program)
    [result] = run_bash("python3 plant.py", workspace, home)
    assert text(result).count("Read-only file system") == 3, text(result)
    assert (workspace / "sub" / ".claude" / "settings.json").read_text() == "{}\n"
    assert (workspace / ".mcp.json").read_text() == "{}\n"
    assert not (workspace / "sub" / ".claude" / "skills").exists()
