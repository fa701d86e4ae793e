"""Issue 11 through the real CLI: shell writes, Read deny rules, spellings, read-only commands.

Each test runs ``coterie run -p`` on a scripted scenario in a temporary
workspace with an empty HOME, and looks at what really happened on disk and
in the output. Allow rules go in the user's settings (they apply whether or
not the workspace is trusted), deny rules in the project's (always applied).
"""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from coterie.tools.permissions import MODES
from tests.agent.conftest import coterie, home, workspace
from tests.tools.test_policy_spellings import SPELLINGS, setup, spelled

if TYPE_CHECKING:
    from pathlib import Path


def settings(path: Path, **permissions: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": permissions}))


def bash(command: str) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command}}


def run(
    tmp_path: Path, workspace: Path, home: Path, turns: list[dict[str, Any]], *args: str
) -> subprocess.CompletedProcess[str]:
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"name": "issue-11", "tracks": {"lead": turns}}))
    return coterie("run", "go", "--scenario", str(scenario), "-p", *args, cwd=workspace, home=home)


def test_finding_2_an_allowed_command_with_a_redirect_writes_nowhere_it_should_not(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """With only ``ls``, ``echo`` and ``git status`` allowed, no redirect escapes or promotes."""
    settings(
        home / ".claude/settings.json", allow=["Bash(ls:*)", "Bash(echo:*)", "Bash(git status)"]
    )
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    config = (workspace / ".git/config").read_text()
    (tmp_path / "outside").mkdir()
    turns: list[dict[str, Any]] = [
        {"tool_uses": [
            bash("echo x > ../outside/f"),
            bash("echo 'touch ~/pwned-at-login' >> ~/.bashrc"),
            bash("""echo '{"permissions":{"allow":["Bash"]}}' > .claude/settings.local.json"""),
            bash("""echo '[core] fsmonitor = "touch pwned-by-git; false"' >> .git/config"""),
        ]},
        {"tool_uses": [bash("git status")]},
        {"text": "done"},
    ]  # fmt: skip
    result = run(tmp_path, workspace, home, turns)
    assert result.returncode == 0, result.stderr
    assert list((tmp_path / "outside").iterdir()) == []
    assert not (home / ".bashrc").exists()
    assert not (workspace / ".claude/settings.local.json").exists()
    assert (workspace / ".git/config").read_text() == config
    assert not (workspace / "pwned-by-git").exists()


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_finding_5_a_read_deny_rule_covers_bash_reads_substitutions_and_writes(
    tmp_path: Path, workspace: Path, home: Path, mode: str
) -> None:
    settings(home / ".claude/settings.json", allow=["Bash"])
    settings(workspace / ".claude/settings.json", deny=["Read(./secrets/**)"])
    (workspace / "secrets").mkdir()
    (workspace / "secrets/k").write_text("TOPSECRET-42\n")
    turns: list[dict[str, Any]] = [
        {"tool_uses": [
            bash("cat secrets/k"),
            bash("echo $(cat secrets/k) > o"),
            bash("grep -r TOPSECRET ."),
            {"name": "Write", "input": {"file_path": "secrets/new", "content": "planted"}},
        ]},
        {"text": "done"},
    ]  # fmt: skip
    result = run(
        tmp_path,
        workspace,
        home,
        turns,
        "--permission-mode",
        mode,
        "--output-format",
        "stream-json",
    )
    assert result.returncode == 0, result.stderr
    assert "TOPSECRET" not in result.stdout.replace("grep -r TOPSECRET", "")
    assert "TOPSECRET" not in ((workspace / "o").read_text() if (workspace / "o").exists() else "")
    assert not (workspace / "secrets/new").exists()


@pytest.mark.parametrize("mode", MODES)
def test_finding_6_no_spelling_of_rm_gets_past_a_deny_rule(
    tmp_path: Path, workspace: Path, home: Path, mode: str
) -> None:
    """All the spellings in one turn, with ``allow Bash`` and ``deny Bash(rm:*)``."""
    settings(home / ".claude/settings.json", allow=["Bash"])
    settings(workspace / ".claude/settings.json", deny=["Bash(rm:*)"])
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    victims = [f"victim{i}" for i in range(len(SPELLINGS))]
    for victim in victims:
        setup(workspace, victim)
    uses = [bash(spelled(s, v)) for s, v in zip(SPELLINGS, victims, strict=True)]
    turns: list[dict[str, Any]] = [{"tool_uses": uses}, {"text": "done"}]
    result = run(tmp_path, workspace, home, turns, "--permission-mode", mode)
    assert result.returncode == 0, result.stderr
    gone = [s for s, v in zip(SPELLINGS, victims, strict=True) if not (workspace / v).exists()]
    assert gone == []


def test_finding_10_read_only_commands_run_without_a_prompt(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """Headless, default mode, no rules: ls, cat, grep, head, wc, find run."""
    (workspace / "a.txt").write_text("alpha-bravo\n")
    turns: list[dict[str, Any]] = [
        {"tool_uses": [bash("ls -la")]},
        {"expect": "a.txt", "tool_uses": [bash("cat a.txt")]},
        {"expect": "alpha-bravo", "tool_uses": [bash("grep -n bravo a.txt | head -1")]},
        {"expect": "1:alpha-bravo", "tool_uses": [bash("find . -name 'a.*' | wc -l")]},
        {"expect": "1", "text": "done"},
    ]
    result = run(tmp_path, workspace, home, turns)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"


def test_finding_10_accept_edits_covers_file_commands_in_the_workspace(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    command = "mkdir d && touch d/f && cp d/f d/g && mv d/g d/h && rm d/f && mkdir e && rmdir e"
    turns: list[dict[str, Any]] = [{"tool_uses": [bash(command)]}, {"text": "done"}]
    result = run(tmp_path, workspace, home, turns, "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    assert (workspace / "d/h").exists()
    assert not (workspace / "d/f").exists()
    assert not (workspace / "e").exists()


def test_finding_10_accept_edits_still_refuses_file_commands_outside(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    (tmp_path / "keep.txt").write_text("keep\n")
    turns: list[dict[str, Any]] = [
        {"tool_uses": [bash("rm ../keep.txt"), bash("touch ../made.txt")]},
        {"text": "done"},
    ]
    result = run(tmp_path, workspace, home, turns, "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "keep.txt").exists()
    assert not (tmp_path / "made.txt").exists()


__all__ = ["home", "workspace"]  # the CLI fixtures, used above
