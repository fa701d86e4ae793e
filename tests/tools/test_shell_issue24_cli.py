"""Issue 24 through the real CLI: hard links (the shell's side of finding 2) and finding 10.

Each test runs ``coterie run -p`` (headless: what would ask is refused) on a
scripted scenario in a temporary workspace with an empty HOME, and looks at
what really happened on disk. Finding 7's spellings run through the CLI in
``test_shell_cli.py`` (the table of ``test_policy_spellings.py``).
"""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from tests.agent.conftest import coterie, home, workspace
from tests.tools.test_shell_cli import bash, run, settings

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]

PLANT = "printf '[core]\\n\\tfsmonitor = \"touch pwned; false\"\\n' >> gc"
#: Each gives ``gc`` a second name of the protected file it links to.
LINKS = [
    "cp -l {src} gc",
    "cp --link {src} gc",
    "cp -al {src} gc",
    "ln {src} gc",
    "ln -f -- {src} gc",
    "link {src} gc",
]
PROTECTED = [".git/config", ".claude/settings.local.json"]


def trust(workspace: Path, home: Path) -> None:
    done = coterie("trust", str(workspace), cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("mode", ["acceptEdits", "bypassPermissions"])
@pytest.mark.parametrize("src", PROTECTED)
def test_finding_2_a_hard_link_to_protected_configuration_is_never_made(
    tmp_path: Path, workspace: Path, home: Path, src: str, mode: str
) -> None:
    """Linking is writing the source: asked in every mode, so refused headless."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".claude").mkdir(exist_ok=True)
    (workspace / ".claude/settings.local.json").write_text("{}\n")
    before = (workspace / src).read_text()
    trust(workspace, home)
    lines = [
        f"{link.format(src=src)}; {PLANT}".replace("gc", f"gc{i}") for i, link in enumerate(LINKS)
    ]
    turns: list[dict[str, Any]] = [
        {"tool_uses": [bash(line) for line in lines]},
        {"tool_uses": [bash(link.format(src=src)) for link in LINKS]},
        {"tool_uses": [bash("git status")]},
        {"text": "done"},
    ]
    result = run(tmp_path, workspace, home, turns, "--permission-mode", mode)
    assert result.returncode == 0, result.stderr
    assert (workspace / src).read_text() == before
    assert (workspace / src).stat().st_nlink == 1
    assert not (workspace / "pwned").exists()


def test_finding_2_allowed_ln_and_echo_do_not_reach_git_config(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """The issue's third form: ``Bash(ln:*)`` and ``Bash(echo:*)`` allowed, default mode."""
    settings(home / ".claude/settings.json", allow=["Bash(ln:*)", "Bash(echo:*)"])
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    before = (workspace / ".git/config").read_text()
    turns: list[dict[str, Any]] = [
        {"tool_uses": [bash("ln .git/config gc")]},
        {"tool_uses": [bash("echo '[core] fsmonitor = \"touch pwned; false\"' >> gc")]},
        {"text": "done"},
    ]
    result = run(tmp_path, workspace, home, turns)
    assert result.returncode == 0, result.stderr
    assert (workspace / ".git/config").read_text() == before
    assert (workspace / ".git/config").stat().st_nlink == 1


def test_finding_10_accept_edits_asks_for_rm_behind_an_assignment_or_a_path(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """As Claude Code: only plain file commands pass; ``$((...))`` is no substitution."""
    for name in ("a", "b", "c", "d"):
        (workspace / name).write_text("keep\n")
    turns: list[dict[str, Any]] = [
        {"tool_uses": [bash("FOO=1 rm a"), bash("/bin/rm b"), bash("env rm c"), bash("rm d")]},
        {"tool_uses": [bash("echo $((40+2))")]},
        {"expect": "42", "text": "done"},
    ]
    result = run(tmp_path, workspace, home, turns, "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    assert [n for n in "abcd" if (workspace / n).exists()] == ["a", "b", "c"]
    assert result.stdout.strip() == "done"


def test_finding_10_a_write_path_allow_rule_allows_nothing(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """``Write(*.md)`` is ignored as Claude Code ignores it; ``Edit(*.md)`` allows."""
    settings(home / ".claude/settings.json", allow=["Write(*.md)", "Edit(docs/**)"])
    write = {"name": "Write", "input": {"file_path": "notes.md", "content": "x"}}
    edit = {"name": "Write", "input": {"file_path": "docs/a.md", "content": "y"}}
    turns: list[dict[str, Any]] = [{"tool_uses": [write, edit]}, {"text": "done"}]
    result = run(tmp_path, workspace, home, turns)
    assert result.returncode == 0, result.stderr
    assert not (workspace / "notes.md").exists()
    assert (workspace / "docs/a.md").read_text() == "y"


def test_finding_10_a_write_path_allow_rule_is_said_once(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    settings(home / ".claude/settings.json", allow=["Write(*.md)", "Write(docs/**)"])
    result = run(tmp_path, workspace, home, [{"text": "done"}])
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("Write(path) allow rules are ignored; use Edit(path)") == 1
    assert json.dumps("Write(docs/**)")[1:-1] in result.stderr


FSMONITOR = '[core]\n\tfsmonitor = "touch {marker}; false"\n'


@pytest.mark.parametrize("command", ["git status", "git diff && git status"])
def test_accept_edits_in_an_untrusted_folder_runs_no_fsmonitor(
    tmp_path: Path, workspace: Path, home: Path, command: str
) -> None:
    """acceptEdits' file commands hold git to what the read-only path holds it to: in an
    untrusted folder whose ``.git/config`` names an fsmonitor, ``git status`` asks
    (refused headless) instead of running the repository's program."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    marker = tmp_path / "pwned"
    with (workspace / ".git/config").open("a") as config:
        config.write(FSMONITOR.format(marker=marker))
    turns: list[dict[str, Any]] = [{"tool_uses": [bash(command)]}, {"text": "done"}]
    result = run(tmp_path, workspace, home, turns, "--permission-mode", "acceptEdits")
    assert result.returncode == 0, result.stderr
    assert not marker.exists()


@pytest.mark.parametrize("command", ["cd sub && git status", "git -C sub status"])
def test_git_in_a_nested_repository_is_judged_by_that_repository(
    tmp_path: Path, workspace: Path, home: Path, command: str
) -> None:
    """In a trusted folder whose repository is inert, ``sub``'s names an fsmonitor: git
    run there (after a ``cd``, or with ``-C``) asks, refused headless."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    subprocess.run(["git", "init", "-q", str(workspace / "sub")], check=True)
    marker = tmp_path / "pwned"
    with (workspace / "sub/.git/config").open("a") as config:
        config.write(FSMONITOR.format(marker=marker))
    trust(workspace, home)
    turns: list[dict[str, Any]] = [{"tool_uses": [bash(command)]}, {"text": "done"}]
    result = run(tmp_path, workspace, home, turns)
    assert result.returncode == 0, result.stderr
    assert not marker.exists()
