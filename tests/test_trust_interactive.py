"""The interactive first run asks once whether to trust the folder; the answer is kept."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import clean_env, coterie, home, workspace
from tests.agent.test_interactive import read_until
from tests.agent.test_resume_cli import write_scenario

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "workspace"]  # the fixtures, used by name below

QUESTION = "trust this folder? [y/N]"
TOUCH = {"tool_uses": [{"name": "Bash", "input": {"command": "touch made-by-bash.txt"}}]}


def at_terminal(workspace: Path, home: Path, scenario: Path, answers: dict[str, str]) -> str:
    """``coterie run`` at a terminal on *scenario* (its lead ends saying "Over."); each
    key seen on screen is answered with its value, in order. Returns the whole screen
    once the run ends."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "coterie", "run", "touch it", "--scenario", str(scenario)],
        cwd=workspace,
        env=clean_env(HOME=str(home), COLUMNS="300"),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    screen = ""
    try:
        for needle, answer in answers.items():
            screen += read_until(master, needle)
            os.write(master, f"{answer}\n".encode())
        screen += read_until(master, "Over.")
        assert proc.wait(timeout=60) == 0, screen
    finally:
        proc.kill()
        proc.wait()
        os.close(master)
    return screen


def interactive_run(workspace: Path, home: Path, answers: dict[str, str]) -> str:
    """A run that touches a file with Bash, at a terminal (see :func:`at_terminal`)."""
    scenario = write_scenario(workspace.parent / "s.json", {"lead": [TOUCH, {"text": "Over."}]})
    return at_terminal(workspace, home, scenario, answers)


def test_yes_trusts_the_folder_for_this_run_and_the_next(workspace: Path, home: Path) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch *)"]}})
    )
    screen = interactive_run(workspace, home, {QUESTION: "y"})
    assert "Do you trust the files in" in screen
    assert "Do you want to proceed?" not in screen  # the project's allow rule applied at once
    assert (workspace / "made-by-bash.txt").exists()
    listed = coterie("trust", "--list", "--json", cwd=workspace, home=home).stdout
    assert {"folder": str(workspace.resolve()), "trusted": True}.items() <= json.loads(
        listed.splitlines()[-1]
    ).items()
    (workspace / "made-by-bash.txt").unlink()
    again = interactive_run(workspace, home, {})
    assert QUESTION not in again
    assert (workspace / "made-by-bash.txt").exists()


@pytest.mark.parametrize("answer", ["n", ""])
def test_no_keeps_the_folder_untrusted_and_is_not_asked_again(
    workspace: Path, home: Path, answer: str
) -> None:
    (workspace / ".claude").mkdir()
    (workspace / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(touch *)"]}})
    )
    screen = interactive_run(workspace, home, {QUESTION: answer, "choose 1-3": "\x1b"})
    assert "is not trusted" in screen  # the one-line notice
    assert not (workspace / "made-by-bash.txt").exists()
    again = interactive_run(workspace, home, {"choose 1-3": "\x1b"})
    assert QUESTION not in again
